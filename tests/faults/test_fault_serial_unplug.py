"""A serial device unplugged and plugged back in under the real daemon.

docs/faults.md, "A serial adapter unplugged".

``tests/drivers/serial/test_serial_link.py`` unplugs a pty under the serial driver alone. Here
the whole daemon (``python -m controller run --config ...``) runs as a child process with two
tables on two pty lines, reached as udev reaches a USB adapter: through a symlink (``ttyT1``)
the configuration names. While both tables play, table t1's line is unplugged four times: the
symlink goes away, the devices' end (the pty master) is closed, and the daemon's reads on its
end fail; a moment later a new pty appears behind the same symlink, as a re-plugged adapter
does, and the devices carry on. Checks:

* the daemon reopens the port by itself each time (its log says so) and play on t1 resumes,
  while t2, on its own line, plays on through every outage;
* the frame in flight at each unplug is resent on the new line and journaled once. Every
  other unplug comes at a random moment of play (the frame on the line may or may not have
  been journaled); the others are made to lose a journaled frame's ACK: the frame is written
  once, the daemon journals it and answers, and the cable is pulled before the devices take
  the answer, so they must resend it (the daemon answers the resend from the journal,
  without applying it again);
* at the end every acknowledged event is in the journal exactly once and applied, ``verify``
  passes, the meter is the seed plus 28% of each locked progressive wager, both tables are
  online on ``/api/state``, and the daemon stops cleanly on SIGTERM.

Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

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
from drivers.serial.framing import encode_frame
from drivers.simulator_links import LinkClosedError, PtyPair, SerialTableLink, serial_payload

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.events import DeviceInput

pytestmark = pytest.mark.fault


ROOT = Path(__file__).resolve().parents[2]
UNPLUGS = 4
"""Even ones lose a journaled frame's ACK on purpose; odd ones pull the cable at a random moment."""
UNPLUG_SEED = 4711
UNPLUGGED_S = 0.4
"""How long the cable stays out: longer than the daemon's first reopen attempts."""


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (bounded) until ``condition()`` holds, checking every 20 ms."""

    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await within(wait(), what)


@dataclass
class Cable:
    """A table's devices on a line that can be unplugged and plugged in again.

    While unplugged the devices hold what they have not had acknowledged and resend it once
    the line is back, as devices resend until ACKed. :attr:`lose_next_ack` makes the next
    event's first (and only) frame be written once and its ACK be lost with the cable: the
    devices go on as if it never came, until :meth:`unplug`, and resend it on the new line.
    """

    table_id: str
    by_path: Path
    pty: PtyPair | None = None
    link: SerialTableLink | None = None
    plugged: asyncio.Event = field(default_factory=asyncio.Event)
    acked: list[DeviceInput] = field(default_factory=list)
    lose_next_ack: bool = False
    ack_lost: asyncio.Event = field(default_factory=asyncio.Event)
    lost: list[str] = field(default_factory=list)
    """Events journaled whose ACK was lost in an unplug."""
    resent_after_replug: int = 0

    async def plug_in(self) -> None:
        """A new adapter behind the same path (a new pty, the symlink replaced atomically)."""
        self.pty = PtyPair()
        reader, writer = await self.pty.open()
        self.link = SerialTableLink(self.table_id, reader, writer)
        await self.link.__aenter__()
        fresh = self.by_path.with_name(self.by_path.name + ".new")
        fresh.symlink_to(self.pty.path)
        fresh.replace(self.by_path)
        self.plugged.set()

    async def unplug(self) -> None:
        """The device node goes away, and both ends of the line with it."""
        self.plugged.clear()
        self.by_path.unlink(missing_ok=True)
        link, self.link = self.link, None
        if link is not None:
            await link.close()  # what the devices were waiting on fails: LinkClosedError
        if self.pty is not None:
            self.pty.close()
            self.pty = None

    async def send(self, event: DeviceInput) -> None:
        """Deliver one event: resend it on every line plugged in until it is ACKed."""
        if self.lose_next_ack:
            self.lose_next_ack = False
            await self._lose_ack(event)
        tries = 0
        while True:
            await self.plugged.wait()
            link = self.link
            assert link is not None
            tries += 1
            try:
                await link.send(event)
            except LinkClosedError:
                continue  # unplugged: wait for the line and send it again
            self.resent_after_replug += tries > 1 or event.event_id in self.lost
            self.acked.append(event)
            return

    async def _lose_ack(self, event: DeviceInput) -> None:
        await self.plugged.wait()
        link = self.link
        assert link is not None
        answer = f"ACK,{event.device},{event.seq}"
        await link.write_raw(encode_frame(serial_payload(event)))  # once, no resend
        await until(lambda: answer in link.answers, f"the daemon to journal {event.event_id}")
        self.lost.append(event.event_id)  # answered after the commit; the devices missed it
        self.ack_lost.set()
        while self.plugged.is_set():  # nothing more on this line: the test unplugs it now
            await asyncio.sleep(0.01)

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """A heartbeat when plugged in (dropped otherwise: a late one says nothing)."""
        link = self.link
        if link is None:
            return
        with contextlib.suppress(LinkClosedError):
            await link.heartbeat(table_id, device, last)

    def ids(self) -> list[str]:
        """The acknowledged event ids, in order."""
        return [event.event_id for event in self.acked]

    def locked_progressive_wagers(self) -> int:
        """Progressive chips on the spots at each acknowledged LOCK (each becomes a wager)."""
        return locked_progressive_wagers(self.acked)


async def pull_and_replug(
    t1: Cable, t2: Cable, unplug: int, rng: random.Random, play: list[asyncio.Task[None]]
) -> None:
    """Unplug t1's line for a while and plug it in again; t1 plays on, t2 never stopped."""
    target = len(t1.acked) + 60
    await until(lambda: len(t1.acked) >= target, "play on t1")
    if unplug % 2 == 0:
        t1.lose_next_ack = True
        await within(t1.ack_lost.wait(), "a frame journaled whose ACK is then lost")
        t1.ack_lost.clear()
    else:
        await asyncio.sleep(rng.uniform(0.0, 0.05))  # whatever frame is on the line
    await t1.unplug()
    t2_before = len(t2.acked)
    await asyncio.sleep(UNPLUGGED_S)
    assert not any(task.done() for task in play)
    await t1.plug_in()
    t1_before = len(t1.acked)
    await until(lambda: len(t1.acked) > t1_before + 20, "play on t1 after the replug")
    assert len(t2.acked) > t2_before, "t2 stopped when t1's cable was pulled"


