"""Passkeys in the ledger: an assertion by an enrolled credential, its sign count, and clones.

An operator's passkey or security key (WebAuthn) signs an action as their Ed25519 key does:
the challenge is the digest of the bound bytes of the event
(:mod:`controller.security.webauthn_signatures`), so the binding is checked by the same code
(controller/ledger/binding.py) and every authority rule (roles, dual control by distinct
operators, lockouts, once ever) holds whatever the credential (controller/ledger/authority.py).
What needs the state is checked here (docs/security.md, "Passkeys"):

* **The credential.** The assertion names a credential enrolled for the signer
  (:class:`~controller.passkey_events.PasskeyEnrolled`), not revoked, not suspected cloned.
* **The data.** Its client data, relying party id hash, flags (user present and verified),
  origin, challenge and signature, by :func:`~controller.security.webauthn_signatures.asserted`.
* **The sign count.** While the authenticator or the ledger counts (either is not zero), each
  assertion's count must be above the last one taken; the state keeps it, so that a replay of
  the journal, and ``jackpotd journal verify``, judge it again. A count that does not go up,
  from an assertion whose signature verified, was made by the credential's key on another
  authenticator than the one counting: a cloned authenticator. It is refused, and
  :func:`clone_evidence` gives the alert to journal, a
  :class:`~controller.passkey_events.PasskeyCloneSuspected` that the ledger takes only with
  that proof (:func:`on_clone_suspected`); from then on none of the credential's assertions is
  taken, until a manager revokes it and enrolls another.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

import msgspec

from controller.events import decode_event, encode_event
from controller.ledger.state import LedgerError
from controller.passkey_events import PasskeyCloneSuspected
from controller.security.signatures import binding_of, signatures_of
from controller.security.webauthn_signatures import PasskeyError, asserted, assertion_challenge

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.effects import AnyEffect
    from controller.event_base import Signature
    from controller.events import AnyEvent
    from controller.ledger.operators import Passkey
    from controller.ledger.state import LedgerState

    Outcome = tuple[LedgerState, list[AnyEffect]]

CLONE: Final = "passkey-clone"
"""The word that starts the refusal of a count that went back, and the alert's event id."""


def passkeys_of(state: LedgerState) -> Mapping[str, Passkey]:
    """Every passkey ever enrolled (revoked ones too), by credential id."""
    passkeys = state.authority.passkeys
    return {} if isinstance(passkeys, msgspec.UnsetType) else passkeys


def with_passkeys(state: LedgerState, changed: Mapping[str, Passkey]) -> LedgerState:
    """The state with some passkeys' records replaced or added."""
    passkeys = {**passkeys_of(state), **changed}
    return replace(state, authority=replace(state.authority, passkeys=passkeys))


def _went_back(passkey: Passkey, count: int) -> bool:
    """Whether ``count`` fails to pass the last one taken while either side counts."""
    return (count > 0 or passkey.sign_count > 0) and count <= passkey.sign_count


def _enrolled(state: LedgerState, signature: Signature, action: str) -> tuple[str, Passkey]:
    """The signer's live passkey the assertion names, or refuse the event."""
    assertion = signature.webauthn
    if isinstance(assertion, msgspec.UnsetType):
        raise LedgerError(f"{action}: {signature.operator}'s signature is not a passkey's")
    credential = assertion.credential_id
    passkey = passkeys_of(state).get(credential)
    who = signature.operator
    if passkey is None or passkey.operator != who:
        raise LedgerError(f"{action}: {who} has no enrolled passkey {credential[:16]}")
    if passkey.revoked:
        raise LedgerError(f"{action}: {who}'s passkey {passkey.label!r} was revoked")
    if passkey.clone_suspected is not None:
        raise LedgerError(
            f"{action}: {who}'s passkey {passkey.label!r} is suspected cloned (its sign count "
            f"went back to {passkey.clone_suspected}); a manager revokes it and enrolls another"
        )
    return credential, passkey


