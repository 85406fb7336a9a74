"""Ledger handlers for authority itself: operators, lockouts, approvals (docs/security.md).

Operators are enrolled, revoked, locked out and unlocked; software (the manifest) and the
configuration are approved.

Each handler is pure, like the rest of the ledger, and checks authority through
:func:`controller.ledger.authority.require`:

* **Enrollment.** In signed mode a manager signs the enrollment of an operator with a key.
  The first operator with a key must be a manager and must sign their own enrollment (proving
  they hold the key); on a journal of PIN-era operators an existing manager must also name them
  (``by``), as before. From that enrollment on, authority is signed for good.
* **One key, one operator** (on a journal with an identity, :mod:`controller.ledger.lockouts`):
  a public key already enrolled, or once enrolled for an operator since revoked, is refused,
  so that nobody satisfies dual control with one key under two names; and once two managers
  are enrolled, every enrollment needs the signatures of two of them. A manager who revokes
  the only other manager does not then enroll alone: while one manager is left of two, every
  enrollment needs an active supervisor's signature beside hers, until a second manager is
  enrolled (:attr:`~controller.ledger.operators.Authority.one_manager_left`, set by the
  revocation, so computed on replay from the rows as written).
* **Revocation and unlocking**: a manager's signature. The last manager cannot be revoked;
  a revoked operator's passkeys are revoked with them (controller/ledger/passkey_events.py).
* **Failed authentications** are counted; the count that locks an operator out is approved
  with the configuration. On a journal with an identity, only against the operator's own key,
  for a window of time, and never the last manager free to sign
  (:mod:`controller.ledger.lockouts`).
* **Approvals.** A manager signs the approval of the installed software (the manifest) and of
  the configuration. A configuration approval carries the pool, table and wide-area link
  changes it makes and applies them all or none, with its own authority: a change "by
  config" inside it needs no signature of its own, and is refused outside one.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import msgspec

from controller.effects import (
    AuthenticationCounted,
    ConfigurationSet,
    ManifestSet,
    OperatorChanged,
    OperatorUnlockedEffect,
)
from controller.ledger.authority import DUAL, failed, has_key, require, self_signed
from controller.ledger.binding import identified
from controller.ledger.lockouts import count_failure, has_identity, key_taken, lifted, retired
from controller.ledger.operators import Operator, Role
from controller.ledger.passkeys import retire_operators_passkeys
from controller.ledger.pool_life import with_jurisdiction
from controller.ledger.state import LedgerError
from controller.security.manifest import ApprovedManifest
from controller.security.signatures import signatures_of

KEY_BYTES: Final = 32
"""The length of an Ed25519 public key."""

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from controller.effects import AnyEffect
    from controller.events import (
        AuthenticationFailed,
        ConfigurationApproved,
        ManifestApproved,
        OperatorEnrolled,
        OperatorRevoked,
        OperatorUnlocked,
        PoolOpened,
        PoolTermsChanged,
        TableConfigured,
    )
    from controller.ledger.state import LedgerState
    from controller.wide_events import SiteLinked, WideAreaJoined

    Outcome = tuple[LedgerState, list[AnyEffect]]
    Change = PoolOpened | PoolTermsChanged | TableConfigured | SiteLinked | WideAreaJoined


def _role(text: str) -> Role:
    try:
        return Role(text)
    except ValueError as error:
        raise LedgerError(f"unknown role {text!r}") from error


def enroll(state: LedgerState, event: OperatorEnrolled) -> Outcome:
    """A new operator: keyed (signed mode from then on) or, before keys, with a PIN's hash."""
    if event.name in state.operators:
        raise LedgerError(f"operator {event.name!r} is already enrolled")
    role = _role(event.role)
    keyed = has_key(event.public_key)
    public_key = str(event.public_key) if keyed else ""
    if state.authority.signed:
        if not keyed:
            raise LedgerError("an operator is enrolled with a signing key (public_key)")
        if state.authority.one_manager_left is True:
            state = _witnessed(state, event)
        else:
            state = require(state, event, "enroll", signers=enrolling_managers(state))
        _refuse_a_key_taken(state, public_key)
    elif keyed:
        # The first operator with a key: the site's authority becomes signed, for good.
        if role is not Role.MANAGER:
            raise LedgerError("the first operator enrolled with a key must be a manager")
        self_signed(event, public_key, event.name)
        if state.operators and event.by != event.name:
            require(state, event, "enroll")  # PIN-era managers, checked by name as before
        state = replace(state, authority=replace(state.authority, signed=True))
        state = identified(state, event, signatures_of(event)[0])
    else:
        if state.operators:
            require(state, event, "enroll")
        if not state.operators and role is not Role.MANAGER:
            raise LedgerError("the first operator enrolled must be a manager")
    operator = Operator(event.name, role, event.salt, event.pin_hash, event.kdf, public_key)
    state = replace(state, operators={**state.operators, event.name: operator})
    if role is Role.MANAGER and state.authority.one_manager_left is True:
        state = _one_manager_left(state, left=False)  # two managers again: they enroll
    return state, [OperatorChanged(event.name, str(role))]