def check_log(text: str, t1: Cable, t2: Cable) -> None:
    """The daemon saw each unplug and opened the line again by itself; t2's never failed."""
    assert text.count(f"serial:t1-line: {t1.by_path} open") == 1 + UNPLUGS, text
    assert text.count("serial:t1-line: port failed") == UNPLUGS, text
    assert text.count(f"serial:t2-line: {t2.by_path} open") == 1, text
    assert "serial:t2-line: port failed" not in text


def check_journal(path: Path, t1: Cable, t2: Cable) -> int:
    """Each acknowledged event once, the lost-ACK frames among them; the replay's meter."""
    rows = journal_rows(path)
    counts = Counter(row["event_id"] for row in rows)
    assert [event_id for event_id, n in counts.items() if n > 1] == []
    assert len(t1.lost) == (UNPLUGS + 1) // 2
    assert all(counts[event_id] == 1 for event_id in t1.lost)
    assert set(t1.lost) <= set(t1.ids())
    assert t1.resent_after_replug >= len(t1.lost)

    acked = t1.ids() + t2.ids()
    assert len(acked) == len(set(acked))
    device_rows = [row for row in rows if row["kind"] in DEVICE_KINDS]
    assert {row["event_id"] for row in device_rows} == set(acked)
    assert [r["event_id"] for r in device_rows if r["outcome"] != "applied"] == []
    faults = [json.loads(row["event"]) for row in rows if row["kind"] == "fault"]
    # A frame cut in half by an unplug is reported when the port fails; nothing else.
    assert all(fault["source"] == "serial:t1-line" for fault in faults), faults

    report = verify(path)
    assert report.ok, report.problems
    meter = SEED_CENTS + CONTRIBUTION_CENTS * (
        t1.locked_progressive_wagers() + t2.locked_progressive_wagers()
    )
    assert report.pools == {POOL: meter}
    return meter


async def test_faults_serial_device_unplugged_and_replugged_under_the_daemon(
    tmp_path: Path,
) -> None:
    port = free_port()
    t1, t2 = Cable("t1", tmp_path / "ttyT1"), Cable("t2", tmp_path / "ttyT2")
    for cable in (t1, t2):
        await cable.plug_in()
    config = write_config(tmp_path, "plug", {"t1": t1.by_path, "t2": t2.by_path}, port)
    approved_site(config)
    log = tmp_path / "daemon.log"
    stop = asyncio.Event()
    with log.open("wb") as stderr:
        daemon = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "controller", "run", "--config", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
        )  # fmt: skip
    tables = [simulated("t1", t1, seed=91), simulated("t2", t2, seed=92)]
    play = [asyncio.create_task(keep_playing(table, stop)) for table in tables]
    rng = random.Random(UNPLUG_SEED)  # noqa: S311 - timing, not a secret
    try:
        assert daemon.stdout is not None
        line = await within(daemon.stdout.readline(), "the daemon to start")
        assert b"meter display" in line, log.read_text()
        for unplug in range(UNPLUGS):
            await pull_and_replug(t1, t2, unplug, rng, play)
        goal = [table.rounds_played + 2 for table in tables]
        await until(
            lambda: all(t.rounds_played >= n for t, n in zip(tables, goal, strict=True)),
            "two more rounds on each table",
        )
        stop.set()
        await within(asyncio.gather(*play), "the rounds in play to finish")
        state = await get_json(f"http://127.0.0.1:{port}/api/state")
        daemon.send_signal(signal.SIGTERM)
        assert await within(daemon.wait(), "the daemon to stop") == 0, log.read_text()
    finally:
        stop.set()
        for task in play:
            task.cancel()
        await asyncio.gather(*play, return_exceptions=True)
        if daemon.returncode is None:
            daemon.kill()
            await within(daemon.wait(), "the daemon to go")
        for cable in (t1, t2):
            await cable.unplug()

    check_log(log.read_text(errors="replace"), t1, t2)
    meter = check_journal(tmp_path / "journal.db", t1, t2)
    (pool,) = state["pools"]
    assert pool["meter_cents"] == meter
    # Play resumed: both tables online on the daemon that never restarted.
    assert {t["table"]: t["online"] for t in state["tables"]} == {"t1": True, "t2": True}
