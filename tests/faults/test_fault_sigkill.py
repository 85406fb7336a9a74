"""SIGKILL of the real daemon under load, at random moments, over and over.

docs/faults.md, "The daemon killed with SIGKILL".

``tests/journal/test_journal_crash.py`` kills a process that only writes the journal. This test
kills the whole daemon (``python -m controller run --config ...``) while two tables play on it over
the reference serial protocol (docs/architecture.md), and restarts it, again and again:

* Each table's devices (:class:`drivers.simulator_links.SerialTableLink`) are on the master end
  of a pty that stays open in this process across every restart; the daemon opens the slave
  path through pyserial each time it starts, as it would ``/dev/ttyUSB0``. A device counts an
  event as acknowledged only when the host answered ``ACK``, which it does after the journal
  commit (docs/architecture.md, "One event's way through"); it writes a frame again every
  ``RESEND_AFTER_S`` until then, so the devices keep resending through every outage.
* Each cycle starts the daemon, lets the tables play, and SIGKILLs it 100-800 ms after it
  said it is serving (some cycles kill it during start-up instead). After every kill, before
  the next start, the file must hold every event acknowledged so far, each exactly once, and
  ``verify`` must pass (hash chain, replay, materialized state).
* At the end a last daemon plays on undisturbed until both tables have finished more rounds,
  shows every table online and the meter on ``/api/state``, and stops cleanly. Then: the
  ``journal.event_id`` column is UNIQUE in the schema; every acknowledged event is there once,
  applied; no device row is one the devices did not send; ``verify`` passes, and the meter of
  its clean replay is the seed plus 28% of every locked progressive wager the devices had
  acknowledged.

Every wait is bounded; the whole test's time is printed (-s), never asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sqlite3
import sys
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.runtime.floor import (
    CONTRIBUTION_CENTS,
    DEVICE_KINDS,
    POOL,
    SEED_CENTS,
    approved_site,
    free_port,
    get_json,
    journal_rows,
    keep_playing,
    locked_progressive_wagers,
    simulated,
    within,
    write_config,
)

from controller.ledger_journal.sqlite import verify
from drivers.simulator_links import PtyPair, SerialTableLink

if TYPE_CHECKING:
    from collections.abc import Iterable

    from controller.events import DeviceInput
    from drivers.simulator import SimulatedTable

pytestmark = pytest.mark.fault


ROOT = Path(__file__).resolve().parents[2]
KILLS_UNDER_LOAD = 20
"""Kills 100-800 ms after the daemon said it is serving, with the tables playing."""
KILLS_AT_START = 4
"""Kills during start-up (before or around the "serving" line), among the others."""
KILL_AFTER_S = (0.1, 0.8)
KILL_AT_START_S = (0.02, 0.35)
TABLES = ("t1", "t2")
PARENT_SEED = 7_2024


@dataclass
class Devices:
    """A table's devices on its line: keeps every event the host acknowledged, in order."""

    link: SerialTableLink
    acked: list[DeviceInput] = field(default_factory=list)

    async def send(self, event: DeviceInput) -> None:
        """Write the frame until the host ACKs it (after its journal commit)."""
        await self.link.send(event)
        self.acked.append(event)

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """One heartbeat, unanswered while the daemon is down."""
        await self.link.heartbeat(table_id, device, last)

    def ids(self) -> list[str]:
        """The acknowledged event ids, in order."""
        return [event.event_id for event in self.acked]

    def locked_progressive_wagers(self) -> int:
        """Progressive chips on the spots at each acknowledged LOCK (each becomes a wager)."""
        return locked_progressive_wagers(self.acked)


class Daemon:
    """``python -m controller run --config ...`` as a child process, its log in a file."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config = config
        self.log = log
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Start it (returns at once)."""
        with self.log.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "controller", "run", "--config", str(self.config),
                stdout=asyncio.subprocess.PIPE, stderr=log, cwd=ROOT,
            )  # fmt: skip

    async def serving(self) -> None:
        """Wait for the line it prints once everything has started."""
        assert self.process is not None
        assert self.process.stdout is not None
        line = await within(self.process.stdout.readline(), "the daemon to start")
        assert b"meter display" in line, f"the daemon did not start:\n{self.tail()}"

    async def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or closed."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        code = await within(self.process.wait(), "the killed daemon to go")
        assert code == -signal.SIGKILL, f"it exited by itself ({code}):\n{self.tail()}"

    async def terminate(self) -> int:
        """SIGTERM (a clean stop); its exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return await within(self.process.wait(), "the daemon to stop")

    def tail(self) -> str:
        """The end of its log, for failure messages."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])


