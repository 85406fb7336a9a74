"""What a property and central say to each other over a wide-area link (docs/wide-area.md).

A property's **site messages** (:class:`SiteMessage`) are numbered ``site_seq`` 1, 2, 3... and
chained: each carries the digest of the one before (``prev``; :data:`GENESIS` for the first),
and its own digest is SHA-256 over ``prev`` and the canonical JSON of everything else it says
(:func:`message_digest`). The property's controller key signs the digest (``signature``,
base64 Ed25519), so central can tell the property's history from a rewritten or forged one.

Central answers with cumulative acknowledgements (:class:`CentralAck`) and each award of a
property's hit (:class:`Award`), both signed with central's controller key, and the property
reports its totals after each reconnection (:class:`SiteTotals`), signed with its own, for
central to reconcile. Each connection of the property opens with its hello
(:class:`SiteHello`): a random nonce of that connection, which central signs into every
acknowledgement it sends after it, with a counter of its own that only grows, so that an
acknowledgement captured and published again later is told from a fresh one (docs/wide-area.md,
"A replayed acknowledgement"). After each hello and each head it signs, the property sends its
latest signed head (:class:`SiteHead`); central keeps the highest and answers every hello with
it (:class:`CentralMark`, naming the hello's nonce), so that a property whose journal, high-water
file and broker's copy were all rolled back is held to it at its next start (docs/security.md,
"History never goes back"). All are msgspec Structs, encoded as canonical
JSON (sorted keys, no spaces), money in integer cents, percentages as exact fractions (``"1/10"``).
"""

from __future__ import annotations

import hashlib
from typing import Final

import msgspec

from controller.signed_head import SignedHead

GENESIS: Final = "0" * 64
"""The ``prev`` of a property's first message."""


class Contribution(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="contribution"
):
    """A progressive wager locked at the property on a table of a wide-area pool."""

    pool_id: str
    table_id: str
    round_id: str
    seat: int
    wager_cents: int


class HitClaim(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="hit"
):
    """A round settled at the property with a meter line of a wide-area pool.

    ``percent`` of the meter as central holds it when it sequences the claim, shared ``ways``
    ways (the winners of that line in that round); ``cards`` the seven the seat held, so that
    central evaluates the hand against the pool's paytable itself.
    """

    pool_id: str
    table_id: str
    round_id: str
    seat: int
    line: str
    percent: str
    ways: int
    cards: tuple[str, ...]


SiteBody = Contribution | HitClaim


class SiteMessage(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="message"
):
    """One link of a property's chain (see the module docstring)."""

    site: str
    site_seq: int
    prev: str
    at: str
    body: SiteBody
    digest: str
    signature: str = ""
    """The property's controller key over ``digest`` (added at the edge that holds the key)."""

    def signed(self, signature: str) -> SiteMessage:
        """This message with its signature."""
        return msgspec.structs.replace(self, signature=signature)


class SiteTotals(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="totals"
):
    """What a property claims to have sent, through ``through``: central reconciles it.

    It travels on the same topic as the messages, after message ``through`` (so central judges
    it in order), and lists the hit claims still ``held`` for an award, which central answers
    from its journal (docs/wide-area.md, "The link's runtime").
    """

    site: str
    through: int
    head: str
    """The digest of message ``through`` (:data:`GENESIS` if none)."""
    contributions: int
    wager_cents: int
    hits: int
    held: tuple[int, ...] = ()
    signature: str = ""


class SiteHello(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="hello"
):
    """The property's connection to central begins: acknowledge it under ``nonce`` from now on.

    Never journaled (at either end): it binds the live acknowledgements to one connection of
    the property, and a new connection, or a central that lost it, gets a new one.
    """

    site: str
    nonce: str
    """Random, chosen by the property for this connection (128 bits, hex)."""
    signature: str = ""
    """The property's controller key over the rest: no one else chooses its nonce."""


class SiteHead(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="head"
):
    """The property's latest signed head (its high-water mark), for central to keep.

    ``head`` is the signed head the property's runtime made (controller/journal/high_water.py),
    signed by its controller key under the head's own domain; the property's key also signs the
    whole (``signature``), as it signs its hello. Sent after each head is signed and after each
    hello; never journaled at either end. Central keeps the highest valid one per property and
    answers it to the property's next start (:class:`CentralMark`, docs/security.md, "History
    never goes back").
    """

    site: str
    head: SignedHead
    signature: str = ""


SiteUp = SiteMessage | SiteTotals | SiteHello | SiteHead
"""What a property publishes on ``wide/<site>/up``, in order."""

ACK_UNBOUND: Final = 1
"""The first acknowledgement format: its signature covers its content alone."""
ACK_FRESH: Final = 2
"""The format central sends: its signature covers the property's connection nonce and its
counter too (:class:`CentralAck`)."""


