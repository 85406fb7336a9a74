"""A supervisor's acknowledgement of the faults journaled: what the ledger takes and refuses.

docs/security.md, "Acknowledging faults", lists each refusal and its test. Each acknowledgement
goes through ``Journal.append`` on a real journal, in memory (the SQLite journal's code without
a file: docs/journal.md, "Backends"): a refusal is journaled as refused and changes nothing,
neither the meters nor the register of faults (controller/ledger/fault_register.py).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import pytest
from support.journal.journal_rig import pool_opened
from support.ledger.approvals import Site

from controller.clock import utc_now as now
from controller.event_base import Binding
from controller.events import ConfigurationApproved, FaultRecorded, FaultsAcknowledged
from controller.ledger.binding import binding_for
from controller.ledger.faults import register_of
from controller.ledger.snapshot import snapshot_text, state_digest, state_from_text
from controller.ledger_journal.memory import MemoryJournal
from controller.ledger_journal.sqlite import Journal
from controller.security import keys
from controller.security.signatures import sign, with_signature

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.journal.location import MemoryLocation
    from controller.ledger.fault_register import FaultRegister
    from controller.ledger.state import LedgerState


@pytest.fixture
def faults_pit(where: MemoryLocation) -> Iterator[Site[MemoryJournal]]:
    """A signed journal with an identity: a manager, two supervisors and one pool."""
    with MemoryJournal(where) as journal:
        site = Site.create(journal)
        approval = ConfigurationApproved(
            f"approval-{uuid.uuid4().hex[:8]}", now(), "digest-1", [pool_opened()], "mgr"
        )
        site.append(site.sign(approval, "mgr"))
        yield site


def fault(site: Site[Any], reason: str = "bad-frame") -> str:
    """Journal one fault, as the daemon's intake does; its event id."""
    event_id = f"fault-{uuid.uuid4()}"
    site.append(FaultRecorded(event_id, now(), "serial:/dev/ttyUSB0", reason, "7e 00 ff"))
    return event_id


def acknowledgement(through: str, count: int, by: str = "sup1") -> FaultsAcknowledged:
    return FaultsAcknowledged(
        f"faults-ack-{uuid.uuid4().hex[:8]}", now(), through, count, "shoe reseated", by
    )


def register(state: LedgerState) -> FaultRegister:
    found = register_of(state)
    assert found is not None
    return found


def refused(site: Site[MemoryJournal], event: FaultsAcknowledged) -> str:
    """Append ``event``: journaled as refused, and no meter, operator or register changed."""
    before = site.journal.state
    receipt = site.journal.append(event)
    assert not receipt.applied, event
    assert receipt.seq > 0  # the refusal is a row of the journal
    after = site.journal.state
    assert (after.pools, after.operators, after.authority) == (
        before.pools,
        before.operators,
        before.authority,
    )
    return receipt.reason


def opened(site: Site[MemoryJournal]) -> str:
    """Two faults journaled and acknowledged by sup1: the register open; the newest's id."""
    fault(site)
    newest = fault(site)
    site.append(site.sign(acknowledgement(newest, 2), "sup1"))
    return newest


def test_a_fault_changes_no_state_until_a_first_acknowledgement_opens_the_register(
    faults_pit: Site[MemoryJournal],
) -> None:
    digest = state_digest(faults_pit.journal.state)
    fault(faults_pit)
    assert state_digest(faults_pit.journal.state) == digest  # older journals keep their digests
    assert "faults" not in snapshot_text(faults_pit.journal.state)


def test_a_supervisor_acknowledges_every_fault_through_the_newest(
    faults_pit: Site[MemoryJournal],
) -> None:
    newest = opened(faults_pit)
    assert register(faults_pit.journal.state) == register(faults_pit.journal.state).__class__(
        journaled=2, newest=newest, acknowledged=2, through=newest, by="sup1"
    )
    fault(faults_pit)
    later = fault(faults_pit)
    waiting = register(faults_pit.journal.state)
    assert (waiting.journaled, waiting.newest, waiting.waiting) == (4, later, 2)
    faults_pit.append(faults_pit.sign(acknowledgement(later, 2, by="sup2"), "sup2"))
    done = register(faults_pit.journal.state)
    assert (done.acknowledged, done.through, done.by, done.waiting) == (4, later, "sup2", 0)


def test_a_manager_may_acknowledge_faults_too(faults_pit: Site[MemoryJournal]) -> None:
    newest = fault(faults_pit)
    faults_pit.append(faults_pit.sign(acknowledgement(newest, 1, by="mgr"), "mgr"))
    assert register(faults_pit.journal.state).by == "mgr"