def journal_counts(path: Path) -> Counter[str]:
    """How many rows each event id has, read from the file as it is (read-only)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as database:
        return Counter(row[0] for row in database.execute("SELECT event_id FROM journal"))


def event_id_is_unique(path: Path) -> bool:
    """Whether the schema itself forbids a second row with the same event id."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as database:
        for _seq, name, unique, *_ in database.execute("PRAGMA index_list(journal)"):
            columns = [row[2] for row in database.execute(f"PRAGMA index_info('{name}')")]
            if unique and columns == ["event_id"]:
                return True
    return False


def check_after_kill(path: Path, acked: Iterable[str], cycle: int) -> Counter[str]:
    """Nothing acknowledged lost, nothing doubled, the chain and the replay intact."""
    counts = journal_counts(path)
    doubled = sorted(event_id for event_id, n in counts.items() if n > 1)
    assert doubled == [], f"cycle {cycle}: journaled twice: {doubled[:5]}"
    lost = sorted(set(acked) - counts.keys())
    assert lost == [], f"cycle {cycle}: acknowledged but not in the journal: {lost[:5]}"
    report = verify(path)
    assert report.ok, f"cycle {cycle}: {report.problems}"
    return counts


@dataclass
class Rig:
    """The tables playing on their lines, the daemon, and what the kills did."""

    journal: Path
    daemon: Daemon
    devices: dict[str, Devices]
    tables: list[SimulatedTable]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    play: list[asyncio.Task[None]] = field(default_factory=list)
    progress: list[int] = field(default_factory=list)
    """Events acknowledged in each cycle killed under load."""
    committed_not_acked: int = 0
    """Kills that fell between a commit and the device reading its ACK."""

    def acked(self) -> list[str]:
        """Every event id the devices had acknowledged, so far."""
        return [event_id for devices in self.devices.values() for event_id in devices.ids()]

    async def kill_cycles(self, rng: random.Random) -> None:
        """Start, play, SIGKILL, check the file: KILLS_UNDER_LOAD + KILLS_AT_START times."""
        cycles = KILLS_UNDER_LOAD + KILLS_AT_START
        at_start = set(rng.sample(range(1, cycles), KILLS_AT_START))
        for cycle in range(cycles):
            before = len(self.acked())
            await self.daemon.start()
            if cycle in at_start:
                await asyncio.sleep(rng.uniform(*KILL_AT_START_S))
            else:
                await self.daemon.serving()
                await asyncio.sleep(rng.uniform(*KILL_AFTER_S))
            await self.daemon.kill()
            assert not any(task.done() for task in self.play), self.daemon.tail()
            await asyncio.sleep(0.02)  # let an ACK already on the line be read
            counts = check_after_kill(self.journal, self.acked(), cycle)
            acked = set(self.acked())
            journaled = {event_id for event_id in counts if event_id.split("/", 1)[0] in TABLES}
            # Committed, its ACK lost in the kill: the devices resend it to the next daemon.
            self.committed_not_acked += bool(journaled - acked)
            if cycle not in at_start:
                self.progress.append(len(acked) - before)

    async def last_run(self, port: int) -> Any:
        """A daemon left alone: two more rounds per table, then /api/state; play stops."""
        await self.daemon.start()
        await self.daemon.serving()
        goal = [table.rounds_played + 2 for table in self.tables]

        async def rounds_done() -> None:
            while any(t.rounds_played < n for t, n in zip(self.tables, goal, strict=True)):
                await asyncio.sleep(0.05)

        await within(rounds_done(), "two more rounds on each table after the kills")
        self.stop.set()
        await within(asyncio.gather(*self.play), "the rounds in play to finish")
        return await get_json(f"http://127.0.0.1:{port}/api/state")

    async def close(self) -> None:
        """Stop play; stop a daemon still running (SIGTERM: it must exit 0)."""
        self.stop.set()
        for task in self.play:
            task.cancel()
        await asyncio.gather(*self.play, return_exceptions=True)
        process = self.daemon.process
        if process is not None and process.returncode is None:
            assert await self.daemon.terminate() == 0, self.daemon.tail()


