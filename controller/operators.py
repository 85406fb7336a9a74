"""Operators: the people whose actions change money, each with a role and a hashed PIN.

Supervisor actions (verifying a hit, adjusting a meter, voiding a round, changing a pool's
terms) must come from an authenticated operator (issue 7). Operators are journaled like
everything else, so the record shows who could act and when that changed; the journal holds
only a salted **scrypt** hash of each PIN (RFC 7914, the standard library's
``hashlib.scrypt``), never the PIN. Checking a PIN happens at the edge (the command line);
the ledger then refuses any supervisor action whose ``by`` is not an enrolled operator with the
right role, once a site has enrolled its first operator.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

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
}
"""The roles allowed to take each action."""


class PinError(ValueError):
    """A PIN that cannot be used (too short, or not digits and letters)."""


@dataclass(frozen=True, slots=True)
class Operator:
    """An enrolled operator: name, role, and the salted hash of the PIN."""

    name: str
    role: Role
    salt: str
    pin_hash: str
    kdf: str = KDF

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
