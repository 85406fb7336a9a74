"""Authority lives in the ledger: every attack through ``Journal.append`` is refused.

``Journal.append`` is what ``jackpotd apply`` and every other entry path reach; each attack is
refused once a site's authority is signed.

Each test is an attack found in review, on a real journal file: an unsigned or forged
privileged event, a signature moved to another event, one operator posing as two, a locked-out
operator, a configuration change outside a manager's approval (docs/security.md).
"""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from typing import TYPE_CHECKING, TypeVar

import msgspec
import pytest
from support.journal.journal_rig import (
    FIVE_ACES,
    NOTHING,
    POOL,
    TABLE,
    pool_opened,
    settle,
    table_configured,
    wager,
)
from support.ledger.approvals import Site, enrollment, now

from controller.events import (
    AuthenticationFailed,
    ConfigurationApproved,
    HitVerified,
    ManifestApproved,
    MeterAdjusted,
    OperatorEnrolled,
    OperatorRevoked,
    OperatorUnlocked,
    PoolOpened,
    PoolTermsChanged,
    Signature,
    TableConfigured,
)
from controller.ledger_journal.sqlite import Journal
from controller.security import keys
from controller.security.signatures import sign, signatures_of, signed_bytes

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent

E = TypeVar("E", bound="AnyEvent")


def no_dealer_envy(event: TableConfigured) -> TableConfigured:
    """``event`` as every configuration writes it: Envy never on the dealer's hand (§ 688a.1)."""
    return msgspec.structs.replace(event, envy_includes_dealer=False)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """A signed site with one pool and one table, approved by the manager."""
    with Journal(tmp_path / "journal.db") as journal:
        site = Site.create(journal)
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", [pool_opened(), no_dealer_envy(table_configured())],
            "mgr", dual_control_cents=100_000, lockout_after=3,
        )  # fmt: skip
        site.append(site.sign(approval, "mgr"))
        yield site


def failed_attempt(site: Site, name: str) -> AuthenticationFailed:
    """A wrong passphrase typed for ``name``'s own key file, as the command line journals it."""
    public_key = keys.public_key_text(site.keys[name])
    return AuthenticationFailed(f"af-{uuid.uuid4()}", now(), name, "adjust", public_key=public_key)


def refused(site: Site, event: AnyEvent) -> str:
    """Append ``event``; it must be refused and change nothing. The reason."""
    before = site.journal.state
    receipt = site.journal.append(event)
    assert not receipt.applied, event
    assert site.journal.state.pools == before.pools
    assert site.journal.state.pending == before.pending
    assert site.journal.state.operators.keys() == before.operators.keys()
    return receipt.reason


def pending_hit(site: Site) -> str:
    """A progressive hit awaiting verification (five aces pays the meter: pending)."""
    round_id = f"r-{uuid.uuid4().hex[:6]}"
    site.append(site.sign(wager(f"{round_id}-w", round_id, 1), "sup1"))
    site.append(site.sign(settle(f"{round_id}-s", round_id, {1: FIVE_ACES}), "sup1"))
    (payout_id,) = site.journal.state.pending
    return payout_id


def anew(event: E) -> E:
    """The same event under a new id: a refused event's id is spent (journaled as refused)."""
    return msgspec.structs.replace(event, event_id=f"{event.event_id}-{uuid.uuid4().hex[:6]}")


def adjustment(amount: int = 5_000, by: str = "sup1") -> MeterAdjusted:
    return MeterAdjusted(f"adj-{uuid.uuid4()}", now(), POOL, "meter", amount, by, "correction")


# Unsigned and forged events.


