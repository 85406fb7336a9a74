"""A table closed by a status row reopens when the daemon hears it; a silent one stays closed.

NY 9 NYCRR 5321.18(c): a table's progressive is unplayable while the controller does not hear
the table. A ``table-status`` offline row (a broker's status topic, which anyone on the broker
can publish) must not keep a table the daemon hears closed. A real journal file, the real
sequencer and liveness monitor; the monitor's clock is the test's, so that nothing sleeps.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest

from controller.events import BetSensed, PoolOpened, TableConfigured, TableStatusChanged
from controller.journal import Journal
from controller.journal.rows import provenances
from controller.runtime.broadcast import Broadcast
from controller.runtime.liveness import Liveness
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
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
def journal(tmp_path: Path) -> Journal:
    journal = Journal(tmp_path / "journal.db")
    journal.append_many(
        [
            PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
            _table("T1"),
            _table("T2"),
        ]
    )
    return journal


async def _until(predicate: object) -> None:
    async with asyncio.timeout(WAIT_S):
        while not predicate():  # type: ignore[operator]
            await asyncio.sleep(0.01)


async def test_a_table_closed_by_a_status_row_reopens_when_heard_and_a_silent_one_stays_closed(
    journal: Journal,
) -> None:
    clock = [0.0]
    liveness = Liveness({"T1": 60.0, "T2": 60.0}, monotonic=lambda: clock[0], clock=lambda: AT)
    sequencer = Sequencer(journal, Broadcast(), on_heartbeat=liveness.seen)
    runner = asyncio.create_task(sequencer.run())
    try:
        origin = "mqtt client=c-in topic=table/T1/status"
        for table_id in ("T1", "T2"):
            forged = TableStatusChanged(
                f"{table_id}/status/x/1", AT, table_id, online=False, reason="forged"
            )
            assert (await sequencer.submit(forged, provenance=origin)).applied
        assert not journal.state.table_states["T1"].online
        assert not journal.state.table_states["T2"].online
        assert liveness.silent == set()  # the monitor did not close them: it hears them
        sequencer.heartbeat("T1", "console")  # T1 is heard again; T2 never is
        await _until(lambda: journal.state.table_states["T1"].online)
        bet = BetSensed("T1/s/1", AT, "T1", "s", 1, 1, "progressive", True, 100)
        assert (await sequencer.submit(bet, provenance="serial port=/dev/pts/9 line=t1")).applied
        sequencer.heartbeat("T1", "console")  # open already: nothing more is journaled
        await sequencer.submit(BetSensed("T1/s/2", AT, "T1", "s", 2, 2, "progressive", True, 100))
    finally:
        runner.cancel()
    assert not journal.state.table_states["T2"].online  # silent: it stays closed
    statuses = [row for row in journal.rows() if row["kind"] == "table-status"]
    assert len(statuses) == 3  # T1 and T2 closed, T1 reopened once
    assert '"online":true' in str(statuses[-1]["event"])
    origins = dict(provenances(journal.db.conn))
    seqs = [int(str(row["seq"])) for row in statuses]
    assert [origins[seq] for seq in seqs] == [origin, origin, "daemon"]
    bet_row = next(row for row in journal.rows() if row["event_id"] == "T1/s/1")
    assert origins[int(str(bet_row["seq"]))] == "serial port=/dev/pts/9 line=t1"