def passkey_signed(
    state: LedgerState, signature: Signature, event: AnyEvent, action: str
) -> LedgerState:
    """Refuse ``event`` unless ``signature`` is a valid assertion of the signer's passkey.

    The state after it holds the credential's new sign count. A signed event applied before is
    left to the once-ever rule (controller/ledger/binding.py), so that a resend of an action
    already taken never reads as a clone.
    """
    credential, passkey = _enrolled(state, signature, action)
    who = signature.operator
    if state.binding is not None and event.event_id in state.binding.applied:
        raise LedgerError(
            f"{action}: {event.event_id} was applied before; a signed action applies once, ever"
        )
    challenge = assertion_challenge(event, binding_of(signature))
    try:
        count = asserted(passkey.public_key, signature, challenge, passkey.rp_id, passkey.origins)
    except PasskeyError as error:
        raise LedgerError(f"{action}: {who}'s passkey {passkey.label!r}: {error}") from error
    if _went_back(passkey, count):
        raise LedgerError(
            f"{action}: {CLONE}: {who}'s passkey {passkey.label!r} signed with sign count "
            f"{count}, not above {passkey.sign_count}: a suspected cloned authenticator; refused"
        )
    return with_passkeys(state, {credential: replace(passkey, sign_count=count)})


def _regressed(state: LedgerState, event: AnyEvent, signature: Signature) -> int | None:
    """The count of a verified assertion in ``event`` that went back; None if it is no proof."""
    try:
        credential, passkey = _enrolled(state, signature, "evidence")
    except LedgerError:
        return None
    del credential
    challenge = assertion_challenge(event, binding_of(signature))
    try:
        count = asserted(passkey.public_key, signature, challenge, passkey.rp_id, passkey.origins)
    except PasskeyError:
        return None
    return count if _went_back(passkey, count) else None


def _never_applied(state: LedgerState, event: AnyEvent) -> bool:
    return state.binding is None or event.event_id not in state.binding.applied


def clone_evidence(state: LedgerState, event: AnyEvent) -> PasskeyCloneSuspected | None:
    """The alert to journal after ``event`` was refused for a passkey's count going back.

    None when no passkey's assertion in it is proof of a clone on ``state``. A live append
    journals the alert it gives right after the refused row, in the same transaction, under an
    id of its own (:data:`controller.ledger.domain.LEDGER`, controller/journal/appending.py).
    """
    if not _never_applied(state, event):
        return None
    for signature in signatures_of(event):
        assertion = signature.webauthn
        if isinstance(assertion, msgspec.UnsetType):
            continue
        if _regressed(state, event, signature) is not None:
            credential = assertion.credential_id
            return PasskeyCloneSuspected(
                f"{event.event_id}#{CLONE}-{credential[:16]}",
                event.at,
                credential,
                encode_event(event).decode(),
            )
    return None


def on_clone_suspected(state: LedgerState, event: PasskeyCloneSuspected) -> Outcome:
    """Hold a passkey suspected cloned, on the proof of an assertion whose count went back."""
    try:
        evidence = decode_event(event.evidence)
    except msgspec.MsgspecError as error:
        raise LedgerError(f"{CLONE}: the evidence is not an event: {error}") from error
    if not _never_applied(state, evidence):
        raise LedgerError(f"{CLONE}: {evidence.event_id} was applied: no proof of a clone")
    for signature in signatures_of(evidence):
        assertion = signature.webauthn
        if isinstance(assertion, msgspec.UnsetType):
            continue
        if assertion.credential_id != event.credential_id:
            continue
        count = _regressed(state, evidence, signature)
        if count is None:
            break
        held = replace(passkeys_of(state)[event.credential_id], clone_suspected=count)
        return with_passkeys(state, {event.credential_id: held}), []
    raise LedgerError(
        f"{CLONE}: no assertion in the evidence by live passkey {event.credential_id[:16]} "
        "that verifies with a sign count that went back"
    )


def retire_operators_passkeys(state: LedgerState, name: str) -> LedgerState:
    """The state after ``name`` was revoked: every passkey of theirs revoked with them."""
    theirs = {
        credential: replace(passkey, revoked=True)
        for credential, passkey in passkeys_of(state).items()
        if passkey.operator == name and not passkey.revoked
    }
    return with_passkeys(state, theirs) if theirs else state