def test_privileged_events_without_signatures_are_refused_whatever_the_path(site: Site) -> None:
    payout = pending_hit(site)
    attacks: list[AnyEvent] = [
        HitVerified(f"v-{uuid.uuid4()}", now(), payout, "sup1"),
        adjustment(),
        OperatorEnrolled(f"o-{uuid.uuid4()}", now(), "eve", "manager", "s", "h", "scrypt", "mgr"),
        OperatorRevoked(f"o-{uuid.uuid4()}", now(), "sup1", "mgr", "gone"),
        PoolTermsChanged(
            f"t-{uuid.uuid4()}", now(), POOL, "progressive-1", 1, Decimal(0), "mgr", "x"
        ),
        ManifestApproved(f"m-{uuid.uuid4()}", now(), "1", "sw", "cfg", [], "mgr"),
        wager("w-forged", "r-forged", 2),
        settle("s-forged", "r-forged", {2: FIVE_ACES}),
    ]
    for attack in attacks:
        assert "unsigned" in refused(site, attack) or "signing key" in refused(site, attack)
    assert payout in site.journal.state.pending


def test_the_by_config_bypass_is_gone(site: Site) -> None:
    """A pool opened or re-termed "by config", outside a manager's approval: refused."""
    assert "signed configuration approval" in refused(site, pool_opened("open-b", "pool-b"))
    change = PoolTermsChanged(
        f"t-{uuid.uuid4()}", now(), POOL, "progressive-1", 1, Decimal(1), "config", "x"
    )
    assert "signed configuration approval" in refused(site, change)
    assert "signed configuration approval" in refused(site, table_configured("t-2", "T2"))


def test_a_signature_by_a_key_that_is_not_the_operators_is_refused(site: Site) -> None:
    payout = pending_hit(site)
    verification = HitVerified(f"v-{uuid.uuid4()}", now(), payout, "sup1")
    forged = msgspec.structs.replace(
        verification, signatures=[sign(verification, "sup1", keys.generate())]
    )
    assert "does not verify" in refused(site, forged)


def test_a_signature_cannot_be_moved_to_another_event_or_value(site: Site) -> None:
    signed = site.sign(adjustment(5_000), "sup1", "sup2")
    raised = msgspec.structs.replace(signed, amount_cents=500_000)  # the amount changed after
    assert "does not verify" in refused(site, raised)
    elsewhere = msgspec.structs.replace(adjustment(5_000), signatures=signed.signatures)
    assert "does not verify" in refused(site, elsewhere)


def test_a_signature_covers_every_field_but_the_signatures() -> None:
    event = adjustment()
    assert json.loads(signed_bytes(event).split(b"\n", 1)[1]) == json.loads(
        msgspec.json.encode(event)
    ) | {"kind": "meter-adjusted"}


# Dual control.


def test_every_meter_adjustment_needs_two_different_operators(site: Site) -> None:
    assert "dual control" in refused(site, site.sign(adjustment(), "sup1"))
    twice = site.sign(adjustment(), "sup1")
    twice = msgspec.structs.replace(
        twice, signatures=[*signatures_of(twice), *signatures_of(twice)]
    )
    assert "signed twice" in refused(site, twice)
    meter = site.journal.state.pools[POOL].meter
    site.append(site.sign(adjustment(5_000), "sup1", "sup2"))
    assert site.journal.state.pools[POOL].meter == meter + 5_000


def test_by_must_be_one_of_the_signers(site: Site) -> None:
    assert "who did not sign" in refused(site, site.sign(adjustment(by="mgr"), "sup1", "sup2"))


def test_a_verification_at_or_above_the_dual_control_amount_needs_two(site: Site) -> None:
    payout = pending_hit(site)
    assert site.journal.state.pending[payout].win_cents >= 100_000
    verification = HitVerified(f"v-{uuid.uuid4()}", now(), payout, "sup1")
    assert "dual control" in refused(site, site.sign(verification, "sup1"))
    site.append(site.sign(anew(verification), "sup1", "sup2"))
    assert payout not in site.journal.state.pending


# Lockouts.


def test_failed_authentications_lock_an_operator_out_until_a_manager_unlocks(site: Site) -> None:
    for attempt in range(3):
        receipt = site.append(failed_attempt(site, "sup2"))
        counted = receipt.effects[0]
        assert getattr(counted, "locked", None) is (attempt == 2)
    assert site.journal.state.operators["sup2"].locked
    assert "locked out" in refused(site, site.sign(adjustment(), "sup1", "sup2"))
    unlock = OperatorUnlocked(f"u-{uuid.uuid4()}", now(), "sup2", "sup1", "identity checked")
    assert "may not unlock" in refused(site, site.sign(unlock, "sup1"))
    unlock = OperatorUnlocked(f"u-{uuid.uuid4()}", now(), "sup2", "mgr", "identity checked")
    site.append(site.sign(unlock, "mgr"))
    site.append(site.sign(adjustment(), "sup1", "sup2"))