WITNESSES: Final = frozenset({Role.MANAGER, Role.SUPERVISOR})
"""Who signs an enrollment while one manager is left of two: the manager and a supervisor."""


def _witnessed(state: LedgerState, event: OperatorEnrolled) -> LedgerState:
    """An enrollment while one manager is left of two: hers and an active supervisor's keys.

    A revocation needs no signature of the operator it revokes (their key may be the one
    lost), so one of two managers can revoke the other; without this she could then enroll a
    second manager, or supervisors, under keys of her own and meet dual control alone. The
    supervisor's signature puts a second person on the enrollment until a second manager is
    enrolled (docs/security.md, "Dual control").
    """
    names = {signature.operator for signature in signatures_of(event)}
    if len(names) < DUAL:
        raise LedgerError(
            "enroll: this journal had two managers and has one left (the other revoked): an "
            "enrollment needs an active supervisor's signature beside the manager's until a "
            "second manager is enrolled"
        )
    state = require(state, event, "enroll", signers=DUAL, roles=WITNESSES)
    roles = {state.operators[name].role for name in names}
    if Role.MANAGER not in roles:
        raise LedgerError("enroll: a manager signs an enrollment; the supervisor signs beside her")
    if Role.SUPERVISOR not in roles:
        raise LedgerError(
            "enroll: one manager is left of two: a supervisor signs beside her, not another key"
        )
    return state


def _one_manager_left(state: LedgerState, *, left: bool) -> LedgerState:
    """The state with :attr:`Authority.one_manager_left` set (True) or dropped (UNSET)."""
    flag: bool | msgspec.UnsetType = True if left else msgspec.UNSET
    return replace(state, authority=replace(state.authority, one_manager_left=flag))


def _keyed_managers(operators: Mapping[str, Operator]) -> int:
    return sum(1 for op in operators.values() if op.role is Role.MANAGER and op.public_key)


def enrolling_managers(state: LedgerState) -> int:
    """The managers' signatures an enrollment needs, on a journal whose authority is signed.

    On a journal with an identity, two once two managers are enrolled, so that no one manager
    adds the second operator dual control asks for. A journal written before identities
    existed needs one, as it was written.
    """
    managers = [op for op in state.operators.values() if op.role is Role.MANAGER and op.public_key]
    return 2 if has_identity(state) and len(managers) >= 2 else 1


def _refuse_a_key_taken(state: LedgerState, public_key: str) -> None:
    """On a journal with an identity, refuse a key that is or was enrolled, to anyone.

    One key, one operator: the same key under a second name would count as a second person
    for dual control. A revoked operator's key is refused too: it may be in other hands.
    """
    if not has_identity(state):
        return
    if not canonical_key(public_key):
        raise LedgerError("public_key: not the base64 of a 32-byte Ed25519 public key")
    holder = key_taken(state, public_key)
    if holder is not None:
        raise LedgerError(
            f"public key {public_key[:12]}... is already enrolled ({holder}): one key, one "
            "operator; each operator makes their own key"
        )


