"""The journal port's contract (docs/journal.md, "The port"), run against every backend.

Each test works only through :class:`controller.journal.port.JournalPort`, as the sequencer,
start-up, CLI, display and metrics do, so that a second backend passes by adding one fixture
parameter: how to open it at a location, and how to make its writes fail for a while (a
real failure of the store, never a mock). The backends: the SQLite file, and a PostgreSQL
database on a real server (tests/support/postgres.py).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from support.journal_rig import (
    AT,
    FIVE_ACES,
    NOTHING,
    OTHER,
    POOL,
    TABLE,
    pool_opened,
    settle,
    snapshot,
    table_configured,
    wager,
)

from controller.events import BetSensed, HitVerified
from controller.journal import Journal, JournalError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres import PostgresJournal
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path

    from controller.journal.port import JournalPort

HIT = "r2-settle/3/progressive"
"""The payout of seat 3's five aces, which needs a supervisor's verification."""


@dataclass(frozen=True)
class Backend:
    """How the contract reaches one backend."""

    open: Callable[[], JournalPort[Any]]
    """Open the journal at the test's location (the same one each time: reopening)."""
    failing_writes: Callable[[], AbstractContextManager[None]]
    """Within this, every write of the store fails."""


def _sqlite(request: pytest.FixtureRequest) -> Backend:
    path: Path = request.getfixturevalue("tmp_path") / "journal.db"

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another process with the file makes the store refuse rows, as a full disk would.
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        yield
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("DROP TRIGGER no_rows")

    return Backend(open=lambda: Journal(path), failing_writes=failing_writes)


def _postgres(request: pytest.FixtureRequest) -> Backend:
    url = DatabaseUrl(request.getfixturevalue("postgres_url"))

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another session makes the server refuse rows, as a full disk would.
        with psycopg.connect(url.url, autocommit=True) as other:
            other.execute(
                "CREATE FUNCTION no_rows() RETURNS trigger LANGUAGE plpgsql AS "
                "$$BEGIN RAISE EXCEPTION 'disk full (simulated)'; END$$"
            )
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "FOR EACH ROW EXECUTE FUNCTION no_rows()"
            )
        yield
        with psycopg.connect(url.url, autocommit=True) as other:
            other.execute("DROP TRIGGER no_rows ON journal")
            other.execute("DROP FUNCTION no_rows()")

    return Backend(open=lambda: PostgresJournal(url), failing_writes=failing_writes)


BACKENDS: dict[str, Callable[[pytest.FixtureRequest], Backend]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    """Each backend, at a location of this test's own (the server started only when needed)."""
    return BACKENDS[request.param](request)


@pytest.fixture
def journal(backend: Backend) -> Iterator[JournalPort[Any]]:
    """A journal holding one pool and one table."""
    opened = backend.open()
    for event in (pool_opened(), table_configured()):
        assert opened.append(event).applied
    yield opened
    opened.close()


def play_hit_round(journal: JournalPort[Any]) -> None:
    """Round r1 with no hit; round r2 with five aces on seat 3 (pending verification)."""
    journal.append_many([wager("r1-w1", "r1", 1), wager("r1-w2", "r1", 2)])
    journal.append(settle("r1-settle", "r1", {1: NOTHING, 2: OTHER}))
    journal.append_many([wager("r2-w3", "r2", 3), wager("r2-w4", "r2", 4)])
    journal.append(settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}))


def bet_sensed(seq: int, device: str = "sensor-1") -> BetSensed:
    return BetSensed(
        f"{TABLE}/{device}/{seq}", AT, TABLE, device, seq, seat=1, spot="progressive", present=True
    )


# --- appending ---------------------------------------------------------------------------------


def test_journal_contract_each_appended_event_takes_the_next_row_and_moves_the_state(
    journal: JournalPort[Any],
) -> None:
    receipts = journal.append_many([wager("r1-w1", "r1", 1), wager("r1-w2", "r1", 2)])
    assert [(r.seq, r.outcome, r.duplicate) for r in receipts] == [
        (3, APPLIED, False),
        (4, APPLIED, False),
    ]
    assert journal.state.pools[POOL].wagers_count == 2
    assert journal.head[0] == journal.committed_seq() == 4


def test_journal_contract_a_refused_event_is_journaled_and_moves_no_money(
    journal: JournalPort[Any],
) -> None:
    before = snapshot(journal.state)
    receipt = journal.append(wager("w-unknown-seat", "r1", 99))
    assert (receipt.seq, receipt.outcome, receipt.applied) == (3, REJECTED, False)
    assert receipt.reason
    assert snapshot(journal.state) == before


def test_journal_contract_a_duplicate_is_acknowledged_with_its_first_outcome_and_not_applied(
    journal: JournalPort[Any],
) -> None:
    first = journal.append(wager("r1-w1", "r1", 1))
    again = journal.append(wager("r1-w1", "r1", 1))
    assert (again.seq, again.outcome, again.duplicate) == (first.seq, first.outcome, True)
    assert again.effects == first.effects
    assert journal.state.pools[POOL].wagers_count == 1
    assert journal.head[0] == first.seq


