"""A sealed draw handed to the next keeper: its trigger and nonce encrypted for the cluster.

Under high availability (docs/ha.md) each node has its own controller key and its own keeper
(its signer process), and a node that takes over must go on with the level's committed trigger
(docs/rules.md § 10): a new draw would let whoever can crash the leader draw again until a
trigger suits them. So at each draw the keeper that drew it seals the trigger and nonce in an
**envelope** for the cluster's keepers, and the journal records the envelope with the draw
(``mystery-drawn``); the next leader's keeper opens it (:func:`open_envelope`) and holds the
draw as its own, its view of the meter the journal's.

**The sealing key** is a secret the cluster's keepers share and nobody else holds: 32 random
bytes in a file of the signer's own user (``jackpotd key generate --sealing``, the same file on
every node, as a broker password is), never readable by the service user, which writes the
journal. :func:`envelope_key` derives the AEAD key from it (HKDF-SHA256, its own ``info``), so
the secret is used for nothing else.

**The envelope** is ChaCha20-Poly1305 over the canonical JSON ``{"nonce": ..., "trigger": ...}``
with a fresh 96-bit nonce, its associated data :data:`ENVELOPE_DOMAIN` and the draw statement's
signed bytes (:func:`~controller.mystery.core.drawn_bytes`): an envelope opens only for the one
draw it was sealed with, so one copied onto another draw, level or journal is refused. Opened,
its trigger and nonce must open the draw's commitment and the trigger lie in the draw's range:
a keeper never holds a trigger the journal did not commit to. The journal, a reader of it, or a
shell as the service user learns nothing of the trigger from it without the sealing key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Final

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from controller.mystery.core import (
    Drawn,
    MysteryInputError,
    MysteryRefusedError,
    Sealed,
    commitment,
    drawn_bytes,
)

ENVELOPE_DOMAIN: Final = b"jackpotd mystery envelope v1\n"
"""The tag the envelope's associated data starts with."""
KEY_INFO: Final = b"jackpotd mystery sealing key v1"
"""HKDF's ``info`` for the envelope's key: the sealing secret serves nothing else."""
ID_DOMAIN: Final = b"jackpotd mystery sealing key id v1\n"
SECRET_BYTES: Final = 32
NONCE_BYTES: Final = 12
_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


class Envelope(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A draw's trigger and nonce sealed for the keepers that hold sealing key ``key_id``."""

    key_id: str
    nonce: str
    sealed: str


class _Secret(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    nonce: str
    trigger: int


@dataclass(frozen=True, slots=True, repr=False)
class SealingKey:
    """The cluster's keepers' shared secret (see the module docstring)."""

    secret: bytes

    def __post_init__(self) -> None:
        if len(self.secret) != SECRET_BYTES:
            raise MysteryInputError(f"a sealing key is {SECRET_BYTES} bytes")

    def __repr__(self) -> str:
        """Without the secret: a key in a traceback shows its id only."""
        return f"SealingKey({self.key_id})"

    @classmethod
    def generate(cls) -> SealingKey:
        """A new sealing key from the operating system's CSPRNG."""
        return cls(secrets.token_bytes(SECRET_BYTES))

    @property
    def key_id(self) -> str:
        """16 hex digits naming the key (a hash: it reveals nothing of the secret)."""
        return hashlib.sha256(ID_DOMAIN + self.secret).hexdigest()[:16]


def envelope_key(key: SealingKey) -> ChaCha20Poly1305:
    """The AEAD key the sealing secret derives (HKDF-SHA256, :data:`KEY_INFO`)."""
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEY_INFO)
    return ChaCha20Poly1305(derived.derive(key.secret))


def _associated(drawn: Drawn) -> bytes:
    return ENVELOPE_DOMAIN + drawn_bytes(drawn)


def seal_envelope(key: SealingKey, sealed: Sealed) -> Envelope:
    """The envelope of ``sealed``'s trigger and nonce, for the keepers holding ``key``."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = _CANONICAL.encode(_Secret(sealed.nonce, sealed.trigger))
    box = envelope_key(key).encrypt(nonce, plain, _associated(sealed.drawn))
    return Envelope(key.key_id, base64.b64encode(nonce).decode(), base64.b64encode(box).decode())


def open_envelope(key: SealingKey, drawn: Drawn, envelope: Envelope) -> Sealed:
    """The draw as its keeper holds it, from its envelope; refused unless it is this draw's.

    Refused: another sealing key's envelope, one that does not decrypt with this draw's
    statement (tampered, or sealed for another draw), and a trigger and nonce that do not open
    the draw's commitment or a trigger outside its range.
    """
    if envelope.key_id != key.key_id:
        raise MysteryRefusedError(
            f"the envelope is sealed for key {envelope.key_id}, the keeper holds {key.key_id}"
        )
    try:
        nonce = base64.b64decode(envelope.nonce, validate=True)
        box = base64.b64decode(envelope.sealed, validate=True)
        plain = envelope_key(key).decrypt(nonce, box, _associated(drawn))
        secret = msgspec.json.decode(plain, type=_Secret)
    except (binascii.Error, ValueError, InvalidTag, msgspec.MsgspecError) as error:
        raise MysteryRefusedError(
            f"the envelope of draw {drawn.draw} of {drawn.pool} does not open with this draw "
            "(tampered with, or sealed for another draw)"
        ) from error
    opened = commitment(drawn.key, secret.trigger, secret.nonce)
    if not hmac.compare_digest(opened, drawn.commitment):
        raise MysteryRefusedError(
            f"the envelope of draw {drawn.draw} of {drawn.pool} holds a trigger the draw's "
            "commitment was not made over"
        )
    if not drawn.floor <= secret.trigger < drawn.ceiling:
        raise MysteryRefusedError(
            f"the envelope of draw {drawn.draw} of {drawn.pool} holds a trigger outside "
            f"[{drawn.floor}, {drawn.ceiling})"
        )
    return Sealed(drawn, secret.trigger, secret.nonce)
