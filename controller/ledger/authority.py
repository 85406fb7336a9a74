"""Authority, checked in the ledger: signed operator actions, dual control, lockouts.

Whoever can write the journal file, or run ``jackpotd apply``, can put any event in front of
the ledger. So the ledger itself, not a front-end, decides whether an event that moves money
or authority was really made by operators allowed to make it (docs/security.md):

* **Signatures.** Such an event carries Ed25519 signatures over the event itself
  (:mod:`controller.security.signatures`), or enrolled passkeys' assertions whose challenge is
  its digest (controller/ledger/passkeys.py). :func:`require` accepts it only if each signer is
  an enrolled operator with a key, not locked out, whose role allows the action, and whose
  signature verifies; ``by`` must be one of the signers. A forged, unsigned or re-targeted
  event is refused like any refusal: journaled as refused, nothing moved.
* **Dual control.** Meter adjustments always, and verifications of a payout at or above the
  approved ``dual_control_cents``, need the signatures of two different operators: on a
  journal with an identity, of two different keys (one person enrolled under two names is
  one signer).
* **Lockouts.** A failed authentication (a wrong passphrase) is journaled
  (``authentication-failed``); after ``lockout_after`` in a row the operator is locked out and
  their signatures are refused until a manager signs ``operator-unlocked``, or, on a journal
  with an identity, until the lockout's window of event time is over
  (:mod:`controller.ledger.lockouts`). A signed action resets the count.
* **Signed mode.** All of this holds from the first operator enrolled with a key, for good
  (:class:`~controller.ledger.operators.Authority`). A journal that never enrolled a keyed operator
  (written before keys existed, or a unit test's) keeps the earlier checks by name, so that it
  replays exactly as it was written; ``jackpotd run`` refuses to serve such a journal, since
  it cannot have an approved configuration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

import msgspec

from controller.ledger.binding import bound, moment_of
from controller.ledger.lockouts import cleared, has_identity, locked_until
from controller.ledger.passkeys import passkey_signed
from controller.ledger.state import LedgerError, authorize
from controller.security.signatures import is_passkey, signatures_of, verifies

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ledger.operators import Operator, Role
    from controller.ledger.state import LedgerState

DUAL: Final = 2
"""Signers that dual control asks for."""
CONFIGURATION: Final = "config"
"""The ``by`` of changes made by the configuration file at start-up: their authority is the
manager's approval that carries them (controller/ledger/apply.py), not a signature of their own."""


def require(
    state: LedgerState,
    event: AnyEvent,
    action: str,
    *,
    signers: int = 1,
    roles: frozenset[Role] | None = None,
) -> LedgerState:
    """Refuse ``event`` unless operators allowed ``action`` made it; the state after it.

    In signed mode the event needs ``signers`` valid signatures of distinct operators, one of
    them its ``by``, each of a role ``roles`` holds (those allowed ``action``, unless given:
    a supervisor's second signature on an enrollment, controller/ledger/operator_events.py);
    their failed-authentication counts start again from zero (the returned state). Before
    signed mode, the earlier check by name (:func:`authorize`).
    """
    by = str(getattr(event, "by", ""))
    if not state.authority.signed:
        authorize(state, by, action)
        return state
    signatures = signatures_of(event)
    if not signatures:
        raise LedgerError(f"{action}: unsigned; it needs an enrolled operator's signature")
    signed_by: list[str] = []
    for signature in signatures:
        operator = _signer(state, signature.operator, action, roles)
        if signature.operator in signed_by:
            raise LedgerError(f"{action}: {signature.operator} signed twice")
        if is_passkey(signature):  # a passkey's assertion (WebAuthn): its credential's count
            state = passkey_signed(state, signature, event, action)
        elif not verifies(operator.public_key, signature, event):
            raise LedgerError(f"{action}: the signature of {signature.operator} does not verify")
        signed_by.append(signature.operator)
    if (distinct := _distinct_signers(state, signed_by)) < signers:
        raise LedgerError(
            f"{action} needs the signatures of {signers} different operators (dual control), "
            f"not {distinct}"
        )
    _refuse_locked_out(state, event, action, signed_by)
    if by and by not in signed_by:
        raise LedgerError(f"{action}: by {by!r}, who did not sign it")
    state = bound(state, event, action, signatures)
    return _reset_failures(state, signed_by)


def _signer(
    state: LedgerState, name: str, action: str, roles: frozenset[Role] | None = None
) -> Operator:
    operator = state.operators.get(name)
    if operator is None:
        raise LedgerError(f"{action}: {name!r} is not an enrolled operator")
    if not operator.public_key:
        raise LedgerError(f"{action}: {name} has no signing key; enroll them with one")
    if operator.locked and not has_identity(state):
        raise LedgerError(f"{action}: {name} is locked out after failed authentications")
    if not (operator.may(action) if roles is None else operator.role in roles):
        raise LedgerError(f"{action}: {name} ({operator.role}) may not {action}")
    return operator


def _distinct_signers(state: LedgerState, names: list[str]) -> int:
    """How many signers dual control counts: names, or on a journal with an identity, keys.

    Keys, because one person who enrolled her key under a second name is still one person; a
    journal written before identities existed counts names, as it was written.
    """
    if not has_identity(state):
        return len(names)
    return len({state.operators[name].public_key for name in names})


def _refuse_locked_out(state: LedgerState, event: AnyEvent, action: str, names: list[str]) -> None:
    """On a journal with an identity: refuse a signer locked out at the event's time."""
    if not has_identity(state) or not any(state.operators[name].locked for name in names):
        return
    at = moment_of(event.at, f"{action}: its time")
    for name in names:
        until = locked_until(state, name, at)
        if until is not None:
            raise LedgerError(
                f"{action}: {name} is locked out after failed authentications until {until}"
            )


def _reset_failures(state: LedgerState, names: list[str]) -> LedgerState:
    identity = has_identity(state)
    changed = {
        name: replace(state.operators[name], failures=0, locked=False)
        for name in names
        if state.operators[name].failures or (identity and state.operators[name].locked)
    }
    if identity:
        state = cleared(state, names)  # they proved they hold their key: the back-off is over
    if not changed:
        return state
    return replace(state, operators={**state.operators, **changed})


def self_signed(event: AnyEvent, public_key: str, name: str) -> None:
    """Refuse a first enrollment not signed by the key it enrolls (possession of the key)."""
    signatures = signatures_of(event)
    if [signature.operator for signature in signatures] != [name] or not verifies(
        public_key, signatures[0], event
    ):
        raise LedgerError(f"the first keyed operator {name!r} must sign their own enrollment")


def failed(state: LedgerState, name: str) -> tuple[LedgerState, bool]:
    """One more failed authentication of ``name``; the state, and whether it locked them out."""
    operator = state.operators.get(name)
    if operator is None:
        raise LedgerError(f"no operator {name!r}")
    failures = operator.failures + 1
    locked = operator.locked or failures >= state.authority.lockout_after
    changed = replace(operator, failures=failures, locked=locked)
    state = replace(state, operators={**state.operators, name: changed})
    return state, locked and not operator.locked


def has_key(public_key: str | msgspec.UnsetType) -> bool:
    """Whether an enrollment carries a public key."""
    return public_key is not msgspec.UNSET and bool(public_key)
