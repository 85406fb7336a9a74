"""Passkeys' signatures (WebAuthn): what their challenge is, and the checks on their data alone.

A passkey signs through the browser, which will sign only a challenge of the relying party's
choosing inside its own client data. So the challenge of an operator's action is the SHA-256 of
:func:`~controller.security.signatures.signed_bytes` of the event and the signature's binding:
the very bytes an Ed25519 signer signs, so the binding (journal, target, window) is the same
and the ledger checks it with the same code (controller/ledger/binding.py). The web server only
relays the assertion: it holds nothing that lets it make one.

The data formats (the attestation object's CBOR, the COSE key, the authenticator data, the
client data JSON) are read by the ``webauthn`` package (py_webauthn), never by hand. This
module checks what the data alone can tell (docs/security.md, "Passkeys"): the client data's
type, challenge and origin, the relying party id's hash, the user presence and verification
flags, the signature by the credential's key. What needs the ledger's state (which credential
is enrolled, to whom, revoked or not, and its sign count) is controller/ledger/passkeys.py's.

Every base64url text must be the one spelling of its bytes, so that a journaled assertion
cannot be re-spelled into other text that still verifies.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import parse_attestation_object
from webauthn.helpers.exceptions import (
    InvalidAuthenticationResponse,
    InvalidRegistrationResponse,
    WebAuthnException,
)
from webauthn.helpers.structs import AttestationFormat

from controller.errors import InputError
from controller.security.signatures import signed_bytes

if TYPE_CHECKING:
    from controller.event_base import Binding, Signature
    from controller.events import AnyEvent, PasskeyEnrolled, PasskeyRegistration

ATTESTATIONS: Final = frozenset({AttestationFormat.NONE, AttestationFormat.PACKED})
"""The attestation formats taken: ``none``, and ``packed`` self-attestation (no certificate)."""


class PasskeyError(InputError, ValueError):
    """A passkey's registration or assertion that does not verify; the message says why."""


@dataclass(frozen=True, slots=True)
class Registered:
    """What a verified registration gives: the credential, its COSE key and its first count."""

    credential_id: str
    public_key: str
    sign_count: int


def b64url(data: bytes) -> str:
    """Base64url without padding, as WebAuthn writes it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str, what: str) -> bytes:
    """The bytes of a base64url text, refused unless it is their one spelling."""
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise PasskeyError(f"{what}: not base64url") from error
    if b64url(data) != text:
        raise PasskeyError(f"{what}: not the one base64url spelling of its bytes")
    return data


def assertion_challenge(event: AnyEvent, binding: Binding | None) -> bytes:
    """The challenge of a passkey's signature over ``event``: the digest of the bound bytes."""
    return hashlib.sha256(signed_bytes(event, binding)).digest()


def registration_challenge(event: PasskeyEnrolled, binding: Binding | None) -> bytes:
    """The challenge of an enrollment's registration: the enrollment's digest without it."""
    without = msgspec.structs.replace(event, registration=msgspec.UNSET)
    return hashlib.sha256(signed_bytes(without, binding)).digest()


def registered(
    registration: PasskeyRegistration, challenge: bytes, rp_id: str, origins: list[str]
) -> Registered:
    """Verify a registration made for ``challenge`` at ``rp_id`` from one of ``origins``."""
    attestation = from_b64url(registration.attestation_object, "attestation_object")
    from_b64url(registration.client_data_json, "client_data_json")
    from_b64url(registration.credential_id, "credential_id")
    try:
        parsed = parse_attestation_object(attestation)
    except WebAuthnException as error:
        raise PasskeyError(f"registration: the attestation object: {error}") from error
    if parsed.fmt not in ATTESTATIONS or parsed.att_stmt.x5c:
        # A certificate chain is valid until a date: a replay years later would refuse what
        # was taken, and the ledger must give the same answer whenever it replays.
        raise PasskeyError(
            f"registration: attestation {parsed.fmt!r}: only 'none' or 'packed' "
            "self-attestation is taken (a certificate chain depends on the day it is checked)"
        )
    credential = {
        "id": registration.credential_id,
        "rawId": registration.credential_id,
        "type": "public-key",
        "response": {
            "attestationObject": registration.attestation_object,
            "clientDataJSON": registration.client_data_json,
        },
    }
    try:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp_id,
            expected_origin=list(origins),
            require_user_verification=True,
        )
    except (InvalidRegistrationResponse, WebAuthnException) as error:
        raise PasskeyError(f"registration: {error}") from error
    return Registered(
        b64url(verified.credential_id), b64url(verified.credential_public_key), verified.sign_count
    )


def asserted(
    public_key: str, signature: Signature, challenge: bytes, rp_id: str, origins: tuple[str, ...]
) -> int:
    """Verify a passkey's assertion for ``challenge``; the sign count its authenticator gave.

    The count is the ledger's to judge (it holds the last one): it is read here only once the
    signature verified, so that a count that goes back is known to come from the credential's
    key, that is from a cloned authenticator, never from a forger.
    """
    assertion = signature.webauthn
    if isinstance(assertion, msgspec.UnsetType):
        raise PasskeyError("not a passkey's signature")
    for text, what in (
        (assertion.credential_id, "credential_id"),
        (assertion.authenticator_data, "authenticator_data"),
        (assertion.client_data_json, "client_data_json"),
        (signature.signature, "signature"),
    ):
        from_b64url(text, what)
    credential = {
        "id": assertion.credential_id,
        "rawId": assertion.credential_id,
        "type": "public-key",
        "response": {
            "authenticatorData": assertion.authenticator_data,
            "clientDataJSON": assertion.client_data_json,
            "signature": signature.signature,
        },
    }
    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp_id,
            expected_origin=list(origins),
            credential_public_key=from_b64url(public_key, "public_key"),
            credential_current_sign_count=0,  # judged by the ledger, after the signature
            require_user_verification=True,
        )
    except (InvalidAuthenticationResponse, WebAuthnException) as error:
        raise PasskeyError(str(error)) from error
    except (ValueError, KeyError, TypeError) as error:  # a COSE key or data it cannot read
        raise PasskeyError(f"unreadable: {error}") from error
    return verified.new_sign_count
