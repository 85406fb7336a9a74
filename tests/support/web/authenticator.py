"""A software WebAuthn authenticator for tests: ES256, 'none' attestation, a sign count.

It makes what a browser hands a relying party, byte for byte as the WebAuthn spec lays it out
(authenticator data, client data JSON, an ECDSA P-256 signature over the authenticator data and
the client data's hash, a CBOR attestation object), so that the ledger's checks run on real
data without a browser. Each part a test may spoil is a keyword: the sign count, the flags, the
origin, the relying party id, the challenge.

``passkey_signed(state, event, operator, authenticator)`` signs an event as a supervisor's
console would: the challenge is the digest of the event's bound bytes for ``state``.

Import it as ``from support.web.authenticator import Authenticator`` (tests/ is on the path).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypeVar

import cbor2
import msgspec
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from controller.clock import utc_now
from controller.event_base import Signature, WebAuthnAssertion
from controller.events import PasskeyEnrolled, PasskeyRegistration
from controller.ledger.binding import binding_for
from controller.security.signatures import with_signature
from controller.security.webauthn_signatures import (
    assertion_challenge,
    b64url,
    registration_challenge,
)

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState

E = TypeVar("E", bound="AnyEvent")

RP_ID: Final = "pit.example.com"
ORIGIN: Final = "https://pit.example.com"
UP: Final = 0x01
"""User present."""
UV: Final = 0x04
"""User verified."""
AT: Final = 0x40
"""Attested credential data follows."""


@dataclass
class Authenticator:
    """One credential on one authenticator: its key, its id and its counter."""

    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    sign_count: int = 0
    """The count it last reported; each assertion adds one (0 stays 0 if ``counts`` is off)."""
    counts: bool = True

    @property
    def credential(self) -> str:
        """The credential id, base64url."""
        return b64url(self.credential_id)

    def cose_key(self) -> bytes:
        """The credential's public key as a COSE_Key (EC2, P-256, ES256)."""
        numbers = self.key.public_key().public_numbers()
        x, y = numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: x, -3: y})

    def clone(self) -> Authenticator:
        """Another authenticator holding the same key and credential, with its own counter."""
        return Authenticator(self.key, self.credential_id, self.sign_count, self.counts)

    def _auth_data(self, rp_id: str, flags: int, count: int) -> bytes:
        return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", count)

    def _client_data(self, kind: str, challenge: bytes, origin: str) -> bytes:
        document = {"type": kind, "challenge": b64url(challenge), "origin": origin}
        return json.dumps({**document, "crossOrigin": False}, separators=(",", ":")).encode()

    def _sign(self, data: bytes) -> bytes:
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))

    def register(
        self, challenge: bytes, *, rp_id: str = RP_ID, origin: str = ORIGIN, flags: int = UP | UV
    ) -> PasskeyRegistration:
        """``navigator.credentials.create()``: the credential registered for ``challenge``."""
        attested = uuid.UUID(int=0).bytes + struct.pack(">H", len(self.credential_id))
        attested += self.credential_id + self.cose_key()
        auth_data = self._auth_data(rp_id, flags | AT, self.sign_count) + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", challenge, origin)
        return PasskeyRegistration(self.credential, b64url(attestation), b64url(client_data))

    def assertion(
        self,
        challenge: bytes,
        *,
        rp_id: str = RP_ID,
        origin: str = ORIGIN,
        flags: int = UP | UV,
        count: int | None = None,
    ) -> tuple[WebAuthnAssertion, str]:
        """``navigator.credentials.get()``: the assertion over ``challenge`` and its signature."""
        if count is None:
            count = self.sign_count + 1 if self.counts else 0
        self.sign_count = count
        auth_data = self._auth_data(rp_id, flags, count)
        client_data = self._client_data("webauthn.get", challenge, origin)
        signature = self._sign(auth_data + hashlib.sha256(client_data).digest())
        made = WebAuthnAssertion(self.credential, b64url(auth_data), b64url(client_data))
        return made, b64url(signature)


def passkey_signature(
    state: LedgerState,
    event: AnyEvent,
    operator: str,
    authenticator: Authenticator,
    **spoil: object,
) -> Signature:
    """``operator``'s passkey signature over ``event``, bound for ``state`` as a console binds it.

    ``challenge=`` signs another challenge; any other keyword goes to
    :meth:`Authenticator.assertion`.
    """
    binding = binding_for(state, event)
    challenge = spoil.pop("challenge", None) or assertion_challenge(event, binding)
    assertion, signature = authenticator.assertion(challenge, **spoil)  # type: ignore[arg-type]
    return Signature(operator, signature, msgspec.UNSET if binding is None else binding, assertion)


def passkey_signed(
    state: LedgerState, event: E, operator: str, authenticator: Authenticator, **spoil: object
) -> E:
    """``event`` with one more signature: ``operator``'s passkey's."""
    signature = passkey_signature(state, event, operator, authenticator, **spoil)
    return with_signature(event, signature)  # type: ignore[return-value]


def passkey_enrollment(
    state: LedgerState,
    operator: str,
    authenticator: Authenticator,
    *,
    by: str = "mgr",
    label: str = "YubiKey 5C",
    origins: tuple[str, ...] = (ORIGIN,),
    challenge: bytes | None = None,
    **registration: object,
) -> PasskeyEnrolled:
    """An unsigned enrollment of ``authenticator``'s credential for ``operator``, registered.

    The registration's challenge is the enrollment's digest under the binding the managers'
    signatures will carry (``challenge=`` registers for another); the managers sign it next.
    """
    event = PasskeyEnrolled(
        f"passkey-{uuid.uuid4()}", utc_now(), operator, label, RP_ID, list(origins), by
    )
    binding = binding_for(state, event)
    made = authenticator.register(
        challenge or registration_challenge(event, binding),
        **registration,  # type: ignore[arg-type]
    )
    return msgspec.structs.replace(event, registration=made)
