"""The deck an analysis counts over: the full 53-card deck, or a reduced one for cross-checks.

A reduced deck keeps some ranks and/or fewer suits and may drop the joker; hands are always
seven cards. Tests compare the combinatorial counts on reduced decks with a brute-force
enumeration, which is only feasible on small decks.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

from controller.rules.cards import HAND_SIZE, JOKER_INDEX

ALL_RANKS = tuple(range(13))


@dataclass(frozen=True, slots=True)
class Deck:
    """Which ranks (indices 0 = two .. 12 = ace) and how many suits, and whether the joker is in."""

    ranks: tuple[int, ...] = ALL_RANKS
    suits: int = 4
    joker: bool = True

    def __post_init__(self) -> None:
        if not 1 <= self.suits <= 4:
            raise ValueError("a deck has 1 to 4 suits")
        if not self.ranks or len(set(self.ranks)) != len(self.ranks):
            raise ValueError("a deck needs distinct ranks")
        if not all(0 <= rank < 13 for rank in self.ranks):
            raise ValueError("rank indices run from 0 (two) to 12 (ace)")
        if self.size < HAND_SIZE:
            raise ValueError("a deck needs at least seven cards")

    @property
    def size(self) -> int:
        """Cards in the deck."""
        return len(self.ranks) * self.suits + self.joker

    @property
    def hands(self) -> int:
        """Seven-card hands the deck deals."""
        return comb(self.size, HAND_SIZE)

    @property
    def card_indices(self) -> tuple[int, ...]:
        """The deck's cards as dense card indices (see controller.rules.cards)."""
        naturals = tuple(
            rank * 4 + suit for rank in sorted(self.ranks) for suit in range(self.suits)
        )
        return (*naturals, JOKER_INDEX) if self.joker else naturals

    @property
    def is_full(self) -> bool:
        """Whether this is the casino's 53-card deck."""
        return self.ranks == ALL_RANKS and self.suits == 4 and self.joker


FULL_DECK = Deck()
