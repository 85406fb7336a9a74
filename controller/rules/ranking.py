"""Five-card and two-card Pai Gow hand ranking: § 645a.6(a)-(c) and N.J.A.C. 13:69F-11(a)-(e).

A hand's :class:`HandValue` is totally ordered: its category first (five aces highest, then
royal flush, straight flush, ... high card), then the highest-unmatched-card rule of
§ 645a.6(c) / 13:69F-11(e) as a tuple of ranks. Two equal values are a tie, a "copy hand".

The joker is resolved by trying what it may stand for under the joker mode and keeping the
best result: in semi-wild ("bug") mode an ace, or any card that completes a straight, flush,
straight flush or royal flush; in fully wild mode any card. Played as an ace for pairing its
suit does not matter, so it may stand beside four natural aces (five aces).

This module is for settling and showing hands, not for paying lines: which seven-card line a
hand wins is :mod:`controller.rules.qualify`'s job, which needs no five-card evaluation at all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum, IntEnum
from itertools import combinations
from typing import TYPE_CHECKING, Final

from controller.rules.cards import Card, JokerMode, Rank, Suit

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from controller.rules.cards import SevenCardHand


class Category(IntEnum):
    """The poker hands of § 645a.6(b), lowest to highest, plus five of a kind for a wild joker."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9
    FIVE_OF_A_KIND = 10
    """Five aces with the semi-wild joker (§ 645a.6(b)(1)); any rank with a fully wild one."""

    @property
    def label(self) -> str:
        """The hand's name as the regulations write it."""
        return self.name.replace("_", " ").lower()


class AceFive(Enum):
    """Where A-2-3-4-5 ranks among straights and straight flushes."""

    SECOND_HIGHEST = "second-highest"
    """PA § 645a.6(b)(3),(7) and NJ 13:69F-11(b): below A-K-Q-J-10 (the top straight flush)."""
    LOWEST = "lowest"
    """The NJ 13:69F-11(d) option: the lowest straight and straight flush."""


_COMPLETING: Final = frozenset(
    {Category.STRAIGHT, Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH}
)
_WHEEL: Final = (14, 5, 4, 3, 2)


