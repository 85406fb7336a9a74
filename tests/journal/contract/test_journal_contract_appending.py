"""The journal port's contract (docs/journal.md, "The port"): appending, and prepare, commit, adopt.

Run against every backend (tests/journal/contract/conftest.py): each appended event takes the next
row, a refused, duplicate or conflicting one moves no money, and a failed write changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import POOL, snapshot, wager

from controller.journal import JournalError
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from support.journal.journal_contract import Backend

    from controller.ledger_journal import LedgerJournal


# --- appending ---------------------------------------------------------------------------------


def test_journal_contract_each_appended_event_takes_the_next_row_and_moves_the_state(
    backend_journal: LedgerJournal,
) -> None:
    receipts = backend_journal.append_many([wager("r1-w1", "r1", 1), wager("r1-w2", "r1", 2)])
    assert [(r.seq, r.outcome, r.duplicate) for r in receipts] == [
        (3, APPLIED, False),
        (4, APPLIED, False),
    ]
    assert backend_journal.state.pools[POOL].wagers_count == 2
    assert backend_journal.head[0] == backend_journal.committed_seq() == 4


def test_journal_contract_a_refused_event_is_journaled_and_moves_no_money(
    backend_journal: LedgerJournal,
) -> None:
    before = snapshot(backend_journal.state)
    receipt = backend_journal.append(wager("w-unknown-seat", "r1", 99))
    assert (receipt.seq, receipt.outcome, receipt.applied) == (3, REJECTED, False)
    assert receipt.reason
    assert snapshot(backend_journal.state) == before


def test_journal_contract_a_duplicate_is_acknowledged_with_its_first_outcome_and_not_applied(
    backend_journal: LedgerJournal,
) -> None:
    first = backend_journal.append(wager("r1-w1", "r1", 1))
    again = backend_journal.append(wager("r1-w1", "r1", 1))
    assert (again.seq, again.outcome, again.duplicate) == (first.seq, first.outcome, True)
    assert again.effects == first.effects
    assert backend_journal.state.pools[POOL].wagers_count == 1
    assert backend_journal.head[0] == first.seq


def test_journal_contract_an_id_reused_for_other_content_is_a_fault_that_moves_no_money(
    backend_journal: LedgerJournal,
) -> None:
    backend_journal.append(wager("r1-w1", "r1", 1))
    before = snapshot(backend_journal.state)
    reused = backend_journal.append(wager("r1-w1", "r1", 2, amount=500))
    # What is journaled is the fault, under an id of its own; the reused id keeps its event.
    assert reused.conflict
    assert reused.event_id.startswith("r1-w1#conflict-")
    assert (reused.seq, reused.effects) == (4, ())
    assert snapshot(backend_journal.state) == before
    assert backend_journal.append(wager("r1-w1", "r1", 1)).duplicate


# --- prepare, commit, adopt --------------------------------------------------------------------


def test_journal_contract_prepared_events_reach_the_state_only_when_adopted_after_commit(
    backend_journal: LedgerJournal,
) -> None:
    state, head = backend_journal.state, backend_journal.head
    prepared = backend_journal.prepare([wager("r1-w1", "r1", 1)])
    assert (backend_journal.state, backend_journal.head) == (state, head)
    with pytest.raises(JournalError, match="must be committed"):
        backend_journal.adopt(prepared)
    prepared.commit()
    assert prepared.committed
    (receipt,) = backend_journal.adopt(prepared)
    assert prepared.receipts == [receipt]
    assert (receipt.seq, receipt.applied) == (3, True)
    assert backend_journal.head[0] == 3
    assert backend_journal.state.pools[POOL].wagers_count == 1


def test_journal_contract_a_failed_write_leaves_journal_and_state_unchanged(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    backend_journal.append(wager("r1-w1", "r1", 1))
    state, head, rows = backend_journal.state, backend_journal.head, backend_journal.committed_seq()
    with backend.failing_writes(), pytest.raises(JournalError, match="disk full"):
        backend_journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    assert (backend_journal.state, backend_journal.head, backend_journal.committed_seq()) == (
        state,
        head,
        rows,
    )
    receipts = backend_journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    assert [(r.seq, r.duplicate) for r in receipts] == [(4, False), (5, False)]
    assert backend_journal.verify().ok
