"""The oracle's cards: ranks, suits, the joker's modes, and card codes parsed into plain tuples.

Part of the independent brute-force oracle (tests/support/rules/oracle.py), sharing no code with
:mod:`controller`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable


RANK_SYMBOLS: Final = "23456789TJQKA"
SUIT_SYMBOLS: Final = "cdhs"
JOKER: Final = "Jk"
NATURAL_CODES: Final[tuple[str, ...]] = tuple(r + s for r in RANK_SYMBOLS for s in SUIT_SYMBOLS)
ALL_CODES: Final[tuple[str, ...]] = (*NATURAL_CODES, JOKER)

TEN, QUEEN, KING, ACE = 10, 12, 13, 14
RANKS: Final = tuple(range(2, ACE + 1))
NO_SUIT: Final = -1
"""The suit of an unsuited stand-in for the joker: it pairs, but makes no flush."""

SEMI_WILD: Final = "semi-wild"
FULLY_WILD: Final = "fully-wild"
MODES: Final = (SEMI_WILD, FULLY_WILD)
SECOND_HIGHEST: Final = "second-highest"
LOWEST: Final = "lowest"
ACE_FIVE_OPTIONS: Final = (SECOND_HIGHEST, LOWEST)


NaturalCard = tuple[int, int]
"""(rank 2..14, suit index 0..3, or NO_SUIT for an unsuited stand-in)."""

ConcreteCard = tuple[int, int, bool]
"""(rank, suit, wild): wild marks the card the joker stands for."""


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_code(code: str) -> NaturalCard | None:
    """Parse one card code: ``(rank, suit)``, or ``None`` for the joker."""
    text = code.strip()
    if text.upper() == JOKER.upper():
        return None
    if text[:2] == "10":
        text = "T" + text[2:]
    if len(text) != 2:
        raise ValueError(f"not a card code: {code!r}")
    rank_symbol, suit_symbol = text[0].upper(), text[1].lower()
    if rank_symbol not in RANK_SYMBOLS or suit_symbol not in SUIT_SYMBOLS:
        raise ValueError(f"not a card code: {code!r}")
    return RANK_SYMBOLS.index(rank_symbol) + 2, SUIT_SYMBOLS.index(suit_symbol)


def code_of(card: NaturalCard) -> str:
    """The code of a natural card."""
    rank, suit = card
    return RANK_SYMBOLS[rank - 2] + SUIT_SYMBOLS[suit]


def split_codes(codes: str | Iterable[str]) -> tuple[str, ...]:
    """Card codes given as one space-separated string or as separate codes."""
    return tuple(codes.split()) if isinstance(codes, str) else tuple(codes)


def parse_hand(codes: str | Iterable[str], size: int) -> tuple[list[NaturalCard], bool]:
    """The natural cards and whether the joker is present; checks size and distinctness."""
    parsed = [parse_code(code) for code in split_codes(codes)]
    if len(parsed) != size:
        raise ValueError(f"expected {size} cards, got {len(parsed)}")
    if len(set(parsed)) != size:
        raise ValueError(f"duplicate card in {codes!r}")
    naturals = [card for card in parsed if card is not None]
    return naturals, len(naturals) < size


def hand_key(codes: str | Iterable[str]) -> tuple[str, ...]:
    """A canonical, hashable form of a hand for the memo tables."""
    return tuple(sorted(code_of(c) if c else JOKER for c in map(parse_code, split_codes(codes))))


NATURAL_CARDS: Final[tuple[NaturalCard, ...]] = tuple(
    (rank, suit) for rank in RANKS for suit in range(len(SUIT_SYMBOLS))
)
