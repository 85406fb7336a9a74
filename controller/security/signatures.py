"""Operators' signatures over events: what is signed, how, and how it is checked.

An operator signs the event itself: :func:`signed_bytes` is a domain-separation prefix and
the event's canonical JSON (sorted keys, the journal's own encoding) with its ``signatures``
left out, so a signature covers every field (the event id, the time, the payout or pool it
names, the amount, the reason) and cannot be moved to another event or another field value.
An event signed by several operators (dual control) carries one signature each, all over the
same bytes. A resent event is the same event id: the journal applies it once.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Final

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.events import Signature, encode_event

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.events import AnyEvent

DOMAIN: Final = b"jackpotd operator signature v1\n"


def signed_bytes(event: AnyEvent) -> bytes:
    """What an operator signs: the event without its signatures, canonical, with a prefix."""
    if hasattr(event, "signatures"):
        event = msgspec.structs.replace(event, signatures=msgspec.UNSET)
    return DOMAIN + encode_event(event)


def signatures_of(event: AnyEvent) -> list[Signature]:
    """The signatures an event carries (none for an unsigned event)."""
    found = getattr(event, "signatures", msgspec.UNSET)
    return [] if found is msgspec.UNSET else list(found)


def sign(event: AnyEvent, operator: str, key: Ed25519PrivateKey) -> Signature:
    """``operator``'s signature over ``event``."""
    return Signature(operator, base64.b64encode(key.sign(signed_bytes(event))).decode())


def with_signature(event: AnyEvent, signature: Signature) -> AnyEvent:
    """The event with one more signature (a second operator co-signs the same bytes)."""
    return msgspec.structs.replace(event, signatures=[*signatures_of(event), signature])


def verifies(public_key: str, signature: Signature, event: AnyEvent) -> bool:
    """Whether ``signature`` is the holder of ``public_key`` signing ``event``."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(signature.signature, validate=True), signed_bytes(event))
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
