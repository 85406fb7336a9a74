"""Operators: the people whose actions change money, each with a role and a signing key.

Supervisor actions (verifying a hit, adjusting a meter, voiding a round, changing a pool's
terms, approving software or configuration) must come from an enrolled operator. Operators
are journaled like everything else, so the record shows who could act and when that changed.

An operator enrolled today holds an Ed25519 key (:mod:`controller.security.keys`); the journal holds
only the public key, and the ledger checks every privileged event's signatures against it
(:mod:`controller.ledger.authority`). Operators enrolled before keys existed have a salted
**scrypt** hash of a PIN instead (RFC 7914); a PIN was only ever checked at the command line, so it
is accepted as proof only on a journal that has never enrolled a keyed operator (an old journal
replaying as it was written).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import msgspec

from controller.errors import InputError
from controller.ledger.fault_register import FaultRegister  # noqa: TC001 - msgspec reads it

MIN_PIN_LENGTH: Final = 6
KDF: Final = "scrypt:n=16384,r=8,p=1"
_N, _R, _P, _LENGTH = 16384, 8, 1, 32


class Role(StrEnum):
    """What an operator may do."""

    SUPERVISOR = "supervisor"
    """Verify hits, void rounds, adjust meters."""
    MANAGER = "manager"
    """Everything a supervisor may do, plus change pool terms and enroll operators."""


ACTIONS: Final[dict[str, frozenset[Role]]] = {
    "verify-hit": frozenset({Role.SUPERVISOR, Role.MANAGER}),
    "void-round": frozenset({Role.SUPERVISOR, Role.MANAGER}),
    "adjust": frozenset({Role.SUPERVISOR, Role.MANAGER}),
    "change-terms": frozenset({Role.MANAGER}),
    "enroll": frozenset({Role.MANAGER}),
    "approve-manifest": frozenset({Role.MANAGER}),
    "approve-config": frozenset({Role.MANAGER}),
    "settle-round": frozenset({Role.SUPERVISOR, Role.MANAGER}),
    "unlock": frozenset({Role.MANAGER}),
    "link-site": frozenset({Role.MANAGER}),
    "accept-restore": frozenset({Role.MANAGER}),
    "identify": frozenset({Role.MANAGER}),
    "suspend-pool": frozenset({Role.SUPERVISOR, Role.MANAGER}),
    "resume-pool": frozenset({Role.MANAGER}),
    "transfer-pool": frozenset({Role.MANAGER}),
    "retire-pool": frozenset({Role.MANAGER}),
    "acknowledge-faults": frozenset({Role.SUPERVISOR, Role.MANAGER}),
}
"""The roles allowed to take each action."""


LOCKOUT_AFTER: Final = 5
"""Failed authentications in a row that lock an operator out, unless configured."""


@dataclass(frozen=True, slots=True)
class Lockouts:
    """An operator's lockouts on a journal with an identity (:mod:`controller.ledger.lockouts`).

    ``count`` is how many lockouts they had since they last signed (each lasts twice the one
    before, up to a cap); ``windows`` the ones that stand, each ``(start, end)`` in event time
    (ISO 8601), until the operator's next accepted signature or a manager's unlock;
    ``failures_before`` the operator's failures in a row when the last one was made (the next
    lockout takes ``lockout_after`` more).
    """

    count: int = 0
    windows: tuple[tuple[str, str], ...] = ()
    failures_before: int = 0


@dataclass(frozen=True, slots=True)
class TableAgent:
    """A table's enrolled agent key (controller/ledger/table_agents.py); empty once revoked.

    A table whose key was revoked keeps its record with no key: its device events are refused
    until a manager enrolls a new one, never taken unsigned again.
    """

    public_key: str = ""
    key_id: str = ""


@dataclass(frozen=True, slots=True)
class Passkey:
    """An operator's enrolled passkey or security key (controller/ledger/passkeys.py).

    ``public_key`` is the credential's COSE public key (base64url) its registration gave;
    ``rp_id`` the relying party id its assertions hash to and ``origins`` the pages they may
    come from; ``sign_count`` the highest count its authenticator reported, which every
    assertion must pass while either is not zero (a count that goes back is a cloned
    authenticator). ``clone_suspected`` is the count an assertion went back to, once one did
    (the alert: none of its assertions is taken again); ``revoked``: withdrawn by a manager.
    A revoked credential keeps its record, so that it is never enrolled again.
    """

    operator: str
    public_key: str
    rp_id: str
    origins: tuple[str, ...]
    sign_count: int
    label: str
    revoked: bool = False
    clone_suspected: int | None = None


@dataclass(frozen=True, slots=True)
class Authority:
    """How the ledger checks authority: signatures or not, and the approved settings.

    ``signed`` becomes true with the first operator enrolled with a key and never goes back:
    from then on every privileged event needs valid signatures. ``configuration`` is the
    digest of the configuration a manager last approved; ``dual_control_cents`` the win at or
    above which a verification needs two operators; ``lockout_after`` how many failed
    authentications in a row lock an operator out. The last three come with a signed
    configuration approval.

    ``lockouts`` (operators' lockouts, by name), ``retired_keys`` (the public keys of revoked
    operators and table agents, never enrolled again) and ``table_agents`` (each table's
    agent key) are kept only on a journal with an identity; they
    are ``UNSET`` while empty, never encoded, so that the state's snapshot, and its digest, are
    those of a journal written before they existed.
    """

    signed: bool = False
    configuration: str | None = None
    dual_control_cents: int | None = None
    lockout_after: int = LOCKOUT_AFTER
    lockouts: dict[str, Lockouts] | msgspec.UnsetType = msgspec.UNSET
    retired_keys: tuple[str, ...] | msgspec.UnsetType = msgspec.UNSET
    table_agents: dict[str, TableAgent] | msgspec.UnsetType = msgspec.UNSET
    """Each table's enrolled agent key, by table; ``UNSET`` while none is (never encoded)."""
    passkeys: dict[str, Passkey] | msgspec.UnsetType = msgspec.UNSET
    """Operators' passkeys by credential id (base64url); ``UNSET`` while none was enrolled."""
    jurisdiction: str | msgspec.UnsetType = msgspec.UNSET
    """The jurisdiction profile a signed configuration approval named (controller/ledger/
    jurisdictions.py); ``UNSET`` while none did, never encoded."""
    one_manager_left: bool | msgspec.UnsetType = msgspec.UNSET
    """True while a journal with an identity that had two managers or more has one left (the
    others revoked): every enrollment then needs an active supervisor's signature beside the
    manager's, until a second manager is enrolled (controller/ledger/operator_events.py).
    ``UNSET`` otherwise, never encoded, so that no journal that never came to that has another
    snapshot or digest."""
    faults: FaultRegister | msgspec.UnsetType = msgspec.UNSET
    """The faults counted and acknowledged (controller/ledger/fault_register.py); ``UNSET``
    until a journal's first acknowledgement, never encoded, so that older digests stand."""


