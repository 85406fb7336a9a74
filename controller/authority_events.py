"""An operator's standing and the journal's own authority: enrollment, lockout, approvals.

Who may act (:class:`OperatorEnrolled`, :class:`OperatorRevoked`, a lockout lifted by
:class:`OperatorUnlocked`, each failed key counted by :class:`AuthenticationFailed`), the
software a manager approved (:class:`ManifestApproved`), a journal given its identity once
(:class:`JournalIdentified`) and a restore from a back-up accepted by two managers
(:class:`HistoryRestored`). They join the union in :mod:`controller.events`, which names them
too, so that they are imported from either; the ledger checks each
(:mod:`controller.ledger.authority`).
"""

from __future__ import annotations

import msgspec

from controller.event_base import Event, Signatures


class OperatorEnrolled(Event, frozen=True, tag="operator-enrolled"):
    """An operator may now act: their Ed25519 public key (never the private key) and role.

    Operators enrolled before keys existed carry the salted hash of a PIN instead
    (``salt``, ``pin_hash``, ``kdf``), which the ledger no longer accepts as proof once a site
    has enrolled a keyed operator (:mod:`controller.ledger.authority`).
    """

    name: str
    role: str
    salt: str
    pin_hash: str
    kdf: str
    by: str
    public_key: str | msgspec.UnsetType = msgspec.UNSET
    signatures: Signatures = msgspec.UNSET


class OperatorRevoked(Event, frozen=True, tag="operator-revoked"):
    """An operator may no longer act."""

    name: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class OperatorUnlocked(Event, frozen=True, tag="operator-unlocked"):
    """A manager lifted an operator's lockout after failed authentications."""

    name: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class AuthenticationFailed(Event, frozen=True, tag="authentication-failed"):
    """An operator's key could not be opened (a wrong passphrase): counted toward a lockout.

    ``public_key`` is the public key the key file of the attempt carries in the clear
    (:mod:`controller.security.keys`). On a journal with an identity the ledger counts the
    failure only when it is the operator's enrolled key, so a key file made under a manager's
    name, or a row without it, locks nobody out (docs/security.md). A row journaled before it
    existed lacks it (``UNSET``, never encoded) and is counted as it was.
    """

    operator: str
    action: str
    detail: str = ""
    public_key: str | msgspec.UnsetType = msgspec.UNSET


class ManifestApproved(Event, frozen=True, tag="manifest-approved"):
    """A manager approved the installed software and configuration, by digest."""

    version: str
    software: str
    configuration: str
    files: list[tuple[str, str]]
    by: str
    signatures: Signatures = msgspec.UNSET


class JournalIdentified(Event, frozen=True, tag="journal-identified"):
    """A manager gives a journal written before identities existed its identity, once.

    From then on every signature on it must be bound to ``journal`` (its target and its time;
    controller/ledger/binding.py), and the rules that hold on journals with an identity hold
    on it; the rows before it replay as they were written.
    """

    journal: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class HistoryRestored(Event, frozen=True, tag="history-restored"):
    """Managers accept that the journal went back to a back-up, losing the rows after it.

    The controller refuses to start on a journal behind its signed high-water mark (docs/
    security.md, "History never goes back"); a restore of a back-up is such a journal, on
    purpose. Two managers sign that they accept losing what the mark ``(lost_seq, lost_hash)``
    covered, and why (the incident); the mark is then held to be accepted, and nothing else is.
    """

    lost_seq: int
    lost_hash: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET
