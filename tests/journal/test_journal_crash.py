"""SIGKILL at random moments loses no acknowledged event and applies none twice.

docs/journal.md, "Durability"; docs/faults.md, "A journal writer killed with SIGKILL".

A child process (:mod:`journal_child`) applies a deterministic stream of events to a real
journal file and acknowledges each event once ``append`` has returned. The parent kills it with
SIGKILL after a random short time, at least fifty times, restarting it each time from where
the acknowledgements stand (or somewhat before, or from the very beginning: re-sent events must
come back as duplicates). After every kill the parent checks, on the file itself:

* the journal holds exactly a prefix of the intended stream, each event once, and every
  acknowledged event is in it with the acknowledged outcome;
* an acknowledgement said "duplicate" exactly when the event had been committed before that
  child started (so nothing was applied twice, nothing committed was forgotten);
* ``verify`` passes (hash chain, replay, materialized state), its meters are the ones shown;
* the restored state equals an independent in-memory replay of the intended events, and each
  pool's money adds up: contributions, house and reserve funding, pays, hits.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pytest
from support.journal import journal_child

from controller.effects import MeterPaid, decode_effects
from controller.events import decode_event
from controller.journal.sqlite.rows import read_rows
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.codec import pool_json, wagers_json
from controller.ledger_journal.sqlite import Journal, verify
from controller.ports import APPLIED

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.events import AnyEvent

pytestmark = pytest.mark.fault

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(journal_child.__file__).resolve()
KILLS = 55
STREAM_SEED = "crash-7"
PARENT_SEED = 20240501
ENDLESS = 10**7
STARTUP_TIMEOUT = 60.0


@dataclass
class Ack:
    """One acknowledgement line of the child."""

    event_id: str
    outcome: str
    duplicate: bool


@dataclass
class ChildRun:
    """What one child process acknowledged, and how it ended."""

    acks: list[Ack]
    returncode: int
    finished: bool
    stderr: str


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_child(
    path: Path, start: int, count: int, kill_after: float | None, stderr_path: Path
) -> ChildRun:
    """Start the child at ``start``; SIGKILL it ``kill_after`` seconds after it is ready.

    The child says ``ready`` only once it has opened the journal, so a kill always finds the
    file and its schema in place: waiting on that line, not on a delay, is what keeps the
    test from racing the child's start under load.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, str(CHILD), str(path), str(start), str(count), STREAM_SEED]
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT, env=env
        )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True)
    reader.start()
    try:
        first = lines.get(timeout=STARTUP_TIMEOUT)
        assert first == "ready\n", f"the child did not start: {stderr_path.read_text()}"
        if kill_after is not None:
            time.sleep(kill_after)
            os.kill(process.pid, signal.SIGKILL)
        returncode = process.wait(timeout=STARTUP_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=STARTUP_TIMEOUT)
    process.stdout.close()
    acks, finished = [], False
    while (line := lines.get_nowait()) is not None:
        if not line.endswith("\n"):  # cut off by the kill: never acknowledged
            continue
        if line == "done\n":
            finished = True
            continue
        word, event_id, outcome, duplicate = line.split()
        assert word == "ack", line
        acks.append(Ack(event_id, outcome, duplicate == "1"))
    return ChildRun(acks, returncode, finished, stderr_path.read_text())


@dataclass
class Expected:
    """The intended events, and the state an in-memory ledger reaches applying them."""

    events: list[AnyEvent] = field(default_factory=journal_child.setup_events)
    stream: Iterator[AnyEvent] = field(default_factory=lambda: journal_child.stream(STREAM_SEED))
    state: LedgerState = field(default_factory=LedgerState)
    outcomes: list[str] = field(default_factory=list)

    @property
    def setup(self) -> int:
        """How many set-up events precede the stream."""
        return len(journal_child.setup_events())

    def event(self, index: int) -> AnyEvent:
        """The ``index``-th intended event (set-up first, then the stream)."""
        while len(self.events) <= index:
            self.events.append(next(self.stream))
        return self.events[index]

    def apply_upto(self, count: int) -> LedgerState:
        """The state after the first ``count`` intended events (only moves forward)."""
        while len(self.outcomes) < count:
            try:
                self.state, _ = apply(self.state, self.event(len(self.outcomes)))
                self.outcomes.append(APPLIED)
            except LedgerError:
                self.outcomes.append("rejected")
        assert len(self.outcomes) == count, "the journal lost committed events"
        return self.state


