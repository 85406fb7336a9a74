"""The journal port's contract (docs/journal.md, "The port"): its reads, verify and reopening.

Run against every backend (tests/journal/contract/conftest.py): the payouts, hits and device
highs read as appended, a verified hit leaves the pending reads, and a reopened journal gives
back its state, head, highs and reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.journal.journal_contract import HIT, Backend, bet_sensed, play_hit_round
from support.journal.journal_rig import AT, POOL, TABLE, snapshot, wager

from controller.events import HitVerified

if TYPE_CHECKING:
    from controller.ledger_journal import LedgerJournal


# --- reads -------------------------------------------------------------------------------------


def test_journal_contract_reads_return_the_payouts_as_appended(
    backend_journal: LedgerJournal,
) -> None:
    play_hit_round(backend_journal)
    (pending,) = backend_journal.pending_payouts()
    assert (pending.payout_id, pending.table_id, pending.seat, pending.line) == (
        HIT,
        TABLE,
        3,
        "five-aces",
    )
    assert pending.win_cents > 0
    assert backend_journal.oldest_pending_at() == pending.at
    (hit,) = backend_journal.hits()
    assert (hit.payout_id, hit.pool_id, hit.win_cents) == (HIT, POOL, pending.win_cents)
    assert backend_journal.count_payouts(excluding_kind="envy") == 4
    (record,) = backend_journal.verification_records(pending_only=True)
    assert (record.payout.payout_id, record.payout.status, record.verified_by) == (
        HIT,
        "pending",
        None,
    )
    assert backend_journal.verification_records(pool_id="no-such-pool") == []


def test_journal_contract_a_verified_hit_leaves_the_pending_reads(
    backend_journal: LedgerJournal,
) -> None:
    play_hit_round(backend_journal)
    verified = backend_journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7"))
    assert verified.applied
    assert backend_journal.pending_payouts() == []
    assert backend_journal.oldest_pending_at() is None
    assert backend_journal.verification_records(pending_only=True) == []
    (record,) = backend_journal.verification_records(pool_id=POOL)
    assert (record.payout.status, record.verified_by, record.verified_seq) == (
        "paid",
        "supervisor-7",
        verified.seq,
    )
    assert [hit.payout_id for hit in backend_journal.hits(newest_first=True, limit=1)] == [HIT]
    (last,) = backend_journal.last_verified(5)
    assert (last.payout.payout_id, last.verified_by, last.verified_seq) == (
        HIT, "supervisor-7", verified.seq,
    )  # fmt: skip
    assert backend_journal.last_verified(0) == []


def test_journal_contract_payouts_since_a_row_are_given_as_made_for_a_sink_catching_up(
    backend_journal: LedgerJournal,
) -> None:
    play_hit_round(backend_journal)
    made = backend_journal.payouts_since(0)
    assert len(made) == backend_journal.count_payouts(excluding_kind="envy") == 4
    assert [seq for seq, _, _ in made] == sorted(seq for seq, _, _ in made)
    hit_seq = next(seq for seq, _, payout in made if payout.payout_id == HIT)
    backend_journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7"))
    # Verified since, the hit is still given as it was made: pending.
    since = backend_journal.payouts_since(hit_seq - 1)
    assert {seq for seq, _, _ in since} == {hit_seq}
    (again,) = [payout for _, _, payout in since if payout.payout_id == HIT]
    assert (again.payout_id, again.status) == (HIT, "pending")
    assert backend_journal.payouts_since(backend_journal.head[0]) == []


def test_journal_contract_device_highs_keep_each_devices_highest_seq(
    backend_journal: LedgerJournal,
) -> None:
    assert backend_journal.device_highs() == {}
    backend_journal.append_many([bet_sensed(1), bet_sensed(3), bet_sensed(2)])
    backend_journal.append(bet_sensed(7, device="sensor-2"))
    assert backend_journal.device_highs() == {(TABLE, "sensor-1"): 3, (TABLE, "sensor-2"): 7}


# --- verify and reopen -------------------------------------------------------------------------


def test_journal_contract_verify_passes_a_clean_journal_at_its_head(
    backend_journal: LedgerJournal,
) -> None:
    play_hit_round(backend_journal)
    report = backend_journal.verify()
    assert report.ok, report.problems
    assert report.head == backend_journal.head
    assert report.rows == backend_journal.committed_seq()


def test_journal_contract_reopening_restores_state_head_highs_and_reads(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    play_hit_round(backend_journal)
    backend_journal.append(bet_sensed(5))
    before = (
        snapshot(backend_journal.state),
        backend_journal.head,
        backend_journal.device_highs(),
        backend_journal.pending_payouts(),
        backend_journal.hits(),
    )
    assert backend_journal.state.pending  # the hit awaits verification across the restart
    backend_journal.close()
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