@dataclass(frozen=True, slots=True, order=True)
class HandValue:
    """A comparable hand value: category, then the ranks that break ties, highest first.

    Straights and straight flushes carry one number, their position: twice the top card's
    rank, with A-2-3-4-5 placed by the :class:`AceFive` option (27, just under A-high's 28, or
    10, under 6-high's 12).
    """

    category: Category
    key: tuple[int, ...]

    def describe(self) -> str:
        """The value in words, e.g. ``five aces`` or ``two pair, kings and sevens, ace kicker``."""
        if self.category is Category.FIVE_OF_A_KIND:
            return "five aces" if self.key[0] == Rank.ACE else f"five {_plural(self.key[0])}"
        if self.category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
            top = "5" if self.key[0] in (27, 10) else Rank(self.key[0] // 2).symbol
            return f"{self.category.label}, {top} high"
        ranks = "-".join(Rank(rank).symbol for rank in self.key)
        return f"{self.category.label} ({ranks})" if ranks else self.category.label


def _plural(rank: int) -> str:
    name = Rank(rank).name.lower()
    return name + "es" if name == "six" else name + "s"


@dataclass(frozen=True, slots=True)
class JokerPlay:
    """What the joker stands for: a rank, and a suit when it completes a flush or straight flush."""

    rank: Rank
    suit: Suit | None

    @property
    def code(self) -> str:
        """``As`` for a suited card, ``A`` for a rank whose suit does not matter."""
        return self.rank.symbol + (self.suit.symbol if self.suit is not None else "")


@dataclass(frozen=True, slots=True)
class FiveCardHand:
    """Five cards, their value, and what the joker (if among them) stands for."""

    cards: tuple[Card, ...]
    value: HandValue
    joker_as: JokerPlay | None


def _straight_position(ranks: Sequence[int], ace_five: AceFive) -> int:
    """Position of five distinct ranks (sorted high to low) as a straight, or 0 if none."""
    if tuple(ranks) == _WHEEL:
        return 27 if ace_five is AceFive.SECOND_HIGHEST else 10
    if ranks[0] - ranks[4] == 4:
        return 2 * ranks[0]
    return 0


def _concrete_value(played: Sequence[tuple[int, Suit | None]], ace_five: AceFive) -> HandValue:
    """The value of five cards whose joker, if any, already stands for a rank (and suit)."""
    counts = Counter(rank for rank, _ in played)
    # Groups first (bigger, then higher), which is the order of the tie-break rule.
    order = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    suits = {suit for _, suit in played}
    flush = len(suits) == 1 and None not in suits
    position = _straight_position(order, ace_five) if len(counts) == 5 else 0
    if shape[0] == 5:
        return HandValue(Category.FIVE_OF_A_KIND, (order[0],))
    if flush and position:
        if position == 28:
            return HandValue(Category.ROYAL_FLUSH, ())
        return HandValue(Category.STRAIGHT_FLUSH, (position,))
    category = {
        (4, 1): Category.FOUR_OF_A_KIND,
        (3, 2): Category.FULL_HOUSE,
        (3, 1, 1): Category.THREE_OF_A_KIND,
        (2, 2, 1): Category.TWO_PAIR,
        (2, 1, 1, 1): Category.PAIR,
    }.get(tuple(shape))
    if category is not None:
        return HandValue(category, tuple(order))
    if flush:
        return HandValue(Category.FLUSH, tuple(order))
    if position:
        return HandValue(Category.STRAIGHT, (position,))
    return HandValue(Category.HIGH_CARD, tuple(order))


def _joker_plays(naturals: Sequence[Card], mode: JokerMode) -> Iterable[JokerPlay]:
    """Every card the joker may be tried as: suitless ranks to pair, absent cards for the rest."""
    ranks = (Rank.ACE,) if mode is JokerMode.SEMI_WILD else tuple(Rank)
    for rank in ranks:
        yield JokerPlay(rank, None)
    held = set(naturals)
    for rank in Rank:
        for suit in Suit:
            if Card.of(rank, suit) not in held:
                yield JokerPlay(rank, suit)


def evaluate_five(
    cards: Sequence[Card],
    mode: JokerMode = JokerMode.SEMI_WILD,
    ace_five: AceFive = AceFive.SECOND_HIGHEST,
) -> FiveCardHand:
    """Rank five distinct cards (the joker among them or not)."""
    if len(cards) != 5 or len(set(cards)) != 5:
        raise ValueError(f"a five-card hand needs five distinct cards, got {len(cards)}")
    naturals = [card for card in cards if not card.is_joker]
    played = [(card.rank, card.suit) for card in naturals if card.rank is not None]
    if len(naturals) == 5:
        return FiveCardHand(tuple(cards), _concrete_value(played, ace_five), None)
    best: tuple[HandValue, JokerPlay] | None = None
    for play in _joker_plays(naturals, mode):
        value = _concrete_value([*played, (play.rank, play.suit)], ace_five)
        suitless_ace = play.suit is None and play.rank is Rank.ACE
        if mode is JokerMode.SEMI_WILD and not suitless_ace and value.category not in _COMPLETING:
            continue
        if best is None or value > best[0]:
            best = (value, play)
    if best is None:  # pragma: no cover - the suitless ace is always allowed
        raise AssertionError("no joker play")
    return FiveCardHand(tuple(cards), best[0], best[1])


def evaluate_two(cards: Sequence[Card]) -> HandValue:
    """Rank a two-card low hand: a pair or high cards; the joker counts as an ace."""
    if len(cards) != 2 or cards[0] == cards[1]:
        raise ValueError("a two-card hand needs two distinct cards")
    ranks = sorted((Rank.ACE if card.rank is None else card.rank for card in cards), reverse=True)
    if ranks[0] == ranks[1]:
        return HandValue(Category.PAIR, (ranks[0],))
    return HandValue(Category.HIGH_CARD, tuple(ranks))


def compare(first: HandValue, second: HandValue) -> int:
    """1 if ``first`` ranks higher, -1 if lower, 0 for a tie (a copy hand)."""
    return (first > second) - (first < second)


def _display_order(hand: FiveCardHand) -> tuple[Card, ...]:
    """The five cards with groups first and higher ranks first, as a dealer would spread them."""
    joker_rank = hand.joker_as.rank if hand.joker_as is not None else None

    def rank_of(card: Card) -> int:
        return int(joker_rank if card.rank is None and joker_rank is not None else card.rank or 0)

    counts = Counter(rank_of(card) for card in hand.cards)
    return tuple(sorted(hand.cards, key=lambda c: (counts[rank_of(c)], rank_of(c)), reverse=True))


def best_five(
    hand: SevenCardHand,
    mode: JokerMode = JokerMode.SEMI_WILD,
    ace_five: AceFive = AceFive.SECOND_HIGHEST,
) -> FiveCardHand:
    """The best five-card poker hand among the seven cards."""
    best = max(
        (evaluate_five(five, mode, ace_five) for five in combinations(hand.cards, 5)),
        key=lambda candidate: candidate.value,
    )
    return FiveCardHand(_display_order(best), best.value, best.joker_as)
