"""How many seven-card hands of a deck qualify for each exact set of lines (a *census*).

A hand's qualifying mask depends only on its rank profile, unless it holds a flush suit (five
cards of one suit, or four and the joker; see :mod:`controller.qualify`). So the census adds up
two disjoint parts, using the very line functions the live classifier uses:

* **no flush suit**: for every rank profile (how many cards of each rank, whether the joker is
  in), the number of ways to give its cards suits with no suit reaching the flush threshold.
  That number depends only on the profile's multiset of counts and is found by a small dynamic
  programme over suit counters;
* **a flush suit**: for each suit (by symmetry, the count for one suit times the number of
  suits), each set of ranks held in it, and each multiset of ranks of the remaining cards from
  the other suits, weighted by the ways to pick those cards. Where the line set depends on the
  other suits' exact cards (a royal or A-5 that may have a suited match beside it) the
  remaining cards are enumerated one by one instead.

Seven cards can hold at most one flush suit, so every hand is counted exactly once; the sum is
checked against C(deck size, 7).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import combinations
from math import comb, prod
from typing import TYPE_CHECKING

from controller.cards import HAND_SIZE, JokerMode
from controller.qualify import (
    NEEDS_OTHER_SUITS,
    flush_lines,
    match_lines,
    rank_lines,
    spoilt_by_flush,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from controller.analyzer.deck import Deck


class CensusError(AssertionError):
    """The counts do not add up to the number of hands: a bug, never an input problem."""


def rank_profiles(ranks: Sequence[int], cards: int, most: int) -> Iterator[tuple[int, ...]]:
    """Every 13-rank count vector over ``ranks`` summing to ``cards``, no count above ``most``."""
    counts = [0] * 13

    def place(position: int, left: int) -> Iterator[tuple[int, ...]]:
        if left == 0:
            yield tuple(counts)
            return
        if position == len(ranks):
            return
        rank = ranks[position]
        for count in range(min(most, left), -1, -1):
            counts[rank] = count
            yield from place(position + 1, left - count)
        counts[rank] = 0

    yield from place(0, cards)


@cache
def suitings_without_flush(shape: tuple[int, ...], suits: int, threshold: int) -> int:
    """Ways to give suits to ranks held ``shape`` times each, no suit reaching ``threshold``.

    A rank held ``c`` times takes ``c`` different suits. The state is the count per suit.
    """
    states: Counter[tuple[int, ...]] = Counter({(0,) * suits: 1})
    for held in shape:
        following: Counter[tuple[int, ...]] = Counter()
        for state, ways in states.items():
            for chosen in combinations(range(suits), held):
                next_state = list(state)
                for suit in chosen:
                    next_state[suit] += 1
                if max(next_state) < threshold:
                    following[tuple(next_state)] += ways
        states = following
    return sum(states.values())


@cache
def _rank_lines(counts: tuple[int, ...], joker: bool, mode: JokerMode) -> int:  # noqa: FBT001
    return rank_lines(counts, joker, mode)


@cache
def _flush_lines(suited: int, joker: bool) -> int:  # noqa: FBT001
    return flush_lines(suited, joker)


def _count_without_flush(deck: Deck, mode: JokerMode, joker: bool, census: Counter[int]) -> None:  # noqa: FBT001
    cards = HAND_SIZE - joker
    threshold = 5 - joker
    for counts in rank_profiles(deck.ranks, cards, deck.suits):
        shape = tuple(sorted((count for count in counts if count), reverse=True))
        ways = suitings_without_flush(shape, deck.suits, threshold)
        if ways:
            census[_rank_lines(counts, joker, mode)] += ways


def _count_with_flush(deck: Deck, mode: JokerMode, joker: bool, census: Counter[int]) -> None:  # noqa: FBT001
    cards = HAND_SIZE - joker
    others_per_rank = deck.suits - 1
    other_cards = [(rank, suit) for rank in deck.ranks for suit in range(others_per_rank)]
    for held in range(5 - joker, min(cards, len(deck.ranks)) + 1):
        rest = cards - held
        rest_profiles = list(rank_profiles(deck.ranks, rest, others_per_rank))
        for suited_ranks in combinations(deck.ranks, held):
            suited = sum(1 << rank for rank in suited_ranks)
            suit_lines = _flush_lines(suited, joker)
            kept = ~spoilt_by_flush(suited)
            base = [(suited >> rank) & 1 for rank in range(13)]
            if suit_lines & NEEDS_OTHER_SUITS:
                for chosen in combinations(other_cards, rest):
                    held_counts = list(base)
                    masks = [0] * others_per_rank
                    for rank, suit in chosen:
                        held_counts[rank] += 1
                        masks[suit] |= 1 << rank
                    lines = _rank_lines(tuple(held_counts), joker, mode) & kept
                    lines |= suit_lines | match_lines(suit_lines, masks)
                    census[lines] += deck.suits
                continue
            for profile in rest_profiles:
                counts = tuple(b + p for b, p in zip(base, profile, strict=True))
                ways = prod(comb(others_per_rank, count) for count in profile if count)
                lines = (_rank_lines(counts, joker, mode) & kept) | suit_lines
                census[lines] += deck.suits * ways


def mask_census(deck: Deck, mode: JokerMode) -> Counter[int]:
    """Qualifying mask -> number of seven-card hands of ``deck`` with exactly that mask."""
    census: Counter[int] = Counter()
    for joker in (False, True) if deck.joker else (False,):
        _count_without_flush(deck, mode, joker, census)
        _count_with_flush(deck, mode, joker, census)
    total = sum(census.values())
    if total != deck.hands:
        raise CensusError(f"census counted {total:,} hands, the deck deals {deck.hands:,}")
    return census