def journal_rows(path: Path) -> list[dict[str, object]]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as raw:
        raw.row_factory = sqlite3.Row
        counts = raw.execute(
            "SELECT event_id, count(*) FROM journal GROUP BY event_id HAVING count(*) > 1"
        ).fetchall()
        assert counts == [], f"events journaled more than once: {counts}"
        return [row.values for row in read_rows(raw)]


def payouts_from_meter(path: Path, pool_id: str) -> int:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as raw:
        total = raw.execute(
            "SELECT coalesce(sum(from_meter_cents), 0) FROM payouts WHERE pool_id = ?", [pool_id]
        ).fetchone()[0]
    return int(total)


def check_money(path: Path, state: LedgerState, rows: list[dict[str, object]]) -> None:
    """Each pool's money adds up, from the journal's own record of every movement."""
    wagers = dict.fromkeys(journal_child.POOLS, 0)
    paid = dict.fromkeys(journal_child.POOLS, 0)
    hits = dict.fromkeys(journal_child.POOLS, 0)
    house = dict.fromkeys(journal_child.POOLS, journal_child.SEED_CENTS)
    reserve = dict.fromkeys(journal_child.POOLS, 0)
    for row in rows:
        if row["outcome"] != APPLIED:
            continue
        if row["kind"] == "wager-locked":
            table_id = json.loads(str(row["event"]))["table_id"]
            wagers[journal_child.TABLE_POOL[table_id]] += 1
        for effect in decode_effects(str(row["effects"])):
            if isinstance(effect, MeterPaid):
                paid[effect.pool_id] += effect.paid_cents
                hits[effect.pool_id] += 1
                house[effect.pool_id] += effect.from_house_cents
                reserve[effect.pool_id] += effect.from_reserve_cents
    assert set(state.pools) <= set(journal_child.POOLS)
    for pool_id, pool in state.pools.items():
        where = f"pool {pool_id}"
        assert pool.money_in() == pool.money_held_or_paid(), where
        assert pool.wagers_count == wagers[pool_id], where
        assert pool.wagers_cents == journal_child.WAGER_CENTS * wagers[pool_id], where
        rate = Fraction(journal_child.RATES[pool_id])
        assert pool.contributions == pool.wagers_cents * rate, where
        assert pool.paid_cents == paid[pool_id] == payouts_from_meter(path, pool_id), where
        assert pool.hits_count == hits[pool_id], where
        assert pool.house_funding_cents == house[pool_id], where
        assert pool.reserve_funding_cents == reserve[pool_id], where
        assert min(pool.meter, pool.reserve, pool.overflow) >= 0, where
        limit = pool.terms.limit_cents
        assert limit is None or pool.meter <= limit, where


def snapshot(state: LedgerState) -> dict[str, object]:
    return {
        "pools": {pool_id: pool_json(pool) for pool_id, pool in state.pools.items()},
        "tables": dict(state.table_events),
        "rounds": {key: wagers_json(wagers) for key, wagers in state.rounds.items()},
        "pending": sorted(state.pending),
        "revision": state.revision,
    }


