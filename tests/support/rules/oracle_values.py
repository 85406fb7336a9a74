"""The oracle's hand values: five-card categories and comparable values, best of seven, two cards.

Part of the independent brute-force oracle (tests/support/rules/oracle.py, "How it works"): the
joker becomes every card it is allowed to be and the best concrete value is kept; a concrete value
is a ``(category index, key)`` tuple compared lexicographically.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations
from typing import TYPE_CHECKING, Final

from support.rules.oracle_cards import (
    ACE,
    ACE_FIVE_OPTIONS,
    FULLY_WILD,
    LOWEST,
    MODES,
    NATURAL_CARDS,
    NO_SUIT,
    RANKS,
    SECOND_HIGHEST,
    SEMI_WILD,
    NaturalCard,
    hand_key,
    parse_hand,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


# ---------------------------------------------------------------------------------------------
# Five-card categories, lowest first: the index is the category's weight in a value.

CATEGORIES: Final = (
    "high-card",
    "pair",
    "two-pair",
    "three-of-a-kind",
    "straight",
    "flush",
    "full-house",
    "four-of-a-kind",
    "straight-flush",
    "royal-flush",
    "five-of-a-kind",
)
(
    HIGH_CARD_CAT,
    PAIR_CAT,
    TWO_PAIR_CAT,
    TRIPS_CAT,
    STRAIGHT_CAT,
    FLUSH_CAT,
    FULL_HOUSE_CAT,
    QUADS_CAT,
    STRAIGHT_FLUSH_CAT,
    ROYAL_CAT,
    FIVE_KIND_CAT,
) = range(len(CATEGORIES))

WHEEL_TOP: Final = 5
"""A-2-3-4-5 is named by its top card when the ace plays low."""

STRAIGHT_ORDER: Final[dict[str, tuple[int, ...]]] = {
    # § 645a.6(b)(7), N.J.A.C. 13:69F-11(b)7: A-K-Q-J-10 highest, A-2-3-4-5 second highest,
    # then K-high down to 6-high. For straight flushes the A-high one is the royal flush,
    # a category of its own, so A-2-3-4-5 is the highest straight flush (§ 645a.6(b)(3)).
    SECOND_HIGHEST: (6, 7, 8, 9, 10, 11, 12, 13, WHEEL_TOP, ACE),
    # N.J.A.C. 13:69F-11(d): A-2-3-4-5 is the lowest straight and straight flush.
    LOWEST: (WHEEL_TOP, 6, 7, 8, 9, 10, 11, 12, 13, ACE),
}

Value = tuple[int, tuple[int, ...]]
"""A comparable five-card (or two-card) value: (category index, tie-break key)."""


# ---------------------------------------------------------------------------------------------
# Five-card ranking


def straight_top(ranks: Sequence[int]) -> int | None:
    """The top card of a five-card straight (5 for A-2-3-4-5), or None when not a straight."""
    if len(set(ranks)) != 5:
        return None
    low_to_high = sorted(ranks)
    if low_to_high[4] - low_to_high[0] == 4:
        return low_to_high[4]
    if low_to_high == [2, 3, 4, 5, ACE]:  # the ace plays low only here (§ 645a.6(a))
        return WHEEL_TOP
    return None  # no wrap-around: Q-K-A-2-3 is nothing


def concrete_value(cards: Sequence[NaturalCard], ace_five: str = SECOND_HIGHEST) -> Value:
    """The value of five joker-free cards (an unsuited stand-in may duplicate a rank)."""
    ranks = [rank for rank, _ in cards]
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    shape = tuple(count for _, count in groups)
    by_group = tuple(rank for rank, _ in groups)
    suits = {suit for _, suit in cards}
    flush = len(suits) == 1 and NO_SUIT not in suits
    top = straight_top(ranks)
    order = STRAIGHT_ORDER[ace_five]
    if shape == (5,):
        return FIVE_KIND_CAT, by_group
    if flush and top is not None:
        if top == ACE:
            return ROYAL_CAT, ()
        return STRAIGHT_FLUSH_CAT, (order.index(top),)
    if shape == (4, 1):
        return QUADS_CAT, by_group
    if shape == (3, 2):
        return FULL_HOUSE_CAT, by_group
    if flush:
        return FLUSH_CAT, tuple(sorted(ranks, reverse=True))
    if top is not None:
        return STRAIGHT_CAT, (order.index(top),)
    if shape == (3, 1, 1):
        return TRIPS_CAT, by_group
    if shape == (2, 2, 1):
        return TWO_PAIR_CAT, by_group
    if shape == (2, 1, 1, 1):
        return PAIR_CAT, by_group
    return HIGH_CARD_CAT, by_group


def joker_substitutions(naturals: Sequence[NaturalCard], mode: str) -> list[NaturalCard]:
    """Every card the joker may become beside these natural cards, before any rule on use.

    Natural cards not already among them, plus unsuited stand-ins: only the ace when the joker
    is semi-wild (it "plays as an ace"), any rank when it is fully wild.
    """
    present = set(naturals)
    missing = [card for card in NATURAL_CARDS if card not in present]
    ranks = (ACE,) if mode == SEMI_WILD else RANKS
    return missing + [(rank, NO_SUIT) for rank in ranks]


_COMPLETED: Final = frozenset({STRAIGHT_CAT, FLUSH_CAT, STRAIGHT_FLUSH_CAT, ROYAL_CAT})


@lru_cache(maxsize=1 << 16)
def _five_value(key: tuple[str, ...], mode: str, ace_five: str) -> Value:
    naturals, has_joker = parse_hand(key, 5)
    if not has_joker:
        return concrete_value(naturals, ace_five)
    values = []
    for card in joker_substitutions(naturals, mode):
        value = concrete_value([*naturals, card], ace_five)
        allowed = (
            mode == FULLY_WILD
            or card == (ACE, NO_SUIT)  # semi-wild: plays as an ace ...
            or value[0] in _COMPLETED  # ... or as a card completing a straight or flush
        )
        if allowed:
            values.append(value)
    return max(values)


def check_mode(mode: str, ace_five: str = SECOND_HIGHEST) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown joker mode {mode!r}")
    if ace_five not in ACE_FIVE_OPTIONS:
        raise ValueError(f"unknown ace-five option {ace_five!r}")


def five_card_value(
    codes5: str | Iterable[str], mode: str = SEMI_WILD, ace_five: str = SECOND_HIGHEST
) -> tuple[str, Value]:
    """The category slug and comparable value of a five-card hand (best joker use)."""
    check_mode(mode, ace_five)
    value = _five_value(hand_key(codes5), mode, ace_five)
    return CATEGORIES[value[0]], value


def _sign(a: Value, b: Value) -> int:
    return (a > b) - (a < b)


def compare_five(
    a: str | Iterable[str],
    b: str | Iterable[str],
    mode: str = SEMI_WILD,
    ace_five: str = SECOND_HIGHEST,
) -> int:
    """1 when five-card hand a ranks higher, -1 when lower, 0 for a tie (copy hand)."""
    return _sign(five_card_value(a, mode, ace_five)[1], five_card_value(b, mode, ace_five)[1])


@lru_cache(maxsize=1 << 14)
def _seven_value(key: tuple[str, ...], mode: str, ace_five: str) -> Value:
    parse_hand(key, 7)
    return max(_five_value(five, mode, ace_five) for five in combinations(key, 5))


def best_five_value(
    codes7: str | Iterable[str], mode: str = SEMI_WILD, ace_five: str = SECOND_HIGHEST
) -> Value:
    """The value of the best five-card hand among seven cards."""
    check_mode(mode, ace_five)
    return _seven_value(hand_key(codes7), mode, ace_five)


def best_five_category(
    codes7: str | Iterable[str], mode: str = SEMI_WILD, ace_five: str = SECOND_HIGHEST
) -> str:
    """The category slug of the best five-card hand among seven cards."""
    return CATEGORIES[best_five_value(codes7, mode, ace_five)[0]]


def compare_seven(
    a: str | Iterable[str],
    b: str | Iterable[str],
    mode: str = SEMI_WILD,
    ace_five: str = SECOND_HIGHEST,
) -> int:
    """Compare the best five-card hands of two seven-card hands (1, 0 or -1)."""
    return _sign(best_five_value(a, mode, ace_five), best_five_value(b, mode, ace_five))


def two_card_value(codes2: str | Iterable[str]) -> Value:
    """A two-card hand: a pair or two high cards; the joker counts as an ace."""
    naturals, has_joker = parse_hand(codes2, 2)
    ranks = sorted([rank for rank, _ in naturals] + [ACE] * has_joker, reverse=True)
    if ranks[0] == ranks[1]:
        return PAIR_CAT, (ranks[0],)
    return HIGH_CARD_CAT, tuple(ranks)


def compare_two(a2: str | Iterable[str], b2: str | Iterable[str]) -> int:
    """Compare two two-card (low) hands (1, 0 or -1)."""
    return _sign(two_card_value(a2), two_card_value(b2))