def canonical_key(public_key: str) -> bool:
    """Whether ``public_key`` is the one base64 text of 32 bytes (so equal keys compare equal)."""
    try:
        raw = base64.b64decode(public_key, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == KEY_BYTES and base64.b64encode(raw).decode() == public_key


def revoke(state: LedgerState, event: OperatorRevoked) -> Outcome:
    """An operator may no longer act; never the last manager."""
    state = require(state, event, "enroll")
    if event.name not in state.operators:
        raise LedgerError(f"no operator {event.name!r}")
    remaining = {name: op for name, op in state.operators.items() if name != event.name}
    if not any(op.role is Role.MANAGER for op in remaining.values()):
        raise LedgerError("the last manager cannot be revoked")
    if has_identity(state):
        state = retire_operators_passkeys(retired(state, event.name), event.name)
        if _keyed_managers(state.operators) >= DUAL and _keyed_managers(remaining) == 1:
            state = _one_manager_left(state, left=True)  # remembered: see _witnessed
    return replace(state, operators=remaining), [OperatorChanged(event.name, "")]


def unlock(state: LedgerState, event: OperatorUnlocked) -> Outcome:
    """A manager lets a locked-out operator act again."""
    operator = state.operators.get(event.name)
    if operator is None:
        raise LedgerError(f"no operator {event.name!r}")
    if not event.reason.strip():
        raise LedgerError("an unlock needs a reason")
    state = require(state, event, "unlock")
    unlocked = replace(state.operators[event.name], failures=0, locked=False)
    state = replace(state, operators={**state.operators, event.name: unlocked})
    if has_identity(state):
        state = lifted(state, event.name)
    return state, [OperatorUnlockedEffect(event.name, event.by)]


def authentication_failed(state: LedgerState, event: AuthenticationFailed) -> Outcome:
    """A wrong passphrase: counted; at the configured count the operator is locked out."""
    operator = state.operators.get(event.operator)
    if operator is not None and has_identity(state):
        state, locked_now = count_failure(state, operator, event)
    else:
        state, locked_now = failed(state, event.operator)
    operator = state.operators[event.operator]
    return state, [AuthenticationCounted(event.operator, operator.failures, locked_now)]


def approve_manifest(state: LedgerState, event: ManifestApproved) -> Outcome:
    """A manager approved the installed software and configuration, by digest."""
    if not state.operators:
        raise LedgerError("enroll a manager before approving a manifest")
    state = require(state, event, "approve-manifest")
    files = tuple((path, digest) for path, digest in event.files)
    manifest = ApprovedManifest(event.version, event.software, event.configuration, files, event.by)
    return replace(state, manifest=manifest), [ManifestSet(event.software, event.configuration)]


def approve_configuration(
    state: LedgerState,
    event: ConfigurationApproved,
    apply_change: Callable[[LedgerState, Change], Outcome],
) -> Outcome:
    """A manager approved a configuration: its changes, all or none, then its settings."""
    state = require(state, event, "approve-config")
    effects: list[AnyEffect] = []
    for change in event.changes:
        try:
            state, more = apply_change(state, change)
        except LedgerError as error:
            raise LedgerError(f"configuration {event.configuration[:12]}: {error}") from error
        effects += more
    if event.lockout_after < 1:
        raise LedgerError("lockout_after is at least 1")
    authority = replace(
        state.authority,
        configuration=event.configuration,
        dual_control_cents=event.dual_control_cents,
        lockout_after=event.lockout_after,
    )
    state = replace(state, authority=authority)
    if not isinstance(event.jurisdiction, msgspec.UnsetType):
        state = with_jurisdiction(state, event.jurisdiction, event.at)
    return state, [*effects, ConfigurationSet(event.configuration, len(event.changes))]