def check_after_restart(
    path: Path, expected: Expected, acknowledged: dict[str, str]
) -> list[dict[str, object]]:
    """Everything docs/journal.md promises of the file after a kill; returns the journal rows."""
    report = verify(path)  # first, as an operator would, before anything reopens the file
    assert report.ok, report.problems
    rows = journal_rows(path)
    assert report.rows == len(rows)
    ids = [str(row["event_id"]) for row in rows]
    assert ids == [expected.event(index).event_id for index in range(len(rows))]
    missing = acknowledged.keys() - set(ids)
    assert not missing, f"acknowledged but lost: {sorted(missing)[:5]}"
    outcomes = {str(row["event_id"]): str(row["outcome"]) for row in rows}
    assert all(outcomes[event_id] == outcome for event_id, outcome in acknowledged.items())

    state = expected.apply_upto(len(rows))
    assert [row["outcome"] for row in rows] == expected.outcomes
    with Journal(path) as journal:
        restored = journal.state
    assert snapshot(restored) == snapshot(state)
    assert report.pools == {pool_id: pool.meter_cents for pool_id, pool in restored.pools.items()}
    check_money(path, restored, rows)
    return rows


def test_faults_sigkill_at_random_moments_loses_no_acknowledged_event(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    rng = random.Random(PARENT_SEED)  # noqa: S311 - kill timing, not a secret
    expected = Expected()
    acknowledged: dict[str, str] = {}
    committed = 0  # journal rows at the last check
    kills = resent = 0

    for cycle in range(KILLS):
        # Acknowledgements come in stream order and every child starts at or before where they
        # stand, so the acknowledged stream events are always the stream's first ones.
        acked = [event_id for event_id in acknowledged if not event_id.startswith("setup/")]
        in_stream = [expected.event(expected.setup + i).event_id for i in range(len(acked))]
        assert acked == in_stream
        start = 0 if cycle % 10 == 9 else max(0, len(acked) - rng.choice((0, 0, 0, 2, 30)))
        run = run_child(path, start, ENDLESS, rng.uniform(0.02, 0.15), tmp_path / "stderr")
        assert run.returncode == -signal.SIGKILL, (run.returncode, run.stderr)
        assert not run.finished
        kills += 1
        for ack in run.acks:
            assert acknowledged.setdefault(ack.event_id, ack.outcome) == ack.outcome, ack

        rows = check_after_restart(path, expected, acknowledged)
        assert len(rows) >= committed, "committed events disappeared"
        position = {str(row["event_id"]): index for index, row in enumerate(rows)}
        for ack in run.acks:
            # Duplicate exactly when it had been committed before this child started.
            assert ack.duplicate == (position[ack.event_id] < committed), (cycle, ack, committed)
            resent += ack.duplicate
        committed = len(rows)

    # Last, a child that is not killed finishes its slice; then a clean replay of exactly the
    # committed events, decoded from the journal, gives the meters shown.
    acked_stream = sum(1 for event_id in acknowledged if not event_id.startswith("setup/"))
    run = run_child(path, acked_stream, 40, None, tmp_path / "stderr")
    assert (run.returncode, run.finished) == (0, True), run.stderr
    assert len(run.acks) == expected.setup + 40
    rows = check_after_restart(path, expected, {ack.event_id: ack.outcome for ack in run.acks})
    assert len(rows) == expected.setup + acked_stream + 40 >= committed

    state = LedgerState()
    for row in rows:
        try:
            state, _ = apply(state, decode_event(str(row["event"])))
        except LedgerError:
            assert row["outcome"] == "rejected"
    with Journal(path) as journal:
        assert snapshot(journal.state) == snapshot(state)
        shown = {pool_id: pool.meter_cents for pool_id, pool in journal.state.pools.items()}
    assert verify(path).pools == shown == {p: pool.meter_cents for p, pool in state.pools.items()}

    # The run exercised what it claims to: kills, re-sent events, hits and refusals.
    assert kills >= 50
    assert resent > 0
    kinds = {(row["kind"], row["outcome"]) for row in rows}
    assert {("round-settled", APPLIED), ("hit-verified", APPLIED)} <= kinds
    assert ("wager-locked", "rejected") in kinds
    assert all(pool.hits_count > 0 for pool in state.pools.values())