def test_the_register_is_carried_whole_by_the_snapshot_a_checkpoint_signs(
    faults_pit: Site[MemoryJournal],
) -> None:
    opened(faults_pit)
    fault(faults_pit)
    state = faults_pit.journal.state
    assert state_from_text(snapshot_text(state)) == state


def test_an_unsigned_acknowledgement_is_refused(faults_pit: Site[MemoryJournal]) -> None:
    newest = fault(faults_pit)
    assert "unsigned" in refused(faults_pit, acknowledgement(newest, 1))
    assert register_of(faults_pit.journal.state) is None


def test_a_signature_made_for_another_journal_is_refused(faults_pit: Site[MemoryJournal]) -> None:
    newest = fault(faults_pit)
    event = acknowledgement(newest, 1)
    ours = binding_for(faults_pit.journal.state, event)
    assert ours is not None
    elsewhere = Binding("journal-of-another-pit", ours.target, ours.not_before, ours.not_after)
    signed = with_signature(event, sign(event, "sup1", faults_pit.keys["sup1"], elsewhere))
    assert "journal-of-another-pit, not this one" in refused(faults_pit, signed)  # type: ignore[arg-type]


def test_a_signature_made_before_another_fault_was_journaled_is_stale(
    faults_pit: Site[MemoryJournal],
) -> None:
    opened(faults_pit)
    seen = fault(faults_pit)
    looked_at = faults_pit.journal.state
    newer = fault(faults_pit)
    event = acknowledgement(newer, 2)
    binding = binding_for(looked_at, event)  # signed against the state with ``seen`` newest
    assert binding is not None
    assert seen in binding.target
    signed = with_signature(event, sign(event, "sup1", faults_pit.keys["sup1"], binding))
    assert "the state changed since" in refused(faults_pit, signed)  # type: ignore[arg-type]


def test_an_acknowledgement_through_a_fault_that_is_not_the_newest_is_refused(
    faults_pit: Site[MemoryJournal],
) -> None:
    opened(faults_pit)
    older = fault(faults_pit)
    newest = fault(faults_pit)
    reason = refused(faults_pit, faults_pit.sign(acknowledgement(older, 2), "sup1"))
    assert f"{older} is not the newest fault waiting ({newest} is)" in reason


def test_an_acknowledgement_of_a_fault_acknowledged_already_is_refused(
    faults_pit: Site[MemoryJournal],
) -> None:
    newest = opened(faults_pit)
    reason = refused(faults_pit, faults_pit.sign(acknowledgement(newest, 2, by="sup2"), "sup2"))
    assert f"fault {newest} was acknowledged already (by sup1)" in reason


def test_an_acknowledgement_that_miscounts_the_faults_waiting_is_refused(
    faults_pit: Site[MemoryJournal],
) -> None:
    opened(faults_pit)
    fault(faults_pit)
    newest = fault(faults_pit)
    assert "says 1 fault(s), and 2 wait" in refused(
        faults_pit, faults_pit.sign(acknowledgement(newest, 1), "sup1")
    )


def test_a_person_not_enrolled_cannot_acknowledge_faults(faults_pit: Site[MemoryJournal]) -> None:
    newest = fault(faults_pit)
    faults_pit.keys["visitor"] = keys.generate()
    event = acknowledgement(newest, 1, by="visitor")
    assert "'visitor' is not an enrolled operator" in refused(
        faults_pit, faults_pit.sign(event, "visitor")
    )


def test_an_acknowledgement_signed_by_another_than_it_names_is_refused(
    faults_pit: Site[MemoryJournal],
) -> None:
    newest = fault(faults_pit)
    event = acknowledgement(newest, 1, by="sup2")
    assert "by 'sup2', who did not sign it" in refused(faults_pit, faults_pit.sign(event, "sup1"))


def test_an_acknowledgement_without_a_note_is_refused(faults_pit: Site[MemoryJournal]) -> None:
    newest = fault(faults_pit)
    event = FaultsAcknowledged(f"faults-ack-{uuid.uuid4().hex[:8]}", now(), newest, 1, " ", "sup1")
    assert "needs a note" in refused(faults_pit, faults_pit.sign(event, "sup1"))


def test_a_journal_file_reopened_reads_the_register_back_and_replays_to_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        site = Site.create(journal)
        newest = fault(site)
        site.append(site.sign(acknowledgement(newest, 1), "sup1"))
        fault(site)
        written = journal.state
    with Journal(path) as reopened:
        assert reopened.state.authority == written.authority  # the materialized register
        report = reopened.verify()
        assert report.ok, report.problems
        assert register(reopened.state).waiting == 1
