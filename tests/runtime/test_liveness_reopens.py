"""A table closed by a status row reopens when heard; one opened by a status row closes unheard.

NY 9 NYCRR 5321.18(c): a table's progressive is unplayable while the controller does not hear
the table. A ``table-status`` offline row (a broker's status topic, which anyone on the broker
can publish) must not keep a table the daemon hears closed, and an ``online`` row (the same
topic's retained copy, journaled again at every start) must not keep a table it does not hear
open. A real journal file, the real sequencer and liveness monitor; the monitor's clock is the
test's, so that nothing sleeps, and every wait is on the sequencer's commits.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest

from controller.events import BetSensed, PoolOpened, TableConfigured, TableStatusChanged
from controller.journal.sqlite.rows import provenances
from controller.ledger_journal.sqlite import Journal
from controller.runtime.broadcast import Broadcast
from controller.runtime.liveness import Liveness
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

AT = "2026-12-01T15:00:00Z"
WAIT_S = 5


def _table(table_id: str) -> TableConfigured:
    paytable = (resources.files("controller") / "paytables" / "progressive-1.toml").read_text()
    return TableConfigured(
        f"table-{table_id}", AT, table_id, {"progressive-1": paytable},
        progressive="progressive-1", pool_id="P1",
    )  # fmt: skip


@pytest.fixture
def two_tables(tmp_path: Path) -> Journal:
    journal = Journal(tmp_path / "journal.db")
    journal.append_many(
        [
            PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
            _table("T1"),
            _table("T2"),
        ]
    )
    return journal


def _commits(sequencer: Sequencer) -> asyncio.Event:
    """Set at every commit (the waits below clear it before they wait)."""
    committed = asyncio.Event()
    sequencer.on_commit.append(lambda _receipts: committed.set())
    return committed


async def _until(committed: asyncio.Event, predicate: Callable[[], bool]) -> None:
    """Wait (bounded) until ``predicate()`` holds, looking again after each commit."""
    async with asyncio.timeout(WAIT_S):
        while not predicate():
            committed.clear()  # no await since the look: no commit is missed
            await committed.wait()


async def test_a_table_closed_by_a_status_row_reopens_when_heard_and_a_silent_one_stays_closed(
    two_tables: Journal,
) -> None:
    clock = [0.0]
    liveness = Liveness({"T1": 60.0, "T2": 60.0}, monotonic=lambda: clock[0], clock=lambda: AT)
    sequencer = Sequencer(two_tables, Broadcast(), on_heartbeat=liveness.seen)
    committed = _commits(sequencer)
    runner = asyncio.create_task(sequencer.run())
    try:
        origin = "mqtt client=c-in topic=table/T1/status"
        for table_id in ("T1", "T2"):
            forged = TableStatusChanged(
                f"{table_id}/status/x/1", AT, table_id, online=False, reason="forged"
            )
            assert (await sequencer.submit(forged, provenance=origin)).applied
        assert not two_tables.state.table_states["T1"].online
        assert not two_tables.state.table_states["T2"].online
        assert liveness.silent == set()  # the monitor did not close them: it hears them
        sequencer.heartbeat("T1", "console")  # T1 is heard again; T2 never is
        await _until(committed, lambda: two_tables.state.table_states["T1"].online)
        bet = BetSensed("T1/s/1", AT, "T1", "s", 1, 1, "progressive", True, 100)
        assert (await sequencer.submit(bet, provenance="serial port=/dev/pts/9 line=t1")).applied
        sequencer.heartbeat("T1", "console")  # open already: nothing more is journaled
        await sequencer.submit(BetSensed("T1/s/2", AT, "T1", "s", 2, 2, "progressive", True, 100))
    finally:
        runner.cancel()
    assert not two_tables.state.table_states["T2"].online  # silent: it stays closed
    statuses = [row for row in two_tables.rows() if row["kind"] == "table-status"]
    assert len(statuses) == 3  # T1 and T2 closed, T1 reopened once
    assert '"online":true' in str(statuses[-1]["event"])
    origins = dict(provenances(two_tables.db.conn))
    seqs = [int(str(row["seq"])) for row in statuses]
    assert [origins[seq] for seq in seqs] == [origin, origin, "daemon"]
    bet_row = next(row for row in two_tables.rows() if row["event_id"] == "T1/s/1")
    assert origins[int(str(bet_row["seq"]))] == "serial port=/dev/pts/9 line=t1"


async def test_5321_18c_a_table_opened_by_a_status_row_is_closed_once_its_timeout_passes_unheard(
    two_tables: Journal,
) -> None:
    # T1 was closed for silence before this start; nothing has been heard from it since.
    closed = TableStatusChanged("T1/liveness/before", AT, "T1", online=False, reason="silent")
    assert two_tables.append_many([closed])[0].applied
    clock = [0.0]

    def is_open(table_id: str) -> bool:
        return two_tables.state.table_states[table_id].online

    liveness = Liveness(
        {"T1": 60.0}, monotonic=lambda: clock[0], clock=lambda: AT, offline={"T1"}, is_open=is_open
    )
    sequencer = Sequencer(two_tables, Broadcast(), on_heartbeat=liveness.seen)
    sequencer.on_commit.append(liveness.committed)
    committed = _commits(sequencer)
    runner = asyncio.create_task(sequencer.run())
    watcher = asyncio.create_task(liveness.run(sequencer))
    try:
        clock[0] = 61.0  # the timeout has passed since the start, and T1 was never heard
        # The broker's retained ``online`` is journaled at the start: the journal opens T1.
        retained = TableStatusChanged("T1/status/mqtt/x/0", AT, "T1", online=True, reason="mqtt")
        origin = "mqtt client=c-in topic=table/T1/status"
        assert (await sequencer.submit(retained, provenance=origin)).applied
        # That commit wakes the monitor: T1 is open and unheard past its timeout, so it closes.
        await _until(committed, lambda: not two_tables.state.table_states["T1"].online)
        assert liveness.timed_out == {"T1"}
        bet = BetSensed("T1/s/1", AT, "T1", "s", 1, 1, "progressive", True, 100)
        clock[0] = 62.0
        # Heard again: the bet reopens it, and the monitor's next deadline is a timeout on.
        assert (await sequencer.submit(bet, provenance="serial port=/dev/pts/9 line=t1")).applied
        assert two_tables.state.table_states["T1"].online
        assert liveness.timed_out == set()
    finally:
        watcher.cancel()
        runner.cancel()
    statuses = [row for row in two_tables.rows() if row["kind"] == "table-status"]
    reasons = [str(row["event"]) for row in statuses]
    assert len(statuses) == 4  # closed before, the retained online, closed unheard, reopened
    assert '"reason":"silent for more than 60 s"' in reasons[2]
    origins = dict(provenances(two_tables.db.conn))
    assert origins[int(str(statuses[2]["seq"]))] == "daemon"