def check_journal(rig: Rig, state: Any) -> int:
    """The end state: each acknowledged event once, the replay's meter, tables online."""
    assert event_id_is_unique(rig.journal), "journal.event_id must be UNIQUE in the schema"
    rows = journal_rows(rig.journal)
    counts = Counter(row["event_id"] for row in rows)
    assert [event_id for event_id, n in counts.items() if n > 1] == []
    acked = rig.acked()
    assert len(acked) == len(set(acked)), "the simulator reused an event id"
    device_rows = [row for row in rows if row["kind"] in DEVICE_KINDS]
    assert {row["event_id"] for row in device_rows} == set(acked)
    refused = [(r["event_id"], r["reason"]) for r in device_rows if r["outcome"] != "applied"]
    assert refused == []
    assert [json.loads(row["event"]) for row in rows if row["kind"] == "fault"] == []

    # The chain verifies; the meter of a clean replay is the seed plus every locked wager's 28%.
    report = verify(rig.journal)
    assert report.ok, report.problems
    wagers = sum(devices.locked_progressive_wagers() for devices in rig.devices.values())
    expected_meter = SEED_CENTS + CONTRIBUTION_CENTS * wagers
    assert report.pools == {POOL: expected_meter}
    (pool,) = state["pools"]
    assert (pool["meter_cents"], pool["hits"]) == (expected_meter, 0)
    # The tables reopened: online, taking wagers, on the restarted daemon.
    assert state["controller"]["online"] is True
    assert {t["table"]: t["online"] for t in state["tables"]} == dict.fromkeys(TABLES, True)
    return wagers


async def test_faults_sigkill_of_the_daemon_under_serial_load_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    rng = random.Random(PARENT_SEED)  # noqa: S311 - kill timing, not a secret
    port = free_port()
    with PtyPair() as pty1, PtyPair() as pty2:
        ptys = dict(zip(TABLES, (pty1, pty2), strict=True))
        config = write_config(tmp_path, "kill", {t: pty.path for t, pty in ptys.items()}, port)
        approved_site(config)
        async with contextlib.AsyncExitStack() as stack:
            devices = {}
            for table_id, pty in ptys.items():
                reader, writer = await pty.open()
                link = await stack.enter_async_context(SerialTableLink(table_id, reader, writer))
                devices[table_id] = Devices(link)
            tables = [
                simulated(table_id, devices[table_id], seed=index)
                for index, table_id in enumerate(TABLES, start=81)
            ]
            daemon = Daemon(config, tmp_path / "daemon.log")
            rig = Rig(tmp_path / "journal.db", daemon, devices, tables)
            rig.play = [asyncio.create_task(keep_playing(table, rig.stop)) for table in tables]
            try:
                await rig.kill_cycles(rng)
                state = await rig.last_run(port)
            finally:
                await rig.close()

    wagers = check_journal(rig, state)
    # The run did what it claims: kills under load, play through every one of them.
    assert len(rig.progress) == KILLS_UNDER_LOAD
    assert sum(n > 0 for n in rig.progress) >= KILLS_UNDER_LOAD * 3 // 4, rig.progress
    assert wagers > 100
    assert sum(d.link.resends for d in devices.values()) > 0
    elapsed = time.monotonic() - started
    print(  # noqa: T201 - the figures, with pytest -s
        f"\n{KILLS_UNDER_LOAD + KILLS_AT_START} kills ({KILLS_AT_START} at start-up), "
        f"{len(rig.acked())} events acknowledged, {wagers} wagers, "
        f"{rig.committed_not_acked} kills between a commit and its ACK, {elapsed:.1f} s"
    )  # how long it took is a figure, not a test: these machines are shared and noisy
