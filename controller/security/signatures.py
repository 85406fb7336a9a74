"""Operators' signatures over events: what is signed, how, and how it is checked.

An operator signs the event itself and where and when it is valid. :func:`signed_bytes` is a
domain-separation prefix, the signature's :class:`~controller.event_base.Binding` (the
journal's identity, the target state the action was signed against, and the validity window)
and the event's canonical JSON (sorted keys, the journal's own encoding) with its
``signatures`` left out. So a signature covers every field (the event id, the time, the payout
or pool it names, the amount, the reason), cannot be moved to another event or another field
value, and is valid in one journal, against one state, for a bounded time: the ledger checks
each part of the binding (:mod:`controller.ledger.binding`).

A signature made before signatures were bound carries no binding and was made over the first
form, the prefix ``v1`` and the event: it verifies as it always did, and the ledger accepts it
only on a journal that has no identity (one written before identities existed, replaying as
it was written). An event signed by several operators (dual control) carries one signature
each; a resent event is the same event id, which the ledger applies once, ever.

A passkey (WebAuthn) signs the SHA-256 of the same bound bytes as its challenge
(:mod:`controller.security.webauthn_signatures`): a :class:`Signature` with ``webauthn`` set.
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

    from controller.event_base import Binding
    from controller.events import AnyEvent

DOMAIN: Final = b"jackpotd operator signature v1\n"
"""The prefix of an unbound signature (made before bindings existed)."""
BOUND_DOMAIN: Final = b"jackpotd operator signature v2\n"
"""The prefix of a bound signature: the binding's canonical JSON and a newline follow it."""

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


def signed_bytes(event: AnyEvent, binding: Binding | None = None) -> bytes:
    """What an operator signs: the binding (if any) and the event without its signatures."""
    if hasattr(event, "signatures"):
        event = msgspec.structs.replace(event, signatures=msgspec.UNSET)
    if binding is None:
        return DOMAIN + encode_event(event)
    return BOUND_DOMAIN + _CANONICAL.encode(binding) + b"\n" + encode_event(event)


def signatures_of(event: AnyEvent) -> list[Signature]:
    """The signatures an event carries (none for an unsigned event)."""
    found = getattr(event, "signatures", msgspec.UNSET)
    return [] if found is msgspec.UNSET else list(found)


def sign(
    event: AnyEvent, operator: str, key: Ed25519PrivateKey, binding: Binding | None = None
) -> Signature:
    """``operator``'s signature over ``event``, bound to ``binding`` when one is given."""
    data = base64.b64encode(key.sign(signed_bytes(event, binding))).decode()
    if binding is None:
        return Signature(operator, data)
    return Signature(operator, data, binding)


def with_signature(event: AnyEvent, signature: Signature) -> AnyEvent:
    """The event with one more signature (a second operator co-signs the same event)."""
    return msgspec.structs.replace(event, signatures=[*signatures_of(event), signature])


def binding_of(signature: Signature) -> Binding | None:
    """The binding a signature carries; None for one made before bindings existed."""
    return None if signature.binding is msgspec.UNSET else signature.binding


def is_passkey(signature: Signature) -> bool:
    """Whether ``signature`` is a passkey's assertion (WebAuthn) rather than an Ed25519 one."""
    return signature.webauthn is not msgspec.UNSET


def verifies(public_key: str, signature: Signature, event: AnyEvent) -> bool:
    """Whether ``signature`` is the holder of Ed25519 ``public_key`` signing ``event``.

    A passkey's assertion never does: the ledger checks it against the enrolled credential
    (controller/ledger/passkeys.py).
    """
    if is_passkey(signature):
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        data = signed_bytes(event, binding_of(signature))
        key.verify(base64.b64decode(signature.signature, validate=True), data)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