class CentralAck(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Every message of ``site`` through ``through`` is journaled at central, once.

    ``head`` is the digest central holds for it, ``journal_seq`` and ``epoch`` central's row and
    sequencer epoch; ``reconciled_through`` the last ``site_seq`` a matched reconciliation
    covered (0 if none since central started following the property).
    """

    site: str
    through: int
    head: str
    journal_seq: int
    epoch: int
    reconciled_through: int
    signature: str = ""
    """Central's controller key over the rest (:func:`signed_bytes`): a device that can
    publish on the property's topics cannot forge an acknowledgement that trims its outbox."""
    nonce: str = ""
    """The property's connection this answers (its :class:`SiteHello`); "" if central has
    heard none from it since central started."""
    counter: int = 0
    """Central's, per property: greater in each acknowledgement than in any before it."""
    version: int = ACK_UNBOUND
    """:data:`ACK_FRESH` for one that carries ``nonce`` and ``counter`` under its signature."""


class CentralMark(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="mark"
):
    """Central's answer to a property's hello: the highest signed head it keeps of the property.

    On ``wide/<site>/mark``, after every hello, naming that hello's ``nonce``: a property that
    starts says hello with a new nonce and takes only the answer naming it, so an answer of an
    earlier start published again (holding a lower mark) is told from the fresh one. ``head`` is
    None while central keeps none of the property.
    """

    site: str
    nonce: str
    head: SignedHead | None = None
    signature: str = ""
    """Central's controller key over the rest (:func:`signed_bytes`)."""


class Award(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Central paid the property's hit claim ``claim_seq`` from the wide-area meter."""

    site: str
    claim_seq: int
    hit_id: str
    pool_id: str
    line: str
    """The paytable line central found the claim's cards make at its meter."""
    amount_cents: int
    """What central's meter pays (0 when the best line at its meter is a fixed pay)."""
    journal_seq: int
    epoch: int
    signature: str = ""
    """Central's controller key over the rest (:func:`signed_bytes`)."""


_ENCODER = msgspec.json.Encoder(order="sorted")


def canonical(value: msgspec.Struct) -> bytes:
    """Sorted keys, no spaces: the bytes that are hashed and signed."""
    return _ENCODER.encode(value)


def message_digest(site: str, site_seq: int, prev: str, at: str, body: SiteBody) -> str:
    """SHA-256 (hex) over ``prev`` and the canonical JSON of the message's other fields."""
    said = _ENCODER.encode({"site": site, "site_seq": site_seq, "at": at, "body": body})
    return hashlib.sha256(prev.encode("ascii") + b"\n" + said).hexdigest()


def next_message(site: str, site_seq: int, prev: str, at: str, body: SiteBody) -> SiteMessage:
    """The message ``site_seq`` after one whose digest is ``prev``, its digest computed."""
    digest = message_digest(site, site_seq, prev, at, body)
    return SiteMessage(site, site_seq, prev, at, body, digest)


def digest_holds(message: SiteMessage) -> bool:
    """Whether the message's digest is the one its fields give."""
    found = message_digest(message.site, message.site_seq, message.prev, message.at, message.body)
    return found == message.digest


_UNBOUND_ACK_FIELDS: Final = (
    "site", "through", "head", "journal_seq", "epoch", "reconciled_through", "signature",
)  # fmt: skip
"""What an :data:`ACK_UNBOUND` acknowledgement held, and its signature covered."""


def signed_bytes(
    said: SiteTotals | CentralAck | Award | SiteHello | SiteHead | CentralMark,
) -> bytes:
    """What a key signs of totals, an acknowledgement, an award or a hello: all but the signature.

    An acknowledgement of the first format is signed as it always was (the fields it had), so
    that one still verifies as central's and is then refused for what it lacks.
    """
    unsigned = msgspec.structs.replace(said, signature="")
    if isinstance(unsigned, CentralAck) and unsigned.version == ACK_UNBOUND:
        return _ENCODER.encode({name: getattr(unsigned, name) for name in _UNBOUND_ACK_FIELDS})
    return canonical(unsigned)


totals_bytes = signed_bytes
"""The property's totals, as its key signs them."""


_UP = msgspec.json.Decoder(SiteUp)
_MESSAGE = msgspec.json.Decoder(SiteMessage)
_TOTALS = msgspec.json.Decoder(SiteTotals)
_ACK = msgspec.json.Decoder(CentralAck)
_AWARD = msgspec.json.Decoder(Award)
_MARK = msgspec.json.Decoder(CentralMark)


def decode_up(data: bytes) -> SiteUp:
    """A property's message or totals, told apart by ``kind``."""
    return _UP.decode(data)


def decode_message(data: bytes) -> SiteMessage:
    """A site message; :class:`msgspec.ValidationError` or ``DecodeError`` naming what is wrong."""
    return _MESSAGE.decode(data)


def decode_totals(data: bytes) -> SiteTotals:
    """A property's totals."""
    return _TOTALS.decode(data)


def decode_ack(data: bytes) -> CentralAck:
    """Central's acknowledgement."""
    return _ACK.decode(data)


def decode_award(data: bytes) -> Award:
    """Central's award of a hit claim."""
    return _AWARD.decode(data)


def decode_mark(data: bytes) -> CentralMark:
    """Central's answer to a hello: the mark it keeps of the property."""
    return _MARK.decode(data)
