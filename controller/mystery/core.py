"""The sealed trigger's pure core: the draw, the commitment, the reveal, and how each is checked.

**The draw.** :func:`draw_trigger` is ``floor + secrets.randbelow(ceiling - floor)``:
``randbelow`` rejects out-of-range samples of ``getrandbits`` instead of reducing them modulo
the span, so every cent of ``[floor, ceiling)`` has probability exactly ``1 / (ceiling -
floor)`` (no modulo bias), and its bits come from the operating system's CSPRNG, which nobody
can seed or predict. The nonce is 32 bytes of the same source.

**The commitment.** :func:`commitment` is the SHA-256 of :data:`COMMITMENT_DOMAIN` and the
canonical JSON (keys sorted, no spaces) of the journal's identity, the pool, the level, the
draw number, the trigger in cents and the nonce (hex). The domain keeps it from ever meaning
anything else the controller hashes; the journal, pool, level and draw bind it to one draw of
one level of one journal, so that a reveal of another draw never opens it; the nonce (256
random bits) keeps the trigger from being found by hashing each cent of the range, which a
bare hash of a few million candidates would allow in a second.

**The draw statement.** :class:`Drawn` is what the journal records at the draw: the level's
range, the commitment, and the controller key's Ed25519 signature over :data:`DRAW_DOMAIN` and
the canonical JSON of every other field (:func:`drawn_bytes`), signed as a checkpoint is, by
the signer. The trigger and the nonce are not in it.

**The reveal.** :class:`Reveal` is what the journal records at the hit: the trigger, the
nonce, and the meter that reached it. :func:`reveal_holds` is every check anyone runs on a
reveal against its draw, each failure in words: the signature, the identity (another journal,
pool, level or draw), the commitment (a wrong nonce or trigger), the range, the meter.
:func:`hit_holds` adds the contributions' meters since the draw: the hit is the first of them
to reach the trigger (:func:`first_reaching`).

**Meters.** A contribution can carry a fraction of a cent (a rate of progression of 1/30 of a
wager), so a meter is exact: :class:`Meter` is whole cents and a fraction ``numerator /
denominator`` in ``[0, 1)``. The trigger is whole cents, so a meter reaches it exactly when
its whole cents do; the fraction orders two meters of the same cents (the keeper's
monotonic rule, controller/mystery/keeper.py).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from fractions import Fraction
from typing import TYPE_CHECKING, Final

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.errors import InputError, RefusedError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

COMMITMENT_DOMAIN: Final = b"jackpotd mystery commitment v1\n"
"""The tag the commitment's hash starts with (never the bytes of any other statement)."""
DRAW_DOMAIN: Final = b"jackpotd mystery draw v1\n"
"""The tag the draw statement's signed bytes start with (never a checkpoint's or a meter's)."""
NONCE_BYTES: Final = 32
_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


class MysteryInputError(InputError, ValueError):
    """A draw, a query or a reveal that is not well formed: the message says which field."""


class MysteryRefusedError(RefusedError, ValueError):
    """The keeper refused a draw or a query: the message says why; nothing was drawn or spent."""


