"""The journal port's contract (docs/journal.md, "The port"): the start-up check and the reader.

Run against every backend (tests/journal/contract/conftest.py): the start-up check passes the
stored state the rows give and names one edited without a row or behind its signed head, and the
read-only reader gives what the writer journaled; a checkpoint of the journal's domain's snapshot is
where the start-up check replays from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.journal.journal_contract import HIT, Backend, play_hit_round
from support.journal.journal_rig import AT, POOL, snapshot, wager

from controller.journal.backends import backend_for
from controller.journal.checkpoints import seal
from controller.journal.high_water import sign_head
from controller.journal.readonly import PayFilter
from controller.ledger.domain import LEDGER
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from controller.ledger_journal import LedgerJournal


# --- the start-up check and the read-only reader -----------------------------------------------


def test_journal_contract_the_start_up_check_passes_the_stored_state_the_rows_give(
    backend_journal: LedgerJournal,
) -> None:
    play_hit_round(backend_journal)
    key = ControllerKey.generate()
    held = sign_head(key, "controller-1", "", backend_journal.head, AT)
    check = backend_journal.check_state(key, held)
    assert check.ok, check.problems
    assert check.replayed == backend_journal.head[0]


def test_journal_contract_the_start_up_check_names_a_pools_stored_state_edited_without_a_row(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    play_hit_round(backend_journal)
    backend_journal.close()
    edited = "UPDATE pools SET state = replace(state, '\"hits_count\":1', '\"hits_count\":0')"
    assert backend.intrude(edited) == 1
    reopened = backend.open()
    try:
        check = reopened.check_state(ControllerKey.generate())
        assert not check.ok
        assert any(POOL in problem for problem in check.problems), check.problems
    finally:
        reopened.close()


def test_journal_contract_the_start_up_check_refuses_a_journal_behind_its_signed_head(
    backend_journal: LedgerJournal,
) -> None:
    key = ControllerKey.generate()
    seq, _ = backend_journal.head
    ahead = sign_head(key, "controller-1", "", (seq + 5, "ab" * 32), AT)
    (went_back,) = backend_journal.check_state(key, ahead).problems
    assert "the journal went back" in went_back
    rewritten = sign_head(key, "controller-1", "", (seq, "ab" * 32), AT)
    (problem,) = backend_journal.check_state(key, rewritten).problems
    assert "the journal was rewritten" in problem


def test_journal_contract_the_reader_gives_what_the_writer_journaled_and_writes_nothing(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    play_hit_round(backend_journal)
    with backend_for(backend.location, LEDGER).reader() as reader:
        assert reader.path == backend.location
        assert snapshot(reader.state) == snapshot(backend_journal.state)
        rows = list(reader.rows())
        assert [row["seq"] for row in rows] == list(range(1, backend_journal.head[0] + 1))
        assert (rows[-1]["seq"], rows[-1]["hash"]) == backend_journal.head
        assert [seq for seq, _ in reader.provenances()] == [row["seq"] for row in rows]
        (pending,) = reader.pays(PayFilter(kinds=("progressive",), pending_only=True))
        assert (pending.payout.payout_id, pending.payout.status) == (HIT, "pending")
        every = reader.pays(PayFilter(kinds=("all",)))  # a pay: an amount won
        won = [payout for _, _, payout in backend_journal.payouts_since(0) if payout.win_cents > 0]
        assert sorted(record.payout.payout_id for record in every) == sorted(
            payout.payout_id for payout in won
        )
        assert [record.seq for record in every] == sorted(
            (record.seq for record in every), reverse=True
        )
    assert backend_journal.committed_seq() == backend_journal.head[0]
    assert backend_journal.append(wager("r3-w1", "r3", 1)).seq == backend_journal.head[0]


def test_journal_contract_start_up_replays_from_a_checkpoint_of_its_domains_snapshot(
    backend_journal: LedgerJournal,
) -> None:
    play_hit_round(backend_journal)
    domain, key = backend_journal.domain, ControllerKey.generate()
    state, head = backend_journal.state, backend_journal.head
    sealed = seal(key, "controller-1", state, head, AT, domain=domain)
    assert sealed.snapshot == domain.snapshot_text(state)
    assert sealed.event.state_digest == domain.state_digest(state)
    backend_journal.append_many([sealed.event], snapshot=sealed)
    check = backend_journal.check_state(key)
    assert check.ok, check.problems
    assert check.checkpoint is not None
    assert check.checkpoint.event.head_seq == head[0]
    assert check.replayed == 1  # the checkpoint's own row: the rows it covers are not replayed


def test_journal_contract_the_reader_gives_each_row_with_its_event_and_the_kept_snapshots(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    """What ``journal copy`` reads of its source, whichever backend holds it."""
    play_hit_round(backend_journal)
    state, head = backend_journal.state, backend_journal.head
    sealed = seal(ControllerKey.generate(), "controller-1", state, head, AT, domain=LEDGER)
    backend_journal.append_many([sealed.event], snapshot=sealed)
    with backend_for(backend.location, LEDGER).reader() as reader:
        read = list(reader.read())
        assert [row.values for row in read] == list(reader.rows())
        assert all(row.event is not None and not row.form for row in read)
        assert read[-1].event == sealed.event
        assert [row.values["seq"] for row in reader.read(after=len(read) - 2)] == [
            len(read) - 1, len(read),
        ]  # fmt: skip
        (kept,) = reader.snapshots()
        assert (kept.seq, kept.head_seq, kept.state) == (
            len(read), sealed.event.head_seq, sealed.snapshot,
        )  # fmt: skip