def test_journal_contract_an_id_reused_for_other_content_is_a_fault_that_moves_no_money(
    journal: JournalPort[Any],
) -> None:
    journal.append(wager("r1-w1", "r1", 1))
    before = snapshot(journal.state)
    reused = journal.append(wager("r1-w1", "r1", 2, amount=500))
    # What is journaled is the fault, under an id of its own; the reused id keeps its event.
    assert reused.conflict
    assert reused.event_id.startswith("r1-w1#conflict-")
    assert (reused.seq, reused.effects) == (4, ())
    assert snapshot(journal.state) == before
    assert journal.append(wager("r1-w1", "r1", 1)).duplicate


# --- prepare, commit, adopt --------------------------------------------------------------------


def test_journal_contract_prepared_events_reach_the_state_only_when_adopted_after_commit(
    journal: JournalPort[Any],
) -> None:
    state, head = journal.state, journal.head
    prepared = journal.prepare([wager("r1-w1", "r1", 1)])
    assert (journal.state, journal.head) == (state, head)
    with pytest.raises(JournalError, match="must be committed"):
        journal.adopt(prepared)
    prepared.commit()
    assert prepared.committed
    (receipt,) = journal.adopt(prepared)
    assert (receipt.seq, receipt.applied) == (3, True)
    assert journal.head[0] == 3
    assert journal.state.pools[POOL].wagers_count == 1


def test_journal_contract_a_failed_write_leaves_journal_and_state_unchanged(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    journal.append(wager("r1-w1", "r1", 1))
    state, head, rows = journal.state, journal.head, journal.committed_seq()
    with backend.failing_writes(), pytest.raises(JournalError, match="disk full"):
        journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    assert (journal.state, journal.head, journal.committed_seq()) == (state, head, rows)
    receipts = journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    assert [(r.seq, r.duplicate) for r in receipts] == [(4, False), (5, False)]
    assert journal.verify().ok


# --- reads -------------------------------------------------------------------------------------


def test_journal_contract_reads_return_the_payouts_as_appended(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    (pending,) = journal.pending_payouts()
    assert (pending.payout_id, pending.table_id, pending.seat, pending.line) == (
        HIT,
        TABLE,
        3,
        "five-aces",
    )
    assert pending.win_cents > 0
    assert journal.oldest_pending_at() == pending.at
    (hit,) = journal.hits()
    assert (hit.payout_id, hit.pool_id, hit.win_cents) == (HIT, POOL, pending.win_cents)
    assert journal.count_payouts(excluding_kind="envy") == 4
    (record,) = journal.verification_records(pending_only=True)
    assert (record.payout.payout_id, record.payout.status, record.verified_by) == (
        HIT,
        "pending",
        None,
    )
    assert journal.verification_records(pool_id="no-such-pool") == []


def test_journal_contract_a_verified_hit_leaves_the_pending_reads(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    verified = journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7"))
    assert verified.applied
    assert journal.pending_payouts() == []
    assert journal.oldest_pending_at() is None
    assert journal.verification_records(pending_only=True) == []
    (record,) = journal.verification_records(pool_id=POOL)
    assert (record.payout.status, record.verified_by, record.verified_seq) == (
        "paid",
        "supervisor-7",
        verified.seq,
    )
    assert [hit.payout_id for hit in journal.hits(newest_first=True, limit=1)] == [HIT]


def test_journal_contract_payouts_since_a_row_are_given_as_made_for_a_sink_catching_up(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    made = journal.payouts_since(0)
    assert len(made) == journal.count_payouts(excluding_kind="envy") == 4
    assert [seq for seq, _, _ in made] == sorted(seq for seq, _, _ in made)
    hit_seq = next(seq for seq, _, payout in made if payout.payout_id == HIT)
    journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7"))
    # Verified since, the hit is still given as it was made: pending.
    since = journal.payouts_since(hit_seq - 1)
    assert {seq for seq, _, _ in since} == {hit_seq}
    (again,) = [payout for _, _, payout in since if payout.payout_id == HIT]
    assert (again.payout_id, again.status) == (HIT, "pending")
    assert journal.payouts_since(journal.head[0]) == []


def test_journal_contract_device_highs_keep_each_devices_highest_seq(
    journal: JournalPort[Any],
) -> None:
    assert journal.device_highs() == {}
    journal.append_many([bet_sensed(1), bet_sensed(3), bet_sensed(2)])
    journal.append(bet_sensed(7, device="sensor-2"))
    assert journal.device_highs() == {(TABLE, "sensor-1"): 3, (TABLE, "sensor-2"): 7}


# --- verify and reopen -------------------------------------------------------------------------


def test_journal_contract_verify_passes_a_clean_journal_at_its_head(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    report = journal.verify()
    assert report.ok, report.problems
    assert report.head == journal.head
    assert report.rows == journal.committed_seq()


def test_journal_contract_reopening_restores_state_head_highs_and_reads(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    play_hit_round(journal)
    journal.append(bet_sensed(5))
    before = (
        snapshot(journal.state),
        journal.head,
        journal.device_highs(),
        journal.pending_payouts(),
        journal.hits(),
    )
    assert journal.state.pending  # the hit awaits verification across the restart
    journal.close()
    reopened = backend.open()
    try:
        after = (
            snapshot(reopened.state),
            reopened.head,
            reopened.device_highs(),
            reopened.pending_payouts(),
            reopened.hits(),
        )
        assert after == before
        assert reopened.append(wager("r3-w1", "r3", 1)).seq == before[1][0] + 1
    finally:
        reopened.close()
