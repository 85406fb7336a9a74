"""The journal (docs/journal.md): one transaction per event, idempotent, tamper-evident, replayable.

Every test works on a real SQLite file under ``tmp_path``; tampering is done with :mod:`sqlite3`
directly on that file, as an intruder with the file would do it, and failures are provoked
with a real lock or a real trigger, never with mocks.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import (
    AT,
    FIVE_ACES,
    NOTHING,
    PAYTABLE,
    POOL,
    SEED_CENTS,
    STRAIGHT_FLUSH,
    TABLE,
    THIRD,
    opened_journal,
    pool_opened,
    replay,
    rows_of,
    settle,
    snapshot,
    table_configured,
    table_rows,
    wager,
)

from controller.effects import PayoutMade, decode_effects
from controller.events import (
    FaultRecorded,
    HitVerified,
    MeterAdjusted,
    PoolTermsChanged,
    WagerLocked,
    decode_event,
)
from controller.journal import JournalError
from controller.journal.sqlite.payouts import payouts_after
from controller.ledger_journal.sqlite import Journal, verify
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent

# --- one event, one transaction; restoring ---------------------------------------------------


def test_journal_wager_and_its_effects_are_materialized_with_its_journal_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        receipt = journal.append(wager("r1-w1", "r1", 1))
        assert receipt.applied
        assert (receipt.seq, receipt.duplicate, receipt.reason) == (3, False, "")
        pool = journal.state.pools[POOL]
        assert pool.meter == SEED_CENTS + Fraction(113, 4)
        assert pool.reserve == 2

    # Read back through a separate connection: all of it is on disk, none of it pending.
    row = rows_of(path)[-1]
    assert (row["seq"], row["event_id"], row["kind"], row["outcome"]) == (
        3, "r1-w1", "wager-locked", APPLIED,
    )  # fmt: skip
    assert decode_event(str(row["event"])) == wager("r1-w1", "r1", 1)
    assert [type(effect).__name__ for effect in decode_effects(str(row["effects"]))] == [
        "Contributed",
        "Balances",
    ]
    [(pool_id, state, seq)] = table_rows(path, "pools")
    assert (pool_id, seq) == (POOL, 3)
    assert json.loads(str(state))["meter"] == "4000113/4"
    # The open round keeps the wager's exact contribution, for a void to reverse.
    assert table_rows(path, "rounds") == [(TABLE, "r1", '[[1,"progressive",100,"113/4","2","0"]]')]


def test_journal_settlement_writes_journal_row_pool_payouts_and_closes_round_together(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        receipt = journal.append(settle("r1-settle", "r1", {1: FIVE_ACES, 2: NOTHING}))
        assert receipt.applied
        assert not journal.state.rounds
        hit = journal.state.pending["r1-settle/1/progressive"]

    assert table_rows(path, "rounds") == []
    [pool_row] = table_rows(path, "pools")
    assert pool_row[2] == receipt.seq
    with closing(sqlite3.connect(path)) as raw:
        raw.row_factory = sqlite3.Row
        payouts = {row["payout_id"]: dict(row) for row in raw.execute("SELECT * FROM payouts")}
    assert set(payouts) == {"r1-settle/1/progressive", "r1-settle/2/progressive"}
    stored = payouts["r1-settle/1/progressive"]
    assert (stored["seq"], stored["status"], stored["line"]) == (
        receipt.seq,
        "pending",
        "five-aces",
    )
    assert stored["win_cents"] == stored["from_meter_cents"] == hit.win_cents == 100_005
    assert payouts["r1-settle/2/progressive"]["kind"] == "loss"
    assert payouts["r1-settle/2/progressive"]["status"] == "paid"


def test_journal_reopening_the_journal_restores_the_same_state(played: Path) -> None:
    with Journal(played) as journal:
        journal.append(wager("r4-w2", "r4", 2))  # an open round too
        journal.append(MeterAdjusted("adj", AT, POOL, "reserve", 500, "tech-3", "reserve audit"))
        before = snapshot(journal.state)
        assert before["rounds"]
        assert set(before["pending"]) == {"r3-settle/1/progressive"}
        assert journal.state.pools[POOL].meter.denominator > 1  # a sub-cent remainder
    with Journal(played) as reopened:
        assert snapshot(reopened.state) == before
        assert reopened.state.pools[POOL] == journal.state.pools[POOL]
        assert [row["seq"] for row in reopened.rows()] == list(range(1, 14))


def test_journal_pending_payout_survives_reopen_and_is_verified_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(settle("r1-settle", "r1", {1: STRAIGHT_FLUSH}))
    with Journal(path) as journal:
        assert set(journal.state.pending) == {"r1-settle/1/progressive"}
        receipt = journal.append(HitVerified("v1", AT, "r1-settle/1/progressive", "supervisor-7"))
        assert receipt.applied
        assert journal.state.pending == {}
        again = journal.append(HitVerified("v2", AT, "r1-settle/1/progressive", "supervisor-7"))
        assert again.outcome == REJECTED
        assert "no pending payout" in again.reason
    with closing(sqlite3.connect(path)) as raw:
        status = raw.execute(
            "SELECT status, verified_by, verified_seq FROM payouts WHERE payout_id = ?",
            ["r1-settle/1/progressive"],
        ).fetchone()
    assert status == ("paid", "supervisor-7", receipt.seq)
    assert verify(path).ok


def test_journal_group_commit_writes_a_batch_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        receipts = journal.append_many(
            [pool_opened(), table_configured(), wager("w1", "r1", 1), wager("w1", "r1", 1)]
        )
    assert [r.seq for r in receipts] == [1, 2, 3, 3]
    assert [r.duplicate for r in receipts] == [False, False, False, True]
    assert [row["event_id"] for row in rows_of(path)] == ["open-a", "table-1", "w1"]
    assert verify(path).ok


def test_journal_payouts_read_back_are_the_payouts_as_journaled(played: Path) -> None:
    """What a sink catching up reads equals each journal row's payout effects, as made.

    docs/journal.md.
    """
    with closing(sqlite3.connect(played)) as raw:
        as_journaled = [
            (int(row["seq"]), str(row["at"]), effect)
            for row in rows_of(played)
            for effect in decode_effects(str(row["effects"]))
            if isinstance(effect, PayoutMade)
        ]
        read_back = payouts_after(raw, 0)
        assert read_back == as_journaled
        # The five aces waited for a supervisor: read back as made, pending, though now paid.
        (verified,) = [p for _, _, p in read_back if p.payout_id == "r2-settle/3/progressive"]
        assert verified.status == "pending"
        last = as_journaled[-1][0]
        assert payouts_after(raw, last) == []
        assert [seq for seq, _, _ in payouts_after(raw, last - 1)] == [last] * sum(
            1 for seq, _, _ in as_journaled if seq == last
        )


# --- idempotency ----------------------------------------------------------------------------


def test_journal_duplicate_event_id_returns_the_original_outcome_and_changes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        original = journal.append(wager("r1-w1", "r1", 1))
        state = journal.state
        repeat = journal.append(wager("r1-w1", "r1", 1))
        assert journal.state is state
        assert repeat.duplicate
        assert (repeat.seq, repeat.outcome, repeat.reason, repeat.effects) == (
            original.seq, original.outcome, original.reason, original.effects,
        )  # fmt: skip
    assert len(rows_of(path)) == 3
    assert journal.state.pools[POOL].wagers_count == 1


def test_reused_event_id_with_other_content_is_a_journaled_conflict_never_a_silent_ack(
    tmp_path: Path,
) -> None:
    """A device whose counter was reset sends new content under an old id: not a resend."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        state = journal.state
        altered = journal.append(wager("r1-w1", "r1", 2))
        assert altered.conflict
        assert not altered.duplicate
        assert altered.event_id.startswith("r1-w1#conflict-")
        assert journal.state.pools == state.pools  # nothing applied, no meter moved
        # The same conflicting message again (the device resends it): one fault, not two.
        again = journal.append(wager("r1-w1", "r1", 2))
        assert again.conflict
        assert again.duplicate
        assert again.seq == altered.seq
        # And both in one batch: still one fault.
        both = journal.append_many([wager("r1-w1", "r1", 3), wager("r1-w1", "r1", 3)])
        assert [receipt.conflict for receipt in both] == [True, True]
        assert both[1].duplicate
        assert both[1].seq == both[0].seq
    rows = rows_of(path)
    faults = [row for row in rows if row["kind"] == "fault"]
    assert len(faults) == 2
    fault = json.loads(faults[0]["event"])
    assert fault["reason"] == "sequence-reused"
    assert '"seat":1' in fault["detail"]
    assert '"seat":2' in fault["detail"]
    assert journal.state.pools[POOL].wagers_count == 1


