"""Passkeys as operators' credentials: what the ledger takes and refuses.

docs/security.md, "Passkeys", lists each refusal, its layer and its test.

A supervisor's console relays a passkey's assertion to the controller; the web server holds
nothing that lets it act. So every check is the ledger's, and each test here is an attack by
whoever relays or can append: an assertion replayed onto another pay, a tampered client data,
a challenge that is not the event's digest, a cloned authenticator whose count goes back, a
revoked credential, a supervisor acting as a manager, a wrong relying party, missing flags, a
wrong origin, an enrollment no authenticator registered for. Each goes through
``Journal.append`` on a real journal, in memory (the SQLite journal's code without a file:
docs/journal.md, "Backends"), and moves nothing; the software authenticator
(tests/support/web/authenticator.py) makes the WebAuthn data byte for byte, as a browser would.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import (
    FIVE_ACES,
    POOL,
    pool_opened,
    settle,
    table_configured,
    wager,
)
from support.ledger.approvals import Site
from support.web.authenticator import (
    ORIGIN,
    UP,
    UV,
    Authenticator,
    passkey_enrollment,
    passkey_signature,
    passkey_signed,
)

from controller.clock import utc_now as now
from controller.events import (
    ConfigurationApproved,
    HitVerified,
    MeterAdjusted,
    OperatorRevoked,
    PasskeyCloneSuspected,
    PasskeyRevoked,
    PoolTermsChanged,
    decode_event,
    encode_event,
)
from controller.ledger.apply import apply
from controller.ledger.passkeys import CLONE, clone_evidence, passkeys_of
from controller.ledger.state import LedgerError
from controller.ledger_journal.memory import MemoryJournal
from controller.security.signatures import with_signature
from controller.security.webauthn_signatures import b64url, from_b64url

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.events import AnyEvent
    from controller.journal.location import MemoryLocation

DUAL_CONTROL_CENTS = 5_000_000
"""Above the five-aces pay of the tests' pool (its $10,000 seed): one signature verifies it."""


@pytest.fixture
def passkeys_pit(where: MemoryLocation) -> Iterator[Site[MemoryJournal]]:
    """A signed journal with an identity: a manager, two supervisors, one pool, one table."""
    with MemoryJournal(where) as journal:
        site = Site.create(journal)
        table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
        approval = ConfigurationApproved(
            f"approval-{uuid.uuid4().hex[:8]}", now(), "digest-1", [pool_opened(), table], "mgr",
            dual_control_cents=DUAL_CONTROL_CENTS,
        )  # fmt: skip
        site.append(site.sign(approval, "mgr"))
        yield site


def enroll(
    site: Site[MemoryJournal], operator: str, authenticator: Authenticator, **options: object
) -> None:
    """The manager enrolls ``operator``'s passkey; it must be applied."""
    event = passkey_enrollment(site.journal.state, operator, authenticator, **options)  # type: ignore[arg-type]
    site.append(site.sign(event, "mgr"))


@pytest.fixture
def authenticator(passkeys_pit: Site[MemoryJournal]) -> Authenticator:
    """sup1's security key, enrolled by the manager."""
    made = Authenticator()
    enroll(passkeys_pit, "sup1", made)
    return made


def pending_pay(site: Site[MemoryJournal]) -> str:
    """A progressive hit awaiting verification (five aces pays the meter)."""
    round_id = f"r-{uuid.uuid4().hex[:6]}"
    before = set(site.journal.state.pending)
    site.append(site.sign(wager(f"{round_id}-w", round_id, 1), "sup1"))
    site.append(site.sign(settle(f"{round_id}-s", round_id, {1: FIVE_ACES}), "sup1"))
    (payout_id,) = set(site.journal.state.pending) - before
    return payout_id


def verification(payout_id: str, by: str = "sup1") -> HitVerified:
    return HitVerified(f"verify-{uuid.uuid4().hex[:8]}", now(), payout_id, by)


def verified_by_key(
    site: Site[MemoryJournal], authenticator: Authenticator, **spoil: object
) -> HitVerified:
    """sup1's passkey verification of a new pending pay, signed against the state with it."""
    event = verification(pending_pay(site))
    return passkey_signed(site.journal.state, event, "sup1", authenticator, **spoil)


def refused(site: Site[MemoryJournal], event: AnyEvent) -> str:
    """Append ``event``: refused, and no meter, payout, operator or credential changed."""
    before = site.journal.state
    receipt = site.journal.append(event)
    assert not receipt.applied, event
    after = site.journal.state
    assert (after.pools, after.pending, after.operators, after.authority) == (
        before.pools,
        before.pending,
        before.operators,
        before.authority,
    )
    return receipt.reason