class PinError(InputError, ValueError):
    """A PIN that cannot be used (too short, or not digits and letters)."""


@dataclass(frozen=True, slots=True)
class Operator:
    """An enrolled operator: name, role, and public key (or, before keys, a PIN's hash)."""

    name: str
    role: Role
    salt: str
    pin_hash: str
    kdf: str = KDF
    public_key: str = ""
    """Base64 of the Ed25519 public key; empty for an operator enrolled with a PIN."""
    failures: int = 0
    """Failed authentications in a row (a wrong passphrase), reset by a signed action."""
    locked: bool = False
    """Locked out after too many failures, until a manager unlocks them."""

    def may(self, action: str) -> bool:
        """Whether this operator's role allows an action."""
        return self.role in ACTIONS[action]


def check_pin(pin: str) -> None:
    """Refuse a PIN too weak to stand for a signature."""
    if len(pin) < MIN_PIN_LENGTH:
        raise PinError(f"a PIN has at least {MIN_PIN_LENGTH} characters")
    if pin.strip() != pin or not pin.isprintable():
        raise PinError("a PIN has no spaces at its ends and no control characters")


def hash_pin(pin: str, salt: str) -> str:
    """The scrypt hash (hex) of a PIN with a hex salt."""
    salt_bytes = bytes.fromhex(salt)
    derived = hashlib.scrypt(pin.encode(), salt=salt_bytes, n=_N, r=_R, p=_P, dklen=_LENGTH)
    return derived.hex()


def enroll(name: str, role: Role, pin: str) -> Operator:
    """A new operator record with a fresh random salt."""
    check_pin(pin)
    salt = secrets.token_hex(16)
    return Operator(name, role, salt, hash_pin(pin, salt))


def verify_pin(operator: Operator, pin: str) -> bool:
    """Whether a PIN is this operator's (compared in constant time)."""
    if operator.kdf != KDF:
        return False
    return hmac.compare_digest(hash_pin(pin, operator.salt), operator.pin_hash)
