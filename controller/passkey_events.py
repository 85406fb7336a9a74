"""Operators' passkeys, as the journal holds them: enrolled, revoked, suspected cloned.

A manager enrolls an operator's passkey or security key (WebAuthn) with the registration its
authenticator made (:class:`PasskeyEnrolled`, signed like every enrollment), and withdraws it
(:class:`PasskeyRevoked`). An assertion whose sign count went back was made by the credential's
key on another authenticator than the one counting: the action is refused and the alert
journaled after it (:class:`PasskeyCloneSuspected`), carrying the refused event as its proof.
The ledger's rules for them are in controller/ledger/passkey_events.py and
controller/ledger/passkeys.py (docs/security.md, "Passkeys"). They join the journal's tagged
union in :mod:`controller.events`, which names them too.
"""

from __future__ import annotations

import msgspec

from controller.event_base import Event, Signatures


class PasskeyRegistration(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A passkey's registration, as the browser gives it (base64url): what the ledger verifies.

    The credential's id, the attestation object (``none``, or ``packed`` self-attestation: a
    certificate chain is judged against a clock, which a replay of the journal has not) and the
    client data JSON, whose challenge is the digest of the enrollment it belongs to
    (:func:`controller.security.webauthn_signatures.registration_challenge`).
    """

    credential_id: str
    attestation_object: str
    client_data_json: str


class PasskeyEnrolled(Event, frozen=True, tag="passkey-enrolled"):
    """A manager enrolls an operator's passkey or security key (docs/security.md, "Passkeys").

    The ledger verifies ``registration`` (its challenge the digest of this event without it,
    bound as the managers' signatures are) and takes the credential's public key and first sign
    count from it: nobody enrolls a key no authenticator registered for this enrollment.
    ``rp_id`` is the relying party id its assertions must hash to, ``origins`` the pages they
    may come from. ``registration`` is ``UNSET`` only while its challenge is computed.
    """

    operator: str
    label: str
    rp_id: str
    origins: list[str]
    by: str
    reason: str = "passkey enrolled"
    registration: PasskeyRegistration | msgspec.UnsetType = msgspec.UNSET
    signatures: Signatures = msgspec.UNSET


class PasskeyRevoked(Event, frozen=True, tag="passkey-revoked"):
    """A manager withdraws a passkey (lost, or suspected cloned): never taken again."""

    credential_id: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class PasskeyCloneSuspected(Event, frozen=True, tag="passkey-clone-suspected"):
    """An assertion by an enrolled passkey whose sign count went back: a cloned authenticator.

    ``evidence`` is the refused event (its canonical JSON) carrying the assertion. The ledger
    applies this only if that assertion verifies by the credential's key over that event, its
    count is not above the one the ledger holds, and the event was never applied: then the
    credential is held suspected (its record says so, the metrics and alerts read it) and none
    of its assertions is taken until a manager revokes it. Nobody without the credential's key
    can make such evidence.
    """

    credential_id: str
    evidence: str
