"""What every journaled event is: an id, a time, and (for some) operators' signatures.

:mod:`controller.events` defines the events themselves; this module holds only their base, so
that events defined in other modules (:mod:`controller.wide_events`) join the same tagged union
without an import cycle.
"""

from __future__ import annotations

import msgspec

SCHEMA_VERSION = 1


class Binding(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where and when an operator's signature is valid (docs/security.md, "Bound signatures").

    ``journal`` is the identity of the journal the action belongs to (made once, at the first
    enrollment with a key); ``target`` names the state the action was signed against, as the
    ledger names it (:func:`controller.ledger.binding.target_of`: the payout and its amount, the
    pool's revision, the halt of a link, the enrolled key); the event's time must fall in
    ``[not_before, not_after]`` (UTC, ISO 8601). The signature covers all of it.
    """

    journal: str
    target: str
    not_before: str
    not_after: str


class WebAuthnAssertion(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a passkey's authenticator returned besides its signature (docs/security.md, "Passkeys").

    Base64url, as the browser gives them (``PublicKeyCredential.rawId`` and the
    ``AuthenticatorAssertionResponse``): the credential's id, the authenticator data (the
    relying party id's hash, the user presence and verification flags, the sign count) and the
    client data JSON, whose challenge is the SHA-256 of the bound bytes an Ed25519 signer signs
    (:mod:`controller.security.webauthn_signatures`). The journal keeps them whole, so that
    ``jackpotd journal verify`` checks the assertion again, offline.
    """

    credential_id: str
    authenticator_data: str
    client_data_json: str


class Signature(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One operator's signature over an event, and what it is bound to.

    An Ed25519 signature (base64) by default; with ``webauthn``, a passkey's assertion, whose
    ``signature`` is the authenticator's signature (base64url, as the browser gives it) over
    the authenticator data and the client data's hash.

    ``binding`` is ``UNSET`` (never encoded) on signatures made before signatures were bound,
    and ``webauthn`` on every Ed25519 signature, so that old journals read, chain and verify
    exactly as they were written.
    """

    operator: str
    signature: str
    binding: Binding | msgspec.UnsetType = msgspec.UNSET
    webauthn: WebAuthnAssertion | msgspec.UnsetType = msgspec.UNSET


Signatures = list[Signature] | msgspec.UnsetType
"""The signatures an event carries; ``UNSET`` on events from before signatures existed."""


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind"):
    """Fields every event has."""

    event_id: str
    at: str