def refuses(site: Site[MemoryJournal], event: AnyEvent) -> str:
    """The ledger refuses ``event`` on the journal's state (pure: the event's id is not spent)."""
    with pytest.raises(LedgerError) as refusal:
        apply(site.journal.state, event)
    return str(refusal.value)


def count_of(site: Site[MemoryJournal], authenticator: Authenticator) -> int:
    return passkeys_of(site.journal.state)[authenticator.credential].sign_count


def test_a_supervisor_verifies_a_pay_with_her_security_key(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    payout_id = pending_pay(passkeys_pit)
    event = verification(payout_id)
    passkeys_pit.append(passkey_signed(passkeys_pit.journal.state, event, "sup1", authenticator))
    assert payout_id not in passkeys_pit.journal.state.pending
    assert count_of(passkeys_pit, authenticator) == authenticator.sign_count == 1


def test_the_sign_count_the_ledger_keeps_survives_a_restart(
    where: MemoryLocation, passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    passkeys_pit.append(verified_by_key(passkeys_pit, authenticator))
    passkeys_pit.journal.close()
    with MemoryJournal(where) as journal:
        assert passkeys_of(journal.state)[authenticator.credential].sign_count == 1


def test_an_assertion_replayed_onto_another_pay_is_refused(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    first, second = pending_pay(passkeys_pit), pending_pay(passkeys_pit)
    signed = passkey_signed(passkeys_pit.journal.state, verification(first), "sup1", authenticator)
    moved = msgspec.structs.replace(signed, payout_id=second)
    reason = refused(passkeys_pit, moved)
    assert "challenge" in reason
    assert {first, second} <= set(passkeys_pit.journal.state.pending)


def test_a_tampered_client_data_is_refused(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    event = verification(pending_pay(passkeys_pit))
    signature = passkey_signature(passkeys_pit.journal.state, event, "sup1", authenticator)
    assert signature.webauthn is not msgspec.UNSET
    client_data = from_b64url(signature.webauthn.client_data_json, "client data")
    tampered = client_data.replace(b'"crossOrigin":false', b'"crossOrigin":true ')
    assertion = msgspec.structs.replace(signature.webauthn, client_data_json=b64url(tampered))
    forged = msgspec.structs.replace(signature, webauthn=assertion)
    assert "Could not verify authentication signature" in refused(
        passkeys_pit, with_signature(event, forged)
    )


def test_every_byte_of_an_assertion_is_covered(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    """One bit flipped anywhere in the authenticator data, client data or signature: refused."""
    event = verification(pending_pay(passkeys_pit))
    signature = passkey_signature(passkeys_pit.journal.state, event, "sup1", authenticator)
    assertion = signature.webauthn
    assert assertion is not msgspec.UNSET
    spoiled: list[object] = []
    for name in ("authenticator_data", "client_data_json"):
        data = from_b64url(getattr(assertion, name), name)
        for at in range(len(data)):
            flipped = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
            changed = msgspec.structs.replace(assertion, **{name: b64url(flipped)})
            spoiled.append(msgspec.structs.replace(signature, webauthn=changed))
    data = from_b64url(signature.signature, "signature")
    for at in range(len(data)):
        flipped = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
        spoiled.append(msgspec.structs.replace(signature, signature=b64url(flipped)))
    for each in spoiled:
        refuses(passkeys_pit, with_signature(event, each))  # type: ignore[arg-type]
    passkeys_pit.append(with_signature(event, signature))  # the genuine one still verifies


def test_a_challenge_that_is_not_the_events_digest_is_refused(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    event = verification(pending_pay(passkeys_pit))
    signed = passkey_signed(
        passkeys_pit.journal.state, event, "sup1", authenticator, challenge=b"\x07" * 32
    )
    assert "challenge" in refused(passkeys_pit, signed)


def test_a_sign_count_that_goes_back_is_a_cloned_authenticator_refused_and_alerted(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    clone = authenticator.clone()
    for _ in range(3):
        passkeys_pit.append(verified_by_key(passkeys_pit, authenticator))
    assert count_of(passkeys_pit, authenticator) == 3
    payout_id = pending_pay(passkeys_pit)
    copied = passkey_signed(passkeys_pit.journal.state, verification(payout_id), "sup1", clone)
    assert clone.sign_count == 1
    reason = refused(passkeys_pit, copied)
    assert CLONE in reason
    assert "suspected cloned authenticator" in reason
    # The alert: journaled on the proof of the clone's own assertion, held in the state.
    alert = clone_evidence(passkeys_pit.journal.state, copied)
    assert alert is not None
    passkeys_pit.append(alert)
    assert passkeys_of(passkeys_pit.journal.state)[authenticator.credential].clone_suspected == 1
    # Neither copy is taken again, the genuine one's higher count included.
    later = passkey_signed(
        passkeys_pit.journal.state, verification(payout_id), "sup1", authenticator
    )
    assert "suspected cloned" in refused(passkeys_pit, later)
    assert payout_id in passkeys_pit.journal.state.pending


def test_a_sign_count_that_repeats_is_refused(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    passkeys_pit.append(verified_by_key(passkeys_pit, authenticator))
    again = verified_by_key(passkeys_pit, authenticator, count=1)
    assert CLONE in refused(passkeys_pit, again)


def test_an_authenticator_that_never_counts_is_taken_at_zero(
    passkeys_pit: Site[MemoryJournal],
) -> None:
    """Synced passkeys report 0 always: the count is judged only while either side counts."""
    passkey = Authenticator(counts=False)
    enroll(passkeys_pit, "sup1", passkey)
    for _ in range(2):
        event = verification(pending_pay(passkeys_pit))
        passkeys_pit.append(passkey_signed(passkeys_pit.journal.state, event, "sup1", passkey))
    assert count_of(passkeys_pit, passkey) == 0


def test_clone_evidence_nobody_signed_or_already_applied_is_refused(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    applied = verified_by_key(passkeys_pit, authenticator)
    passkeys_pit.append(applied)
    assert clone_evidence(passkeys_pit.journal.state, applied) is None
    event = verification(pending_pay(passkeys_pit))
    impostor = Authenticator(
        credential_id=authenticator.credential_id
    )  # the credential's id, another key
    forged = passkey_signed(passkeys_pit.journal.state, event, "sup1", impostor, count=0)
    assert clone_evidence(passkeys_pit.journal.state, forged) is None
    for evidence in (applied, forged):
        alert = PasskeyCloneSuspected(
            f"alert-{uuid.uuid4().hex[:6]}",
            now(),
            authenticator.credential,
            encode_event(evidence).decode(),
        )
        assert CLONE in refused(passkeys_pit, alert)
    assert passkeys_of(passkeys_pit.journal.state)[authenticator.credential].clone_suspected is None


def test_a_revoked_credential_is_refused(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    revocation = PasskeyRevoked(
        f"revoke-{uuid.uuid4().hex[:6]}",
        now(),
        authenticator.credential,
        "mgr",
        "key lost on the floor",
    )
    passkeys_pit.append(passkeys_pit.sign(revocation, "mgr"))
    signed = verified_by_key(passkeys_pit, authenticator)
    assert "revoked" in refused(passkeys_pit, signed)


def test_a_revoked_operators_passkeys_are_revoked_with_them(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    event = OperatorRevoked(f"revoke-{uuid.uuid4().hex[:6]}", now(), "sup1", "mgr", "left")
    passkeys_pit.append(passkeys_pit.sign(event, "mgr"))
    assert passkeys_of(passkeys_pit.journal.state)[authenticator.credential].revoked


def test_a_revoked_credential_is_never_enrolled_again(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    revocation = PasskeyRevoked(
        f"revoke-{uuid.uuid4().hex[:6]}",
        now(),
        authenticator.credential,
        "mgr",
        "key lost on the floor",
    )
    passkeys_pit.append(passkeys_pit.sign(revocation, "mgr"))
    again = passkey_enrollment(passkeys_pit.journal.state, "sup2", authenticator)
    assert "one credential, one enrollment" in refused(
        passkeys_pit, passkeys_pit.sign(again, "mgr")
    )


def test_a_supervisors_passkey_cannot_sign_as_the_manager(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    """Her credential is hers: presented as the manager's, it names no passkey of his."""
    pool = passkeys_pit.journal.state.pools[POOL]
    change = PoolTermsChanged(
        f"terms-{uuid.uuid4().hex[:6]}", now(), POOL, pool.terms.paytable, 2_000_000,
        Decimal("0.05"), "mgr", "reseed", apply_now=True,
    )  # fmt: skip
    assert "has no enrolled passkey" in refused(
        passkeys_pit, passkey_signed(passkeys_pit.journal.state, change, "mgr", authenticator)
    )


def test_a_supervisor_cannot_take_a_managers_action_with_her_passkey(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    pool = passkeys_pit.journal.state.pools[POOL]
    change = PoolTermsChanged(
        f"terms-{uuid.uuid4().hex[:6]}", now(), POOL, pool.terms.paytable, 2_000_000,
        Decimal("0.05"), "sup1", "reseed", apply_now=True,
    )  # fmt: skip
    reason = refused(
        passkeys_pit, passkey_signed(passkeys_pit.journal.state, change, "sup1", authenticator)
    )
    assert "(supervisor) may not change-terms" in reason


def test_a_meter_correction_takes_two_operators_whatever_their_credentials(
    passkeys_pit: Site[MemoryJournal], authenticator: Authenticator
) -> None:
    correction = MeterAdjusted(
        f"adjust-{uuid.uuid4().hex[:6]}", now(), POOL, "meter", 1_000, "sup1", "count error"
    )
    alone = passkey_signed(passkeys_pit.journal.state, correction, "sup1", authenticator)
    assert "dual control" in refuses(passkeys_pit, alone)
    with_ed25519_too = passkey_signed(
        passkeys_pit.journal.state, passkeys_pit.sign(correction, "sup1"), "sup1", authenticator
    )
    assert "signed twice" in refuses(passkeys_pit, with_ed25519_too)
    other = Authenticator()
    enroll(passkeys_pit, "sup2", other)
    both = passkey_signed(passkeys_pit.journal.state, alone, "sup2", other)
    passkeys_pit.append(both)
    assert passkeys_pit.journal.state.pools[POOL].adjustments_cents == 1_000


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        ({"rp_id": "evil.example.com"}, "Unexpected RP ID hash"),
        ({"flags": UV}, "User was not present"),
        ({"flags": UP}, "User verification is required"),
        ({"origin": "https://evil.example.com"}, "Unexpected client data origin"),
    ],
    ids=["wrong-rp-id-hash", "no-user-presence", "no-user-verification", "wrong-origin"],
)
def test_an_assertion_off_its_relying_party_or_without_its_flags_is_refused(
    passkeys_pit: Site[MemoryJournal],
    authenticator: Authenticator,
    spoil: dict[str, object],
    why: str,
) -> None:
    signed = verified_by_key(passkeys_pit, authenticator, **spoil)
    assert why in refused(passkeys_pit, signed)


def test_an_enrollment_signed_by_a_supervisor_is_refused(passkeys_pit: Site[MemoryJournal]) -> None:
    event = passkey_enrollment(passkeys_pit.journal.state, "sup2", Authenticator(), by="sup1")
    assert "(supervisor) may not enroll" in refused(passkeys_pit, passkeys_pit.sign(event, "sup1"))


def test_a_registration_made_for_another_enrollment_is_refused(
    passkeys_pit: Site[MemoryJournal],
) -> None:
    """A relay cannot enroll a credential registered for another ceremony (or for none)."""
    event = passkey_enrollment(
        passkeys_pit.journal.state, "sup2", Authenticator(), challenge=b"\x01" * 32
    )
    assert "challenge" in refused(passkeys_pit, passkeys_pit.sign(event, "mgr"))


def test_a_registration_without_user_verification_is_refused(
    passkeys_pit: Site[MemoryJournal],
) -> None:
    event = passkey_enrollment(passkeys_pit.journal.state, "sup2", Authenticator(), flags=UP)
    assert "User verification is required" in refused(passkeys_pit, passkeys_pit.sign(event, "mgr"))


def test_a_registration_from_an_origin_the_enrollment_does_not_name_is_refused(
    passkeys_pit: Site[MemoryJournal],
) -> None:
    event = passkey_enrollment(
        passkeys_pit.journal.state, "sup2", Authenticator(), origin="https://evil.example.com"
    )
    assert "origin" in refused(passkeys_pit, passkeys_pit.sign(event, "mgr"))


def test_an_enrollment_is_the_event_the_manager_signed(passkeys_pit: Site[MemoryJournal]) -> None:
    """A relay that swaps the operator after the manager signed: the signature breaks."""
    event = passkeys_pit.sign(
        passkey_enrollment(passkeys_pit.journal.state, "sup1", Authenticator()), "mgr"
    )
    assert "does not verify" in refused(
        passkeys_pit, msgspec.structs.replace(event, operator="sup2")
    )
    assert decode_event(encode_event(event)) == event
    assert ORIGIN in event.origins
