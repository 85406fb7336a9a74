"""Exact Ace High counts: the dealer's and the player's seven-card hands dealt from one deck.

An ace-high hand (§ 688a.12(b); see controller.rules.qualify) has seven different ranks with no
straight, and no flush. With a natural ace: seven ranks including the ace, no five in a row,
no suit holding five cards. With the joker as the ace: six ranks without the ace that the joker
cannot complete to a straight, no suit holding four cards.

Whether a hand is ace high therefore splits into a condition on its **rank set** and one on
its **suits**. For a pair of hands the suit condition depends on the two rank sets only
through how many ranks they share (a shared rank must take different suits in the two hands),
so the pair count is

    sum over overlap i of  (pairs of valid rank sets sharing i ranks) x (valid suitings for i)

The suitings are counted by inclusion and exclusion over "this hand has too many cards of
suit s" (seven cards can over-fill only one suit), with small two-variable generating
polynomials that mark the cards of the suit in question.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum
from functools import cache
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING

from controller.rules.cards import HAND_SIZE
from controller.rules.qualify import ACE, RANKS, has_run

if TYPE_CHECKING:
    from controller.analyzer.deck import Deck

Poly = dict[tuple[int, int], int]


@dataclass(frozen=True, slots=True)
class AceHighCounts:
    """Counts of single hands and of ordered (dealer, player) pairs; see the module docstring."""

    hands: int
    pairs: int
    natural_hands: int
    joker_hands: int
    both: int
    dealer_only_with_joker: int
    dealer_only_no_joker: int


def natural_rank_sets(deck: Deck) -> list[int]:
    """Rank masks of seven different ranks, the ace among them, with no five in a row."""
    if ACE not in deck.ranks:
        return []
    others = [rank for rank in deck.ranks if rank != ACE]
    sets = (sum(1 << r for r in chosen) | 1 << ACE for chosen in combinations(others, 6))
    return [ranks for ranks in sets if not has_run(ranks, 5)]


def joker_rank_sets(deck: Deck) -> list[int]:
    """Rank masks of six different ranks, no ace, that the joker cannot make a straight of."""
    if not deck.joker:
        return []
    others = [rank for rank in deck.ranks if rank != ACE]
    sets = (sum(1 << r for r in chosen) for chosen in combinations(others, 6))
    return [ranks for ranks in sets if not any(has_run(ranks | 1 << r, 5) for r in range(RANKS))]


def _multiply(first: Poly, second: Poly) -> Poly:
    product: Poly = Counter()
    for (x1, y1), c1 in first.items():
        for (x2, y2), c2 in second.items():
            product[x1 + x2, y1 + y2] += c1 * c2
    return dict(product)


def _power(poly: Poly, exponent: int) -> Poly:
    result: Poly = {(0, 0): 1}
    for _ in range(exponent):
        result = _multiply(result, poly)
    return result


class Holder(Enum):
    """Which hands hold a given rank."""

    BOTH = (True, True)
    DEALER = (True, False)
    PLAYER = (False, True)


@dataclass(frozen=True, slots=True)
class SuitingProblem:
    """Two hands of distinct ranks, ``shared`` ranks in common, and the suit counts that spoil them.

    ``limits`` are the first count of one suit that spoils each hand: 5 for a natural hand, 4
    for six cards and the joker.
    """

    suits: int
    dealer_cards: int
    player_cards: int
    shared: int
    limits: tuple[int, int]


def _rank_poly(suits: int, holder: Holder, marks: tuple[int | None, int | None]) -> Poly:
    """Suit choices for one rank: x marks the dealer's card in suit ``marks[0]``, y the player's."""
    in_dealer, in_player = holder.value
    poly: Poly = Counter()
    for dealer in range(suits) if in_dealer else (None,):
        for player in range(suits) if in_player else (None,):
            if dealer is not None and dealer == player:
                continue
            poly[int(dealer == marks[0]), int(player == marks[1])] += 1
    return dict(poly)


@cache
def _marked(problem: SuitingProblem, marks: tuple[int | None, int | None]) -> int:
    """Suitings in which each marked suit holds at least its hand's limit (unmarked: any)."""
    suits, shared = problem.suits, problem.shared
    poly = _multiply(
        _multiply(
            _power(_rank_poly(suits, Holder.BOTH, marks), shared),
            _power(_rank_poly(suits, Holder.DEALER, marks), problem.dealer_cards - shared),
        ),
        _power(_rank_poly(suits, Holder.PLAYER, marks), problem.player_cards - shared),
    )
    dealer_least = problem.limits[0] if marks[0] is not None else 0
    player_least = problem.limits[1] if marks[1] is not None else 0
    return sum(c for (x, y), c in poly.items() if x >= dealer_least and y >= player_least)


@cache
def pair_suitings(problem: SuitingProblem) -> int:
    """Suitings of the two hands in which neither over-fills a suit (inclusion-exclusion)."""
    suits = problem.suits
    total = _marked(problem, (None, None))
    dealer_spoilt = suits * _marked(problem, (0, None))
    player_spoilt = suits * _marked(problem, (None, 0))
    both_spoilt = suits * _marked(problem, (0, 0)) + suits * (suits - 1) * _marked(problem, (0, 1))
    return total - dealer_spoilt - player_spoilt + both_spoilt


def single_suitings(suits: int, cards: int, limit: int) -> int:
    """Suitings of one hand of ``cards`` distinct ranks with no suit reaching ``limit``."""
    spoilt = 0
    for in_suit in range(limit, cards + 1):
        spoilt += comb(cards, in_suit) * _power_of(suits - 1, cards - in_suit)
    return _power_of(suits, cards) - suits * spoilt


def _power_of(base: int, exponent: int) -> int:
    """``base ** exponent`` for a non-negative exponent, typed as the int it is."""
    result = 1
    for _ in range(exponent):
        result *= base
    return result


def ace_high_counts(deck: Deck) -> AceHighCounts:
    """Exact single-hand and dealer/player counts of ace-high hands for a deck."""
    suits = deck.suits
    natural = natural_rank_sets(deck)
    joker = joker_rank_sets(deck)
    natural_limit, joker_limit = 5, 4
    natural_hands = len(natural) * single_suitings(suits, HAND_SIZE, natural_limit)
    joker_hands = len(joker) * single_suitings(suits, HAND_SIZE - 1, joker_limit)

    def overlap_sum(
        dealer_sets: list[int],
        player_sets: list[int],
        cards: tuple[int, int],
        limits: tuple[int, int],
    ) -> int:
        overlaps: Counter[int] = Counter()
        for dealer in dealer_sets:
            overlaps.update((dealer & player).bit_count() for player in player_sets)
        return sum(
            pairs * pair_suitings(SuitingProblem(suits, cards[0], cards[1], shared, limits))
            for shared, pairs in overlaps.items()
        )

    both_natural = overlap_sum(natural, natural, (7, 7), (natural_limit, natural_limit))
    joker_and_natural = overlap_sum(joker, natural, (6, 7), (joker_limit, natural_limit))
    player_hands = comb(deck.size - HAND_SIZE, HAND_SIZE)
    return AceHighCounts(
        hands=deck.hands,
        pairs=deck.hands * player_hands,
        natural_hands=natural_hands,
        joker_hands=joker_hands,
        # The dealer with the joker and a natural player, and the converse, count alike.
        both=both_natural + 2 * joker_and_natural,
        dealer_only_with_joker=joker_hands * player_hands - joker_and_natural,
        dealer_only_no_joker=natural_hands * player_hands - both_natural - joker_and_natural,
    )
