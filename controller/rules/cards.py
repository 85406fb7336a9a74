"""Cards of the 53-card Pai Gow deck (52 plus one joker) and validated seven-card hands.

Every card has a dense index, ``rank_index * 4 + suit_index`` for the 52 natural cards and
``52`` for the joker, so that the rules engine can look cards up in flat tables. Cards are
interned: ``Card.parse("As") is DECK[51]``.

A card's code is the card-shoe wire format, and the form the journal writes: rank
``A K Q J T 9 .. 2`` in upper case followed by suit ``s h d c`` in lower case; the joker is
``Jk``. Those 53 codes are the only ones :meth:`Card.parse` (and so every device path and the
ledger) accepts: no other letter case, no ``10`` for ten, no surrounding space, and no
Unicode case folding (``A`` then U+017F, the long s, upper-cases to ``AS`` but is no card). A
device that sends anything else is wrong, and is refused rather than guessed at
(docs/faults.md, "Strict card codes").

People typing at the command line get :meth:`Card.parse_lenient`: any ASCII letter case and
``10`` for ten.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, Final

from controller.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class CardError(InputError, ValueError):
    """A card code that names no card of the deck."""


class HandError(InputError, ValueError):
    """A set of cards that is not a valid hand (wrong count, duplicate card, two jokers)."""


class Rank(IntEnum):
    """Card ranks, valued so that a higher rank compares higher; the ace is high."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        """The one-character code of the rank (``T`` for ten)."""
        return _RANK_SYMBOLS[self - 2]

    @property
    def index(self) -> int:
        """0 for the two up to 12 for the ace."""
        return self - 2


class Suit(IntEnum):
    """The four suits; the order only fixes card indices and carries no rank."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        """The one-letter code of the suit."""
        return _SUIT_SYMBOLS[self]


class JokerMode(Enum):
    """How the joker plays: the seeds' default "bug", or fully wild (some progressive tables)."""

    SEMI_WILD = "semi-wild"
    """Plays as an ace, or as any card that completes a straight, flush or straight flush."""
    FULLY_WILD = "fully-wild"
    """Plays as any card, so five of a kind exists."""