class Meter(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A level's meter, exact: ``cents`` and the carried fraction ``numerator / denominator``.

    Integers only (money is never a float); the fraction is in ``[0, 1)``.
    """

    cents: int
    numerator: int = 0
    denominator: int = 1

    def exact(self) -> Fraction:
        """The meter as one exact number of cents (for ordering two meters)."""
        return self.cents + Fraction(self.numerator, self.denominator)

    def reaches(self, trigger: int) -> bool:
        """Whether the meter is at or past ``trigger`` (whole cents: the fraction cannot matter)."""
        return self.cents >= trigger

    def problem(self) -> str | None:
        """Why this is no meter (None: it is one)."""
        values = (self.cents, self.numerator, self.denominator)
        if any(type(value) is not int for value in values):
            return "a meter is integers (cents, numerator, denominator)"
        if self.cents < 0:
            return f"a meter of {self.cents} cents (never below zero)"
        if self.denominator < 1 or not 0 <= self.numerator < self.denominator:
            return (
                f"a carried fraction of {self.numerator}/{self.denominator} "
                "(in [0, 1), the denominator at least 1)"
            )
        return None


class DrawKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Which draw: of one level of one pool of one journal, numbered from 1 at each reseed."""

    journal: str
    pool: str
    level: str
    draw: int


class DrawRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The daemon's request for a level's next draw: who asks, which draw, the level's range."""

    controller: str
    journal: str
    pool: str
    level: str
    draw: int
    floor: int
    ceiling: int
    key_id: str
    at: str

    @property
    def key(self) -> DrawKey:
        """The draw this request is for."""
        return DrawKey(self.journal, self.pool, self.level, self.draw)

    def problem(self) -> str | None:
        """Why the request cannot be drawn (None: it can)."""
        if not (self.journal and self.pool and self.level and self.controller):
            return "a draw names its controller, journal, pool and level"
        if type(self.draw) is not int or self.draw < 1:
            return f"draw number {self.draw} (draws are numbered from 1)"
        if type(self.floor) is not int or type(self.ceiling) is not int:
            return "a level's floor and ceiling are whole cents"
        if not 0 <= self.floor < self.ceiling:
            return (
                f"a level from {self.floor} to {self.ceiling} cents (the floor at least 0 and "
                "below the ceiling)"
            )
        return None


class Drawn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The draw as the journal records it: its range, the commitment, the controller's signature.

    Everything here is public: the trigger is not, and cannot be found from it (the nonce).
    """

    controller: str
    journal: str
    pool: str
    level: str
    draw: int
    floor: int
    ceiling: int
    commitment: str
    key_id: str
    at: str
    signature: str = ""

    @property
    def key(self) -> DrawKey:
        """The draw this is."""
        return DrawKey(self.journal, self.pool, self.level, self.draw)


class Reveal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The trigger and nonce opened at the hit, with the meter that reached the trigger."""

    journal: str
    pool: str
    level: str
    draw: int
    trigger: int
    nonce: str
    hit: Meter

    @property
    def key(self) -> DrawKey:
        """The draw this opens."""
        return DrawKey(self.journal, self.pool, self.level, self.draw)


class Sealed(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A draw as its keeper holds it: the public statement, the secret, and the meter it saw.

    ``last`` is the highest meter asked about (None: none yet), ``hit`` the meter that reached
    the trigger (None: the draw is still sealed). Never leaves the keeper before the hit.
    """

    drawn: Drawn
    trigger: int
    nonce: str
    last: Meter | None = None
    hit: Meter | None = None

    def __repr__(self) -> str:
        """Without the secret: a sealed draw in a traceback or a log line shows no trigger."""
        return f"Sealed({self.drawn.key!r}, spent={self.hit is not None})"

    def reveal(self) -> Reveal:
        """The reveal of a spent draw."""
        if self.hit is None:
            raise MysteryInputError("a draw is revealed only at its hit")
        key = self.drawn.key
        return Reveal(
            key.journal, key.pool, key.level, key.draw, self.trigger, self.nonce, self.hit
        )


def draw_trigger(floor: int, ceiling: int) -> int:
    """A trigger uniform in ``[floor, ceiling)`` to the cent, from the CSPRNG, without bias."""
    if not 0 <= floor < ceiling:
        raise MysteryInputError(f"a level from {floor} to {ceiling} cents")
    return floor + secrets.randbelow(ceiling - floor)


def new_nonce() -> str:
    """32 random bytes from the CSPRNG, hex."""
    return secrets.token_hex(NONCE_BYTES)


def commitment(key: DrawKey, trigger: int, nonce: str) -> str:
    """The SHA-256 (hex) that binds ``trigger`` to draw ``key`` (see the module docstring)."""
    fields = {
        "journal": key.journal,
        "pool": key.pool,
        "level": key.level,
        "draw": key.draw,
        "trigger": trigger,
        "nonce": nonce,
    }
    return hashlib.sha256(COMMITMENT_DOMAIN + _CANONICAL.encode(fields)).hexdigest()


def drawn_bytes(drawn: Drawn) -> bytes:
    """What the controller key signs of a draw: the domain and every field but the signature."""
    fields = msgspec.structs.asdict(drawn)
    del fields["signature"]
    return DRAW_DOMAIN + _CANONICAL.encode(fields)


def seal(request: DrawRequest, sign: Callable[[bytes], str]) -> Sealed:
    """A new draw for ``request``: the trigger and nonce drawn, committed to and signed."""
    reason = request.problem()
    if reason is not None:
        raise MysteryInputError(reason)
    trigger = draw_trigger(request.floor, request.ceiling)
    nonce = new_nonce()
    unsigned = Drawn(
        request.controller, request.journal, request.pool, request.level, request.draw,
        request.floor, request.ceiling, commitment(request.key, trigger, nonce),
        request.key_id, request.at,
    )  # fmt: skip
    drawn = msgspec.structs.replace(unsigned, signature=sign(drawn_bytes(unsigned)))
    return Sealed(drawn, trigger, nonce)


def drawn_signature_holds(drawn: Drawn, public_keys: Iterable[str]) -> str | None:
    """Why ``drawn``'s signature is not the controller's (None: it verifies under a key given)."""
    try:
        signature = base64.b64decode(drawn.signature, validate=True)
    except (ValueError, binascii.Error):
        return "the draw's signature is not base64"
    for public_key in public_keys:
        try:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key))
            key.verify(signature, drawn_bytes(drawn))
        except (InvalidSignature, ValueError, binascii.Error):
            continue
        return None
    return "the draw's signature verifies under none of the controller's public keys"


def reveal_holds(
    drawn: Drawn, reveal: Reveal, public_keys: Iterable[str] | None = None
) -> str | None:
    """Why ``reveal`` does not open ``drawn`` (None: it does).

    Each way a reveal can lie: a draw of another journal, pool, level or draw number; a
    trigger or nonce the commitment was not made over; a trigger outside ``[floor,
    ceiling)``; a hit meter below the trigger; and, with ``public_keys``, a draw statement the
    controller key did not sign.
    """
    if public_keys is not None:
        reason = drawn_signature_holds(drawn, public_keys)
        if reason is not None:
            return reason
    for field in ("journal", "pool", "level", "draw"):
        theirs, ours = getattr(reveal, field), getattr(drawn, field)
        if theirs != ours:
            return f"the reveal is of {field} {theirs!r}, the draw of {field} {ours!r}"
    if not _HEX64.fullmatch(reveal.nonce):
        return "the reveal's nonce is not 32 bytes of hex"
    if type(reveal.trigger) is not int:
        return "the reveal's trigger is not whole cents"
    opened = commitment(drawn.key, reveal.trigger, reveal.nonce)
    if not hmac.compare_digest(opened, drawn.commitment):
        return (
            "the trigger and nonce revealed do not open the draw's commitment (another "
            "trigger, or another nonce)"
        )
    if not drawn.floor <= reveal.trigger < drawn.ceiling:
        return (
            f"the trigger {reveal.trigger} is outside the level's range [{drawn.floor}, "
            f"{drawn.ceiling})"
        )
    problem = reveal.hit.problem()
    if problem is not None:
        return f"the hit: {problem}"
    if not reveal.hit.reaches(reveal.trigger):
        return f"the hit's meter {reveal.hit.cents} is below the trigger {reveal.trigger}"
    return None


def first_reaching(meters: Sequence[Meter], trigger: int) -> int | None:
    """The index of the first meter at or past ``trigger`` (None: none reaches it)."""
    for index, meter in enumerate(meters):
        if meter.reaches(trigger):
            return index
    return None


def hit_holds(
    drawn: Drawn,
    reveal: Reveal,
    meters: Sequence[Meter],
    public_keys: Iterable[str] | None = None,
) -> str | None:
    """Why the hit is not the one the draw makes (None: it is).

    ``meters``: the level's meter after each event that fed it since the draw, in the
    journal's order: the meters the keeper was asked at (a lock of several seats is one event,
    asked about once, at the meter after its last seat). Besides :func:`reveal_holds`: they
    never go down, and the reveal's hit is the first of them to reach the trigger (the first
    contribution of that event to reach it is the winner).
    """
    reason = reveal_holds(drawn, reveal, public_keys)
    if reason is not None:
        return reason
    for index in range(1, len(meters)):
        if meters[index].exact() < meters[index - 1].exact():
            return f"the meter goes down at contribution {index}"
    first = first_reaching(meters, reveal.trigger)
    if first is None:
        return f"no contribution reaches the trigger {reveal.trigger}"
    if meters[first].exact() != reveal.hit.exact():
        return (
            f"the first contribution to reach the trigger is number {first} (meter "
            f"{meters[first].cents}), not the one the hit names (meter {reveal.hit.cents})"
        )
    return None
