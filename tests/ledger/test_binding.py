"""A signature binds to its journal, its target and its moment; a signed action applies once, ever.

docs/security.md, "Bound signatures". Each test is an attack a review reproduced with real
signatures in the wrong place: copied into another controller's journal where the same people
are enrolled, applied again after its row was archived, or applied to a later state than the one
it was signed against. Every one goes through ``Journal.append`` on a real journal file, which is
what ``jackpotd apply`` and every other entry path reach.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import (
    AT,
    FIVE_ACES,
    POOL,
    checkpoint,
    opened_journal,
    pool_opened,
    settle,
    table_configured,
    wager,
)
from support.ledger.approvals import Site, enrollment, now
from support.widearea.site_chains import WAGER, LinkedProperty

from controller.event_base import Binding
from controller.events import (
    ConfigurationApproved,
    HitVerified,
    MeterAdjusted,
    PoolTermsChanged,
    TableConfigured,
)
from controller.ledger.binding import MAX_WINDOW, target_of
from controller.ledger.snapshot import state_digest
from controller.ledger_journal.sqlite import Journal, archive, verify
from controller.security import keys
from controller.security.signatures import sign, signatures_of, with_signature
from controller.wide_events import SiteResumed

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.security.controller_key import ControllerKey


def _configured(site: Site) -> None:
    table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
    approval = ConfigurationApproved(
        f"approval-{uuid.uuid4().hex[:8]}", now(), "digest-1", [pool_opened(), table], "mgr",
        dual_control_cents=100_000, lockout_after=3,
    )  # fmt: skip
    site.append(site.sign(approval, "mgr"))


@pytest.fixture
def pit_a(tmp_path: Path) -> Iterator[Site]:
    """Controller A: a manager and two supervisors, one pool, one table."""
    with Journal(tmp_path / "a.db") as journal:
        site = Site.create(journal)
        _configured(site)
        yield site


@pytest.fixture
def pit_b(tmp_path: Path, pit_a: Site) -> Iterator[Site]:
    """Controller B: the very same people, enrolled with the very same keys."""
    with Journal(tmp_path / "b.db") as journal:
        site = Site(journal, dict(pit_a.keys))
        first = enrollment("mgr", "manager", site.keys["mgr"], "mgr")
        site.append(site.sign(first, "mgr"))
        for name in ("sup1", "sup2"):
            event = enrollment(name, "supervisor", site.keys[name], "mgr")
            site.append(site.sign(event, "mgr"))
        _configured(site)
        yield site


def refused(site: Site, event: AnyEvent) -> str:
    """Append ``event``: refused, and no meter, payout or operator changed. The reason."""
    before = site.journal.state
    receipt = site.journal.append(event)
    assert not receipt.applied, event
    after = site.journal.state
    assert (after.pools, after.pending, after.operators) == (
        before.pools,
        before.pending,
        before.operators,
    )
    return receipt.reason


def adjustment(site: Site, cents: int = 5_000) -> MeterAdjusted:
    """A dual-signed correction of the meter, signed against ``site`` as it stands."""
    event = MeterAdjusted(
        f"adjust-{uuid.uuid4().hex[:8]}", now(), POOL, "meter", cents, "sup1", "count error"
    )
    return site.sign(event, "sup1", "sup2")


def pending_hit(site: Site) -> str:
    """A progressive hit awaiting verification (five aces pays the meter: pending)."""
    round_id = f"r-{uuid.uuid4().hex[:6]}"
    site.append(site.sign(wager(f"{round_id}-w", round_id, 1), "sup1"))
    site.append(site.sign(settle(f"{round_id}-s", round_id, {1: FIVE_ACES}), "sup1"))
    (payout_id,) = site.journal.state.pending
    return payout_id


def test_each_journal_has_its_own_identity_made_at_its_first_enrollment(
    pit_a: Site, pit_b: Site
) -> None:
    a, b = pit_a.journal.state.binding, pit_b.journal.state.binding
    assert a is not None
    assert b is not None
    assert a.journal != b.journal
    assert a.journal.startswith("journal-")


def test_a_dual_signed_adjustment_copied_into_another_controllers_journal_is_refused(
    pit_a: Site, pit_b: Site
) -> None:
    event = adjustment(pit_a)
    assert pit_a.journal.append(event).applied
    reason = refused(pit_b, event)
    assert "for journal" in reason
    assert "not this one" in reason


def test_an_enrollment_copied_into_another_controllers_journal_is_refused(
    pit_a: Site, pit_b: Site
) -> None:
    mallory = keys.generate()
    event = pit_a.sign(enrollment("mallory", "supervisor", mallory, "mgr"), "mgr")
    assert pit_a.journal.append(event).applied
    assert "for journal" in refused(pit_b, event)
    assert "mallory" not in pit_b.journal.state.operators


def test_a_signed_action_is_applied_once_ever_even_under_a_new_event_id_it_cannot_move(
    pit_a: Site,
) -> None:
    event = adjustment(pit_a)
    assert pit_a.journal.append(event).applied
    # The same id again: the journal's own idempotence answers it, nothing moves.
    before = pit_a.journal.state.pools[POOL]
    pit_a.journal.append(event)
    assert pit_a.journal.state.pools[POOL] == before
    # The same signatures under another id do not verify: the id is signed.
    moved = msgspec.structs.replace(event, event_id="adjust-again")
    assert "does not verify" in refused(pit_a, moved)


def test_a_signed_adjustment_is_refused_after_its_row_was_archived(
    tmp_path: Path, key: ControllerKey
) -> None:
    """Archiving moves rows out of the live journal; the ledger still knows the id was applied."""
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        site = Site.create(journal)
        _configured(site)
        event = adjustment(site)
        assert journal.append(event).applied
        adjusted = journal.state.pools[POOL].adjustments_cents
        assert event.event_id in (journal.state.binding.applied if journal.state.binding else ())
        checkpoint(journal, key)
        head = journal.head[0]
    public = (key.public_key,)
    segments = archive(path, tmp_path / "archive", rows=head, keys=public, now=now())
    assert segments
    with Journal(path) as journal:
        site = Site(journal, site.keys)
        reason = refused(site, event)
        assert "applied before" in reason
        assert journal.state.pools[POOL].adjustments_cents == adjusted
    report = verify(path, keys=public, archives=tmp_path / "archive")
    assert report.ok, report.problems


def test_the_record_of_applied_signed_events_survives_a_restart_from_the_tables(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        site = Site.create(journal)
        _configured(site)
        event = adjustment(site)
        assert journal.append(event).applied
        digest = state_digest(journal.state)
    with Journal(path) as journal:
        assert state_digest(journal.state) == digest
        binding = journal.state.binding
        assert binding is not None
        assert event.event_id in binding.applied


def test_a_verification_signed_for_one_payout_amount_is_stale_once_the_payout_differs(
    pit_a: Site,
) -> None:
    payout_id = pending_hit(pit_a)
    unsigned = HitVerified(f"verify-{uuid.uuid4().hex[:6]}", now(), payout_id, "sup1")
    binding = Binding(
        pit_a.journal.state.binding.journal if pit_a.journal.state.binding else "",
        f"payout/{payout_id}/1",  # signed as if the pay were one cent
        "2020-01-01T00:00:00.000Z",
        "2020-01-01T00:10:00.000Z",
    )
    signed: AnyEvent = msgspec.structs.replace(unsigned, at="2020-01-01T00:05:00.000Z")
    for name in ("sup1", "sup2"):
        signed = with_signature(signed, sign(signed, name, pit_a.keys[name], binding))
    reason = refused(pit_a, signed)
    assert "signed it against payout/" in reason
    assert "the state changed since" in reason


def test_a_correction_signed_before_another_was_applied_is_stale(pit_a: Site) -> None:
    first, second = adjustment(pit_a), adjustment(pit_a, 2_500)
    assert pit_a.journal.append(first).applied
    assert "the state changed since" in refused(pit_a, second)


def test_a_change_of_terms_signed_against_an_earlier_revision_is_stale(pit_a: Site) -> None:
    pool = pit_a.journal.state.pools[POOL]
    terms = PoolTermsChanged(
        f"terms-{uuid.uuid4().hex[:6]}", now(), POOL, pool.terms.paytable, 200_000,
        Decimal("0.05"), "mgr", "new seed", apply_now=True,
    )  # fmt: skip
    later = msgspec.structs.replace(terms, event_id=f"{terms.event_id}-2", seed_cents=300_000)
    first, stale = pit_a.sign(terms, "mgr"), pit_a.sign(later, "mgr")
    assert pit_a.journal.append(first).applied
    assert "the state changed since" in refused(pit_a, stale)


def test_an_unbound_signature_is_refused_on_a_journal_that_has_an_identity(pit_a: Site) -> None:
    """The first form of signature (event alone) is what an old journal holds: not valid here."""
    event: AnyEvent = MeterAdjusted(
        f"adjust-{uuid.uuid4().hex[:8]}", now(), POOL, "meter", 5_000, "sup1", "count error"
    )
    for name in ("sup1", "sup2"):
        event = with_signature(event, sign(event, name, pit_a.keys[name]))
    assert "not bound to this journal" in refused(pit_a, event)


def _bound(site: Site, event: MeterAdjusted, not_before: str, not_after: str) -> AnyEvent:
    identity = site.journal.state.binding
    assert identity is not None
    binding = Binding(identity.journal, target_of(site.journal.state, event), not_before, not_after)
    signed: AnyEvent = event
    for name in ("sup1", "sup2"):
        signed = with_signature(signed, sign(signed, name, site.keys[name], binding))
    return signed


def test_a_signature_outside_its_window_is_refused(pit_a: Site) -> None:
    event = MeterAdjusted("adjust-late", AT, POOL, "meter", 5_000, "sup1", "count error")
    late = _bound(pit_a, event, "2024-05-01T11:00:00.000Z", "2024-05-01T11:30:00.000Z")
    assert "not at 2024-05-01T12:00:00Z" in refused(pit_a, late)


def test_a_window_longer_than_the_most_a_signature_may_last_is_refused(pit_a: Site) -> None:
    event = MeterAdjusted("adjust-forever", AT, POOL, "meter", 5_000, "sup1", "count error")
    forever = _bound(pit_a, event, "2024-05-01T11:00:00.000Z", "2099-01-01T00:00:00.000Z")
    reason = refused(pit_a, forever)
    assert f"at most {int(MAX_WINDOW.total_seconds() // 60)} minutes" in reason


def test_the_signers_binding_is_covered_by_the_signature(pit_a: Site) -> None:
    """Moving a signature to another target or window by editing the binding breaks it."""
    event = adjustment(pit_a)
    (first, second) = signatures_of(event)
    assert not isinstance(first.binding, msgspec.UnsetType)
    widened = msgspec.structs.replace(first.binding, not_after="2099-01-01T00:00:00.000Z")
    edited = msgspec.structs.replace(
        event, signatures=[msgspec.structs.replace(first, binding=widened), second]
    )
    assert "does not verify" in refused(pit_a, edited)


def test_a_table_configuration_inside_a_copied_approval_does_not_configure_another_journal(
    pit_a: Site, pit_b: Site
) -> None:
    table = msgspec.structs.replace(
        table_configured("table-2", "T2"), envy_includes_dealer=False, pool_id=POOL
    )
    assert isinstance(table, TableConfigured)
    state = pit_a.journal.state
    approval = ConfigurationApproved(
        "approval-copied", now(), "digest-2", [table], "mgr",
        dual_control_cents=100_000, lockout_after=3,
    )  # fmt: skip
    signed = pit_a.sign(approval, "mgr")
    assert pit_a.journal.append(signed).applied
    assert "T2" in pit_a.journal.state.tables
    assert state.revision < pit_a.journal.state.revision
    assert "for journal" in refused(pit_b, signed)
    assert "T2" not in pit_b.journal.state.tables


def test_a_resumption_signed_for_one_halt_does_not_end_a_later_halt_of_the_link(
    tmp_path: Path,
) -> None:
    """docs/wide-area.md, "A halted link": a resumption ends the halt it was signed for."""
    with opened_journal(tmp_path / "central.db") as journal:
        site = Site.create(journal)
        boardwalk = LinkedProperty("boardwalk")
        site.append(site.sign(boardwalk.linked(), "mgr"))

        def halted() -> bool:  # read afresh: each append changes the journal's state
            return bool(journal.state.sites["boardwalk"].link.halted)

        for event in boardwalk.contributions(1, 2):
            site.append(event)
        site.append(boardwalk.reported(wager_cents=WAGER))  # one wager short: halted
        assert halted()

        def resumption(event_id: str) -> SiteResumed:
            event = SiteResumed(event_id, now(), "boardwalk", "mgr", "totals fixed, ticket 5120")
            return site.sign(event, "mgr")

        held_back, used = resumption("resume-held"), resumption("resume-used")
        site.append(used)
        assert not halted()
        for event in boardwalk.contributions(3, 2):
            site.append(event)
        site.append(boardwalk.reported(wager_cents=3 * WAGER))  # short again: a second halt
        assert halted()
        reason = site.journal.append(held_back).reason
        assert "the state changed since" in reason
        assert halted()
