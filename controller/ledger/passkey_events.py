"""Enrolling and revoking operators' passkeys: a manager's signed action, like any enrollment.

* **Enrollment** (:class:`~controller.passkey_events.PasskeyEnrolled`) is signed by the managers an
  enrollment needs (:func:`~controller.ledger.operator_events.enrolling_managers`: two once two
  are enrolled), bound to the journal, the operator and a time, on a journal with an identity,
  for an enrolled operator with a key. The ledger verifies the registration it carries: made
  for this enrollment (its challenge the digest of the event without it, under the managers'
  binding), at the relying party id and from an origin the event names, the user present and
  verified. The credential's public key and first sign count are the registration's, so a web
  server that relays the ceremony cannot enroll a key no authenticator registered here. One
  credential, one enrollment: a credential id or key enrolled before, even revoked, is refused.
* **Revocation** (:class:`~controller.passkey_events.PasskeyRevoked`) is a manager's signature; the
  credential keeps its record, revoked, and none of its assertions is taken again. Revoking an
  operator revokes their passkeys (controller/ledger/operator_events.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import msgspec

from controller.ledger.authority import require
from controller.ledger.lockouts import has_identity
from controller.ledger.operator_events import enrolling_managers
from controller.ledger.operators import Passkey
from controller.ledger.passkeys import passkeys_of, with_passkeys
from controller.ledger.state import LedgerError
from controller.security.signatures import binding_of, signatures_of
from controller.security.webauthn_signatures import (
    PasskeyError,
    registered,
    registration_challenge,
)

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.ledger.state import LedgerState
    from controller.passkey_events import PasskeyEnrolled, PasskeyRevoked

    Outcome = tuple[LedgerState, list[AnyEffect]]


def _check_terms(state: LedgerState, event: PasskeyEnrolled) -> None:
    if not has_identity(state):
        raise LedgerError(
            "enroll a passkey: only on a journal with an identity (its authority signed and "
            "bound, controller/ledger/binding.py)"
        )
    operator = state.operators.get(event.operator)
    if operator is None or not operator.public_key:
        raise LedgerError(f"enroll a passkey: {event.operator!r} is not an operator with a key")
    if not event.label.strip() or not event.rp_id.strip():
        raise LedgerError("enroll a passkey: it needs a label and a relying party id")
    if not event.origins or any(not origin.strip() for origin in event.origins):
        raise LedgerError("enroll a passkey: it names the origins its assertions come from")


def enroll_passkey(state: LedgerState, event: PasskeyEnrolled) -> Outcome:
    """A manager enrolls an operator's passkey (see the module docstring)."""
    _check_terms(state, event)
    registration = event.registration
    if isinstance(registration, msgspec.UnsetType):
        raise LedgerError("enroll a passkey: it carries the authenticator's registration")
    state = require(state, event, "enroll", signers=enrolling_managers(state))
    challenge = registration_challenge(event, binding_of(signatures_of(event)[0]))
    try:
        made = registered(registration, challenge, event.rp_id, event.origins)
    except PasskeyError as error:
        raise LedgerError(f"enroll a passkey: {error}") from error
    if made.credential_id != registration.credential_id:
        raise LedgerError("enroll a passkey: the registration attests another credential id")
    for credential, passkey in passkeys_of(state).items():
        if made.credential_id == credential or made.public_key == passkey.public_key:
            raise LedgerError(
                f"enroll a passkey: credential {made.credential_id[:16]} is or was enrolled "
                f"({passkey.operator}'s {passkey.label!r}): one credential, one enrollment"
            )
    passkey = Passkey(
        event.operator,
        made.public_key,
        event.rp_id,
        tuple(event.origins),
        made.sign_count,
        event.label,
    )
    return with_passkeys(state, {made.credential_id: passkey}), []


def revoke_passkey(state: LedgerState, event: PasskeyRevoked) -> Outcome:
    """A manager withdraws a passkey: none of its assertions is taken again."""
    passkey = passkeys_of(state).get(event.credential_id)
    if passkey is None or passkey.revoked:
        raise LedgerError(f"no enrolled passkey {event.credential_id[:16]} to revoke")
    if not event.reason.strip():
        raise LedgerError("a revocation needs a reason")
    state = require(state, event, "enroll")
    return with_passkeys(state, {event.credential_id: replace(passkey, revoked=True)}), []