_RANK_SYMBOLS: Final = "23456789TJQKA"
_SUIT_SYMBOLS: Final = "cdhs"
JOKER_INDEX: Final = 52
DECK_SIZE: Final = 53
HAND_SIZE: Final = 7


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card of the deck, identified by its dense index (see the module docstring)."""

    index: int

    @property
    def is_joker(self) -> bool:
        """Whether this is the joker."""
        return self.index == JOKER_INDEX

    @property
    def rank(self) -> Rank | None:
        """The rank, or ``None`` for the joker."""
        return None if self.is_joker else Rank(self.index // 4 + 2)

    @property
    def suit(self) -> Suit | None:
        """The suit, or ``None`` for the joker."""
        return None if self.is_joker else Suit(self.index % 4)

    @property
    def code(self) -> str:
        """The two-character code, e.g. ``As``, ``Td`` or ``Jk``."""
        if self.is_joker:
            return "Jk"
        return _RANK_SYMBOLS[self.index // 4] + _SUIT_SYMBOLS[self.index % 4]

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"

    @staticmethod
    def of(rank: Rank, suit: Suit) -> Card:
        """The natural card of this rank and suit."""
        return DECK[rank.index * 4 + suit]

    @staticmethod
    def parse(code: str) -> Card:
        """The card of a canonical code (``As``, ``Td``, ``Jk``); else :class:`CardError`.

        Exactly one of the 53 codes :attr:`code` gives: what devices send and the journal holds.
        """
        card = _BY_CODE.get(code)
        if card is None:
            raise CardError(
                f"{_quoted(code)} is not a card code: expected a rank (A K Q J T 9 .. 2) then "
                "a suit (s h d c), as in As or Td, or Jk for the joker"
            )
        return card

    @staticmethod
    def parse_lenient(code: str) -> Card:
        """The card of a code as a person types it: any ASCII letter case, ``10`` for ten.

        A suit may be its symbol, as the meter display draws cards (``A♠``, ``10♥``; the
        white ones ``♤♡♢♧`` too), and the joker ``Joker``. For the command line only; device
        input goes through :meth:`parse` (docs/mqtt.md: canonical codes only).
        """
        typed = code.translate(_TYPED_SUITS)
        card = _BY_TYPED_CODE.get(typed.strip().upper()) if typed.isascii() else None
        if card is None:
            raise CardError(
                f"{_quoted(code)} is not a card: expected a rank (A K Q J T/10 9 .. 2) and a "
                "suit (s h d c or ♠ ♥ ♦ ♣), or Jk for the joker"
            )
        return card


DECK: Final[tuple[Card, ...]] = tuple(Card(i) for i in range(DECK_SIZE))
JOKER: Final = DECK[JOKER_INDEX]


_BY_CODE: Final = {card.code: card for card in DECK}


def _typed_code_table() -> dict[str, Card]:
    table = {card.code.upper(): card for card in DECK}
    for suit in _SUIT_SYMBOLS:
        table["10" + suit.upper()] = table["T" + suit.upper()]
    return table


_BY_TYPED_CODE: Final = _typed_code_table() | {"JOKER": DECK[JOKER_INDEX]}
_TYPED_SUITS: Final = str.maketrans(
    dict.fromkeys("♠♤", "s") | dict.fromkeys("♥♡", "h") | dict.fromkeys("♦♢", "d")
    | dict.fromkeys("♣♧", "c") | {"\ufe0f": None}  # an emoji keyboard's ♥️ is ♥ + U+FE0F
)  # fmt: skip
_QUOTED_LENGTH: Final = 16
"""How much of a refused code an error quotes: a device may send kilobytes."""


def _quoted(code: str) -> str:
    text = repr(code[:_QUOTED_LENGTH])
    return text + "..." if len(code) > _QUOTED_LENGTH else text


def _codes(text: str | Iterable[str]) -> list[str]:
    return text.replace(",", " ").split() if isinstance(text, str) else list(text)


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Canonical codes given as one space- or comma-separated string, or as separate codes."""
    return tuple(Card.parse(code) for code in _codes(text))


def parse_cards_lenient(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Codes as a person types them (see :meth:`Card.parse_lenient`); for the command line."""
    return tuple(Card.parse_lenient(code) for code in _codes(text))


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as space-separated codes, in the order given."""
    return " ".join(card.code for card in cards)


def check_distinct(cards: tuple[Card, ...]) -> None:
    """Raise :class:`HandError` when a card appears twice (two jokers are named as such)."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            if card.is_joker:
                raise HandError("a hand cannot hold two jokers: the deck has one")
            raise HandError(f"duplicate card {card.code}: the deck has one of each")
        seen.add(card)


@dataclass(frozen=True, slots=True)
class SevenCardHand:
    """Seven distinct cards of the 53-card deck, as dealt to one seat or to the dealer."""

    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        if len(self.cards) != HAND_SIZE:
            raise HandError(f"a Pai Gow hand has 7 cards, got {len(self.cards)}")
        check_distinct(self.cards)

    @classmethod
    def parse(cls, text: str | Iterable[str]) -> SevenCardHand:
        """Parse and validate seven canonical card codes."""
        return cls(parse_cards(text))

    @classmethod
    def parse_lenient(cls, text: str | Iterable[str]) -> SevenCardHand:
        """Parse and validate seven card codes as a person types them; for the command line."""
        return cls(parse_cards_lenient(text))

    @property
    def indices(self) -> tuple[int, ...]:
        """The dense card indices, the form the classifier's tables take."""
        return tuple(card.index for card in self.cards)

    @property
    def has_joker(self) -> bool:
        """Whether the joker is among the seven cards."""
        return JOKER in self.cards

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards)

    def __str__(self) -> str:
        return format_cards(self.cards)