def test_a_signed_action_starts_the_count_of_failures_again(site: Site) -> None:
    for _ in range(2):
        site.append(failed_attempt(site, "sup1"))
    site.append(site.sign(adjustment(), "sup1", "sup2"))
    assert site.journal.state.operators["sup1"].failures == 0


# Enrollment and the switch to signed authority.


def test_the_first_keyed_operator_is_a_manager_who_signs_their_own_enrollment(
    tmp_path: Path,
) -> None:
    with Journal(tmp_path / "journal.db") as journal:
        key, other = keys.generate(), keys.generate()
        unsigned = enrollment("boss", "manager", key, "boss")
        assert not journal.append(unsigned).applied
        by_another = anew(unsigned)
        by_another = msgspec.structs.replace(
            by_another, signatures=[sign(by_another, "boss", other)]
        )
        assert "must sign their own enrollment" in journal.append(by_another).reason
        supervisor = enrollment("sup", "supervisor", key, "sup")
        supervisor = msgspec.structs.replace(supervisor, signatures=[sign(supervisor, "sup", key)])
        assert "must be a manager" in journal.append(supervisor).reason
        assert not journal.state.authority.signed
        signed = anew(unsigned)
        signed = msgspec.structs.replace(signed, signatures=[sign(signed, "boss", key)])
        assert journal.append(signed).applied
        assert journal.state.authority.signed


def test_a_supervisor_cannot_enroll_a_manager(site: Site) -> None:
    eve = enrollment("eve", "manager", keys.generate(), "sup1")
    assert "may not enroll" in refused(site, site.sign(eve, "sup1"))


def test_pin_operators_cannot_be_enrolled_once_signed(site: Site) -> None:
    pin = OperatorEnrolled(
        f"o-{uuid.uuid4()}", now(), "old", "supervisor", "aa", "bb", "scrypt", "mgr"
    )
    assert "signing key" in refused(site, site.sign(pin, "mgr"))


def test_signed_mode_survives_reopening_the_journal(site: Site) -> None:
    path = site.journal.path
    site.journal.close()
    with Journal(path) as reopened:
        assert reopened.state.authority.signed
        assert reopened.state.authority.lockout_after == 3
        assert reopened.state.operators["sup1"].public_key
        assert not reopened.append(adjustment()).applied


# Configuration approval.


def test_a_configuration_takes_effect_only_inside_a_managers_signed_approval(
    tmp_path: Path,
) -> None:
    with Journal(tmp_path / "journal.db") as journal:
        site = Site.create(journal)
        changes: list[PoolOpened] = [pool_opened()]
        approval = ConfigurationApproved(f"c-{uuid.uuid4()}", now(), "d", list(changes), "mgr")
        assert "unsigned" in journal.append(approval).reason
        assert "may not approve-config" in journal.append(site.sign(anew(approval), "sup1")).reason
        bad = ConfigurationApproved(
            f"c-{uuid.uuid4()}", now(), "d", [pool_opened(), pool_opened()], "mgr"
        )
        assert "already open" in journal.append(site.sign(bad, "mgr")).reason  # all or none
        assert journal.state.pools == {}
        site.append(site.sign(anew(approval), "mgr"))
        assert POOL in journal.state.pools
        assert journal.state.authority.configuration == "d"


def test_settling_a_round_by_direct_entry_needs_a_supervisors_signature(site: Site) -> None:
    assert "unsigned" in refused(site, settle("s-1", "r-1", {1: NOTHING}))
    forged = Signature("sup1", "AAAA")
    unsigned = wager("w-1", "r-1", 1)
    assert "does not verify" in refused(
        site, msgspec.structs.replace(unsigned, signatures=[forged])
    )
    site.append(site.sign(anew(unsigned), "sup1"))
    assert (TABLE, "r-1") in site.journal.state.rounds
