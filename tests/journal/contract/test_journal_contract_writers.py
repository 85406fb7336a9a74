"""The journal port's contract (docs/journal.md, "The port"): where, who writes, and the fence.

Run against every backend (tests/journal/contract/conftest.py): the location a journal names,
the sequencer's fence (taken on a shared store only), each row's provenance, and a live append
refusing a signature whose window has passed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.journal.journal_rig import snapshot, wager
from support.ledger.approvals import Site, enrollment

from controller.clock import utc_now
from controller.events import SequencerTookOver
from controller.journal.backends import backend_for
from controller.journal.postgres.fence import Fence
from controller.ledger.domain import LEDGER
from controller.ledger.screen import LATE_SIGNATURE
from controller.provenances import DAEMON
from controller.security import keys

if TYPE_CHECKING:
    from support.journal.journal_contract import Backend

    from controller.ledger_journal import LedgerJournal


# --- where, who writes, and the sequencer's fence ----------------------------------------------


def test_journal_contract_path_names_the_location_it_was_opened_at(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    assert backend_journal.path == backend.location


def test_journal_contract_a_journal_opened_without_a_fence_leads_at_epoch_0_with_no_lease(
    backend_journal: LedgerJournal,
) -> None:
    assert (backend_journal.epoch, backend_journal.took_over, backend_journal.lease_renewal_s) == (
        0,
        None,
        None,
    )
    assert backend_journal.leading
    head = backend_journal.head
    backend_journal.renew()  # nothing to renew: no row, no state moves
    assert (backend_journal.head, backend_journal.leading) == (head, True)


def test_journal_contract_the_sequencers_journal_takes_the_fence_of_a_shared_store_only(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    sequenced = backend_for(backend.location, LEDGER).open_sequenced(Fence("node-1", lease_s=5.0))
    try:
        assert sequenced.leading
        if backend.shared:
            # The first takeover: epoch 1, journaled by the service as its first row.
            assert sequenced.epoch == 1
            took = sequenced.took_over
            assert isinstance(took, SequencerTookOver)
            assert (took.node, took.epoch) == ("node-1", 1)
            renewal = sequenced.lease_renewal_s
            assert renewal is not None
            assert 0 < renewal < 5.0
            assert sequenced.append(took).applied
            sequenced.renew()
            assert sequenced.leading
        else:
            # One writer: no fence to take, no lease to renew.
            assert (sequenced.epoch, sequenced.took_over, sequenced.lease_renewal_s) == (
                0,
                None,
                None,
            )
            sequenced.renew()
        assert sequenced.append(wager("r1-w1", "r1", 1)).seq == backend_journal.head[0] + 1 + (
            1 if backend.shared else 0
        )
    finally:
        sequenced.close()


def test_journal_contract_each_row_keeps_its_provenance_the_writers_unless_named(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    backend_journal.writer = "cli contract"
    unnamed = backend_journal.append(wager("r1-w1", "r1", 1))
    named = backend_journal.append_many(
        [wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)], provenance=[DAEMON, "cli submit"]
    )
    with backend_for(backend.location, LEDGER).reader() as reader:
        kept = dict(reader.provenances())
    assert [kept[receipt.seq] for receipt in (unnamed, *named)] == [
        "cli contract",
        DAEMON,
        "cli submit",
    ]


def test_journal_contract_a_live_append_refuses_a_signature_whose_window_has_passed(
    backend: Backend,
) -> None:
    journal = backend.open()
    try:
        site = Site.create(journal)
        later = enrollment("sup3", "supervisor", keys.generate(), "mgr")
        signed = site.sign(later, "mgr")
        before = snapshot(journal.state)
        journal.live_clock = lambda: "2099-01-01T00:00:00.000Z"  # the controller's clock, late
        refused = journal.append(signed)
        assert not refused.applied
        assert LATE_SIGNATURE in refused.event_id
        assert "a signature is taken only within its window" in refused.reason
        assert snapshot(journal.state) == before
        journal.live_clock = utc_now
        assert journal.append(site.sign(later, "mgr")).applied
    finally:
        journal.close()


def test_journal_contract_a_reader_gives_the_rows_after_one_already_read(
    backend: Backend, backend_journal: LedgerJournal
) -> None:
    """What the console's faults panel reads as it keeps up (controller/journal/fault_rows.py)."""
    backend_journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    with backend_for(backend.location, LEDGER).reader() as reader:
        every = list(reader.rows())
        after = list(reader.rows(2))
        beyond = list(reader.rows(int(every[-1]["seq"])))
    assert [int(row["seq"]) for row in every] == list(range(1, len(every) + 1))
    assert after == every[2:]  # the same canonical rows, from row 3 on
    assert beyond == []