def test_journal_duplicate_event_id_is_recognized_after_a_reopen(played: Path) -> None:
    rows_before = rows_of(played)
    pools_before = table_rows(played, "pools")
    payouts_before = table_rows(played, "payouts")
    with Journal(played) as journal:
        meters = snapshot(journal.state)
        receipts = journal.append_many(
            [
                wager("r2-w3", "r2", 3),
                settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}),
                settle("r3-settle", "r3", {1: STRAIGHT_FLUSH}),
                HitVerified("r2-verify", AT, "r2-settle/3/progressive", "supervisor-7"),
            ]
        )
        assert all(receipt.duplicate for receipt in receipts)
        assert all(receipt.applied for receipt in receipts)
        assert [receipt.seq for receipt in receipts] == [6, 8, 11, 9]
        assert snapshot(journal.state) == meters
    assert rows_of(played) == rows_before
    assert table_rows(played, "pools") == pools_before
    assert table_rows(played, "payouts") == payouts_before


def test_journal_duplicate_of_a_rejected_event_stays_rejected_even_if_now_acceptable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        refused = journal.append(table_configured("early"))  # its pool does not exist yet
        assert refused.outcome == REJECTED
        journal.append(pool_opened())
    with Journal(path) as journal:
        again = journal.append(table_configured("early"))
        assert again.duplicate
        assert (again.seq, again.outcome, again.reason) == (1, REJECTED, refused.reason)
        assert TABLE not in journal.state.tables
    assert len(rows_of(path)) == 2


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (
            WagerLocked("x", AT, "T9", "r1", 1, "progressive", 100),
            "unknown table 'T9'",
        ),
        (wager("x", "r1", 1, amount=200), "the progressive wager is 100 cents, not 200"),
        (wager("x", "r1", 1, amount=0), "a wager must be above $0"),
        (wager("x", "r1", 8), "table T1 has seats 1 to 6, not 8"),
        (WagerLocked("x", AT, TABLE, "r1", 1, "ace-high", 500), "offers no ace-high wager"),
        (
            settle("x", "r0", {1: ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "9h"]}),
            "duplicate card 9h",
        ),
        (settle("x", "r0", {1: ["9h", "Th", "Jh", "Qh", "Kh", "Ah"]}), "7 cards, got 6"),
        (
            settle("x", "r0", {1: ["2d", "5d", "7s", "9c", "Jd", "Ks", "3c"]}),
            "duplicate card 2d",  # the dealer holds the 2d too
        ),
        (MeterAdjusted("x", AT, POOL, "meter", -5, "tech-3", "   "), "who made it and why"),
        (MeterAdjusted("x", AT, POOL, "meter", -100, "tech-3", "fix"), "below its seed"),
        (HitVerified("x", AT, "nope/1/progressive", "supervisor-7"), "no pending payout"),
        (pool_opened("x"), "already open"),
    ],
    ids=[
        "unknown-table",
        "wrong-denomination",
        "zero-wager",
        "no-such-seat",
        "spot-not-offered",
        "duplicate-card",
        "six-cards",
        "card-shared-with-dealer",
        "adjustment-without-reason",
        "meter-below-seed",
        "verify-unknown-payout",
        "pool-opened-twice",
    ],
)
def test_journal_refused_event_is_journaled_as_rejected_with_reason_and_moves_no_meter(
    tmp_path: Path, event: AnyEvent, reason: str
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r0-w1", "r0", 1))
        before = snapshot(journal.state)
        pools_before = table_rows(path, "pools")
        receipt = journal.append(event)
        assert receipt.outcome == REJECTED
        assert not receipt.applied
        assert reason in receipt.reason
        assert receipt.effects == ()
        assert snapshot(journal.state) == before
    row = rows_of(path)[-1]
    assert (row["event_id"], row["outcome"], row["reason"], row["effects"]) == (
        "x", REJECTED, receipt.reason, "[]",
    )  # fmt: skip
    assert table_rows(path, "pools") == pools_before
    assert table_rows(path, "rounds") == [(TABLE, "r0", '[[1,"progressive",100,"113/4","2","0"]]')]
    report = verify(path)
    assert report.ok, report.problems
    assert report.pools == {POOL: SEED_CENTS + 28}


def test_journal_fault_is_journaled_and_moves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        before = snapshot(journal.state)
        receipt = journal.append(FaultRecorded("f1", AT, "table T1", "link lost", "no heartbeat"))
        assert (receipt.outcome, receipt.effects) == (APPLIED, ())
        assert snapshot(journal.state) == before
    assert rows_of(path)[-1]["kind"] == "fault"
    assert verify(path).ok


# --- replay ---------------------------------------------------------------------------------


def test_journal_replay_from_empty_reproduces_the_exact_meters(played: Path) -> None:
    with Journal(played) as journal:
        journal.append(
            PoolTermsChanged(
                "terms", AT, POOL, PAYTABLE, 1_500_000, Decimal("0.3"), "gm-1", "new season"
            )
        )
        journal.append(wager("r5-w1", "r5", 1))
        journal.append(settle("r5-settle", "r5", {1: STRAIGHT_FLUSH}))  # queued terms apply
        journal.append(wager("r6-w1", "r6", 1))
        shown = {pool_id: pool.meter_cents for pool_id, pool in journal.state.pools.items()}
        stored = snapshot(journal.state)
        pool = journal.state.pools[POOL]
        events = [decode_event(str(row["event"])) for row in journal.rows()]
    assert pool.terms.seed_cents == 1_500_000
    assert pool.meter_cents == 1_500_000 + 30  # the new seed, one 30 % contribution
    report = verify(played)
    assert report.ok, report.problems
    assert report.pools == shown
    replayed = replay(events)
    assert snapshot(replayed) == stored
    assert replayed.pools[POOL].money_in() == replayed.pools[POOL].money_held_or_paid()


# --- two writers ----------------------------------------------------------------------------


def test_journal_second_writer_on_the_same_file_is_caught_up_before_the_next_append(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as first, Journal(path) as second:
        first.append(wager("a-1", "r1", 1))
        assert second.append(wager("b-2", "r1", 2)).seq == 4  # it caught up with the first
        second.append(MeterAdjusted("b-adj", AT, POOL, "meter", 1_000, "tech-3", "sign fix"))
        assert first.state.pools[POOL].wagers_count == 1  # stale until it writes

        receipt = first.append(wager("a-3", "r1", 3))
        assert receipt.seq == 6
        pool = first.state.pools[POOL]
        assert pool.wagers_count == 3
        assert pool.adjustments_cents == 1_000
        assert pool.meter == SEED_CENTS + 1_000 + 3 * Fraction(113, 4)
        assert {wager.seat for wager in first.state.rounds[TABLE, "r1"]} == {1, 2, 3}
        # An event the other writer journaled is a duplicate for this one too.
        assert first.append(wager("b-2", "r1", 2)).duplicate
        assert second.append(wager("a-3", "r1", 3)).duplicate

        second.append(settle("r1-settle", "r1", {1: NOTHING, 2: FIVE_ACES, 3: THIRD}))
        first.append(HitVerified("a-verify", AT, "r1-settle/2/progressive", "supervisor-7"))
        assert first.state.pending == {}
        with Journal(path) as third:
            assert snapshot(third.state) == snapshot(first.state)
    rows = rows_of(path)
    assert [row["seq"] for row in rows] == list(range(1, 9))
    report = verify(path)
    assert report.ok, report.problems


# --- write failures -------------------------------------------------------------------------


def test_journal_locked_database_fails_the_append_and_leaves_state_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.db.execute("PRAGMA busy_timeout=50")
        state, rows = journal.state, rows_of(path)
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN EXCLUSIVE")
            with pytest.raises(JournalError, match="cannot write the journal: database is locked"):
                journal.append(wager("r1-w2", "r1", 2))
            assert journal.state is state
            other.execute("ROLLBACK")
        assert rows_of(path) == rows
        receipt = journal.append(wager("r1-w2", "r1", 2))  # the database is back
        assert (receipt.seq, receipt.applied, receipt.duplicate) == (4, True, False)
    assert verify(path).ok


def test_journal_failure_after_the_journal_row_rolls_back_the_whole_transaction(
    tmp_path: Path,
) -> None:
    """A write that fails half-way (here: the pools table refuses) leaves no journal row.

    docs/journal.md.
    """
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        state, rows, pools = journal.state, rows_of(path), table_rows(path, "pools")
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute(
                "CREATE TRIGGER no_pool_writes BEFORE INSERT ON pools "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        with pytest.raises(
            JournalError, match=r"cannot write the journal: disk full \(simulated\)"
        ):
            journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
        assert journal.state is state
        assert rows_of(path) == rows
        assert table_rows(path, "pools") == pools
        assert table_rows(path, "rounds") == [
            (TABLE, "r1", '[[1,"progressive",100,"113/4","2","0"]]')
        ]

        # A refused event touches no pool: it is still journaled, in its own transaction.
        refused = journal.append(wager("r1-bad", "r1", 4, amount=300))
        assert (refused.seq, refused.outcome) == (4, REJECTED)

        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("DROP TRIGGER no_pool_writes")
        receipts = journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
        assert [(r.seq, r.duplicate) for r in receipts] == [(5, False), (6, False)]
        assert journal.state.pools[POOL].wagers_count == 3
    report = verify(path)
    assert report.ok, report.problems
