"""The controller's signature on the meters and hits it publishes: what is signed, how checked.

The meters and pool statuses the controller publishes leave the box (``meter/<pool>`` and
``meter/<pool>/status`` on the broker, docs/mqtt.md; the display page's ``/events``), and a
follower applies them in increasing ``(epoch, seq)`` (:class:`controller.outputs.FollowerOrder`).
Anyone who can publish on a meter topic could otherwise show a fake amount on every sign and,
with a huge ``(epoch, seq)``, make the signs ignore every genuine meter after it. So the
controller signs each one with its own key (controller/security/controller_key.py), and a
follower checks the signature against the controller public keys it was given *before* the
order rule sees the payload: an unsigned or forged payload never raises the order.

A hit (``meter/<pool>/hit``) is signed the same way under :data:`HIT_DOMAIN`, and names the
controller that announces it (``controller``) besides its pool, payout id and ``(epoch, seq)``:
anyone who can publish there could otherwise make every sign celebrate a jackpot that never
happened. A hit is an event, not a state, so no order replaces an old one: a follower refuses
one older than it will still celebrate (:data:`HIT_MAX_AGE_S`, by its signed ``at``) and shows
each payout id once (drivers/mqtt/hits.py).

What is signed is a domain (:data:`METER_DOMAIN`, :data:`POOL_STATUS_DOMAIN`,
:data:`HIT_DOMAIN`: a meter's signature is never a pool status's or a hit's, nor a
checkpoint's) followed by the canonical JSON (keys
sorted, no spaces) of every field of the payload but ``sig``, ``key_id`` included. ``sig`` is
the base64 Ed25519 signature, ``key_id`` the first 16 hex digits of the SHA-256 of the raw
public key, as a checkpoint names its key.

This module is vocabulary, so that the MQTT driver (which may not import the security layer,
docs/architecture.md) reaches it: the service hands a sink only the key's ``sign`` function
(:class:`MeterSigning`), never the key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping

SIGNED_VERSION: Final = 2
"""The schema version ``v`` of a signed meter or pool status (an unsigned one is 1)."""
METER_DOMAIN: Final = b"jackpotd meter v2\n"
POOL_STATUS_DOMAIN: Final = b"jackpotd pool status v2\n"
HIT_DOMAIN: Final = b"jackpotd hit v2\n"
HIT_MAX_AGE_S: Final = 300.0
"""A signed hit dated (its ``at``) more than this long ago is refused as stale: replayed, or
held back so long that celebrating it now would announce a jackpot of the past."""
SIGNATURE: Final = "sig"
KEY_ID: Final = "key_id"

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


def signed_bytes(domain: bytes, fields: Mapping[str, Any]) -> bytes:
    """What the controller signs: ``domain`` and the canonical JSON of ``fields`` but ``sig``."""
    return domain + _CANONICAL.encode({k: v for k, v in fields.items() if k != SIGNATURE})


def public_key_id(public_key: str) -> str:
    """The id of a public key (base64 of its raw bytes): 16 hex digits of its SHA-256."""
    return hashlib.sha256(base64.b64decode(public_key)).hexdigest()[:16]


class SigningKey(Protocol):
    """What :meth:`Signer.of` needs of a key: its id and its ``sign``."""

    @property
    def key_id(self) -> str:
        """The key's id."""
        ...

    def sign(self, data: bytes) -> str:
        """The signature of ``data``, base64."""
        ...


@runtime_checkable
class AsyncSigning(Protocol):
    """A key held elsewhere (the signer process): its signature is awaited, not waited for."""

    async def sign_async(self, data: bytes) -> str:
        """The signature of ``data``, base64, without blocking the event loop."""
        ...


@dataclass(frozen=True, slots=True)
class Signer:
    """The controller key's id and its ``sign(data) -> base64`` function (not the key).

    ``sign_async``, when the key is held by the signer process, is the same signature awaited
    on the event loop (controller/runtime/remote_signer.py); a key in the process has none,
    and its ``sign`` (tens of microseconds) is called in place.
    """

    key_id: str
    sign: Callable[[bytes], str]
    sign_async: Callable[[bytes], Awaitable[str]] | None = None

    @classmethod
    def of(cls, key: SigningKey) -> Signer:
        """The signer of ``key``: its ``sign``, and its ``sign_async`` if it has one."""
        awaited = key.sign_async if isinstance(key, AsyncSigning) else None
        return cls(key.key_id, key.sign, awaited)

    def signed(self, domain: bytes, fields: Mapping[str, Any]) -> dict[str, Any]:
        """``fields`` with this key's ``key_id`` and the ``sig`` over them."""
        named = {**fields, KEY_ID: self.key_id}
        return {**named, SIGNATURE: self.sign(signed_bytes(domain, named))}

    async def signed_async(self, domain: bytes, fields: Mapping[str, Any]) -> dict[str, Any]:
        """As :meth:`signed`, the signature awaited when the key is held elsewhere."""
        named = {**fields, KEY_ID: self.key_id}
        data = signed_bytes(domain, named)
        signature = await self.sign_async(data) if self.sign_async else self.sign(data)
        return {**named, SIGNATURE: signature}


@runtime_checkable
class MeterSigning(Protocol):
    """A sink that publishes meters off the box: the service gives it the controller's signer."""

    def sign_meters(self, signer: Signer) -> None:
        """Sign every meter, pool status and hit published from now on."""
        ...


class MeterKeys:
    """The controller public keys a follower trusts (one per node of a cluster), by key id."""

    def __init__(self, public_keys: Iterable[str]) -> None:
        self.keys: dict[str, Ed25519PublicKey] = {}
        for text in public_keys:
            raw = base64.b64decode(text, validate=True)  # ValueError if it is no base64
            self.keys[public_key_id(text)] = Ed25519PublicKey.from_public_bytes(raw)
        if not self.keys:
            raise ValueError("no controller public key to check the meters with")

    def refusal(self, domain: bytes, fields: Mapping[str, Any]) -> str | None:
        """Why a decoded payload is not the controller's; None if its signature holds."""
        signature, key_id = fields.get(SIGNATURE), fields.get(KEY_ID)
        if fields.get("v") != SIGNED_VERSION or not signature or not key_id:
            return "unsigned"
        key = self.keys.get(key_id) if isinstance(key_id, str) else None
        if key is None:
            return f"signed by key {str(key_id)[:16]!r}, not a controller key of this station"
        if not isinstance(signature, str):
            return "a signature that is not text"
        try:
            key.verify(base64.b64decode(signature, validate=True), signed_bytes(domain, fields))
        except (InvalidSignature, ValueError, binascii.Error):
            return f"a signature that does not verify under key {key_id}"
        return None
