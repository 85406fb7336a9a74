"""How many seven-card hands of a deck qualify for each exact set of lines (a *census*).

A hand's qualifying mask depends only on its rank profile, unless it holds a flush suit (five
cards of one suit, or four and the joker; see :mod:`controller.rules.qualify`). So the census adds
up two disjoint parts, using the very line functions the live classifier uses:

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

**Natural and joker.** :func:`split_census` also keeps, for each hand, which of its lines its
natural cards make by themselves, the joker taken out (:func:`natural_lines`): the lines of a
hand without the joker, and for a hand with it those of its six natural cards that the hand
makes too. A line a hand is paid on is then "natural" or "with the joker" (docs/analyzer.md).
The six natural cards are counted by the same two facts: their rank profile, and a flush suit
only where five of them share it.

**Progress.** A census may report the hands counted so far, now and then, to a callback
(``jackpotd analyze`` shows the percentage on stderr).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import combinations
from math import comb, prod
from typing import TYPE_CHECKING

from controller.errors import JackpotError
from controller.rules.cards import HAND_SIZE, JOKER_INDEX, JokerMode
from controller.rules.qualify import (
    NEEDS_OTHER_SUITS,
    flush_lines,
    match_lines,
    qualifier,
    rank_lines,
    spoilt_by_flush,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from controller.analyzer.deck import Deck

SplitCensus = Counter[tuple[int, int]]
"""(qualifying mask, the part of it the natural cards make by themselves) -> hands."""

TICK_EVERY = 64
"""Steps of the count between two progress reports (a report sums the census so far)."""


class CensusError(JackpotError, AssertionError):
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


def natural_lines(cards: Sequence[int], mode: JokerMode) -> int:
    """The lines of a seven-card hand that its natural cards make without the joker.

    Without the joker that is every line of the hand; with it, the lines of its six natural
    cards (qualified as the live classifier qualifies any cards) that the hand makes too.
    """
    lines = qualifier(mode)(cards)
    if JOKER_INDEX not in cards:
        return lines
    return qualifier(mode)([card for card in cards if card != JOKER_INDEX]) & lines


class _Tally:
    """The census being counted; it tells a callback the hands counted, every few steps."""

    __slots__ = ("census", "report", "steps")

    def __init__(self, census: SplitCensus, report: Callable[[int], None] | None) -> None:
        self.census = census
        self.report = report
        self.steps = 0

    def __call__(self) -> None:
        self.steps += 1
        if self.report is not None and not self.steps % TICK_EVERY:
            self.report(sum(self.census.values()))


def _count_without_flush(deck: Deck, mode: JokerMode, joker: bool, tally: _Tally) -> None:  # noqa: FBT001
    census, tick = tally.census, tally
    cards = HAND_SIZE - joker
    threshold = 5 - joker
    for counts in rank_profiles(deck.ranks, cards, deck.suits):
        shape = tuple(sorted((count for count in counts if count), reverse=True))
        ways = suitings_without_flush(shape, deck.suits, threshold)
        if ways:
            lines = _rank_lines(counts, joker, mode)
            # No suit holds four naturals here, so the six natural cards hold no flush either.
            natural = _rank_lines(counts, False, mode) & lines if joker else lines  # noqa: FBT003
            census[lines, natural] += ways
        tick()


def _count_with_flush(deck: Deck, mode: JokerMode, joker: bool, tally: _Tally) -> None:  # noqa: FBT001
    census, tick = tally.census, tally
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
            # The six natural cards beside the joker hold a flush only with five of the suit.
            natural_flush = joker and held >= 5
            natural_suit = _flush_lines(suited, False) if natural_flush else 0  # noqa: FBT003
            natural_kept = kept if natural_flush else -1
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
                    natural = lines
                    if joker:
                        natural = _rank_lines(tuple(held_counts), False, mode) & natural_kept  # noqa: FBT003
                        natural |= natural_suit | match_lines(natural_suit, masks)
                        natural &= lines
                    census[lines, natural] += deck.suits
                tick()
                continue
            for profile in rest_profiles:
                counts = tuple(b + p for b, p in zip(base, profile, strict=True))
                ways = prod(comb(others_per_rank, count) for count in profile if count)
                lines = (_rank_lines(counts, joker, mode) & kept) | suit_lines
                natural = lines
                if joker:
                    natural = _rank_lines(counts, False, mode) & natural_kept  # noqa: FBT003
                    natural = (natural | natural_suit) & lines
                census[lines, natural] += deck.suits * ways
            tick()


def split_census(
    deck: Deck, mode: JokerMode, progress: Callable[[int], None] | None = None
) -> SplitCensus:
    """(Qualifying mask, its natural part) -> seven-card hands of ``deck`` with exactly those.

    ``progress``, if given, is told the hands counted so far now and then, and at the end.
    """
    census: SplitCensus = Counter()
    tally = _Tally(census, progress)
    for joker in (False, True) if deck.joker else (False,):
        _count_without_flush(deck, mode, joker, tally)
        _count_with_flush(deck, mode, joker, tally)
    total = sum(census.values())
    if total != deck.hands:
        raise CensusError(f"census counted {total:,} hands, the deck deals {deck.hands:,}")
    if progress is not None:
        progress(total)
    return census


def masks_of(census: SplitCensus) -> Counter[int]:
    """Qualifying mask -> hands, from a split census."""
    masks: Counter[int] = Counter()
    for (mask, _), hands in census.items():
        masks[mask] += hands
    return masks


def mask_census(
    deck: Deck, mode: JokerMode, progress: Callable[[int], None] | None = None
) -> Counter[int]:
    """Qualifying mask -> number of seven-card hands of ``deck`` with exactly that mask."""
    return masks_of(split_census(deck, mode, progress))
