"""The fast path: which lines a seven-card hand qualifies for, as one bit mask.

A hand is reduced to two facts that every line depends on:

* its **rank profile**: how many cards of each rank, and whether the joker is there. Pairs,
  trips, quads, full houses, three pair, straights, five aces and the ace-high pai gow hand
  depend on nothing else;
* its **flush suit**, if any: the one suit holding five cards, or four with the joker (seven
  cards cannot hold two). Only then do suits matter, through the ranks held in that suit
  (straight flushes, royals, seven-card straight flushes) and, for the royal-match family, the
  cards of the other suits.

Both are computed by summing one precomputed integer per card (3-bit counters for ranks and
suits, one bit for the joker) and are memoised, so that a hand costs a few additions and two or
three table lookups. :mod:`controller.analyzer` counts hands by the same two facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.rules.cards import HAND_SIZE, JOKER_INDEX, JokerMode
from controller.rules.lines import BIT, Line

if TYPE_CHECKING:
    from collections.abc import Sequence

RANKS: Final = 13
ACE: Final = 12  # rank index of the ace; the two is 0
ROYAL_RANKS: Final = 0b1_1111_0000_0000  # T J Q K A
ACE_FIVE_RANKS: Final = 0b1_0000_0000_1111  # A 2 3 4 5
KING_QUEEN: Final = 0b0_1100_0000_0000
ACE_KING: Final = 0b1_1000_0000_0000
ACE_QUEEN: Final = 0b1_0100_0000_0000

_JOKER_SHIFT: Final = 3 * RANKS  # one bit above the 13 rank counters
_SUIT_SHIFT: Final = _JOKER_SHIFT + 1
RANK_KEY_MASK: Final = (1 << _SUIT_SHIFT) - 1  # rank counters and the joker bit

CARD_CODE: Final[tuple[int, ...]] = (
    *((1 << (3 * (i // 4))) | (1 << (_SUIT_SHIFT + 3 * (i % 4))) for i in range(52)),
    1 << _JOKER_SHIFT,
)
"""Per card: +1 on its rank's and its suit's 3-bit counter; the joker sets its own bit."""

SUIT_RANK_BIT: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple((1 << (i // 4)) if i < 52 and i % 4 == suit else 0 for i in range(53))
    for suit in range(4)
)
"""Per suit, per card: the card's rank bit if it is of that suit, else 0."""

ACE_HIGH: Final = BIT[Line.ACE_HIGH_WITH_JOKER] | BIT[Line.ACE_HIGH_NO_JOKER]
INSURANCE_TOPS: Final = (
    Line.INSURANCE_NINE_HIGH,
    Line.INSURANCE_TEN_HIGH,
    Line.INSURANCE_JACK_HIGH,
    Line.INSURANCE_QUEEN_HIGH,
    Line.INSURANCE_KING_HIGH,
)
"""The insurance lines below ace high, by top card from the nine (rank index 7) up."""
_INSURANCE_LOWEST_TOP: Final = 7
INSURANCE: Final = (
    sum(BIT[line] for line in INSURANCE_TOPS)
    | BIT[Line.INSURANCE_ACE_HIGH]
    | BIT[Line.INSURANCE_ACE_HIGH_WITH_JOKER]
    | BIT[Line.INSURANCE_ACE_HIGH_NO_JOKER]
)
_ROYAL = BIT[Line.ROYAL_FLUSH]
_NATURAL_ROYAL = BIT[Line.NATURAL_ROYAL_FLUSH]
_NATURAL_ACE_FIVE = BIT[Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH]
NEEDS_OTHER_SUITS: Final = _ROYAL | _NATURAL_ACE_FIVE


def rank_profile(cards: Sequence[int]) -> tuple[tuple[int, ...], bool]:
    """Counts per rank index and joker presence, for callers outside the hot path."""
    counts = [0] * RANKS
    for card in cards:
        if card != JOKER_INDEX:
            counts[card // 4] += 1
    return tuple(counts), JOKER_INDEX in cards


def _ranks_to_positions(mask: int) -> int:
    """Rank mask to a 14-position mask where position 0 is the ace played low."""
    return (mask << 1) | ((mask >> ACE) & 1)


def has_run(mask: int, length: int) -> bool:
    """Whether a rank mask holds ``length`` consecutive ranks (the ace may play low)."""
    positions = _ranks_to_positions(mask)
    run = positions
    for shift in range(1, length):
        run &= positions >> shift
    return run != 0


def _run_through(mask: int, rank: int, length: int) -> bool:
    """Whether ``mask`` holds ``length`` consecutive ranks of which one is ``rank``."""
    positions = _ranks_to_positions(mask)
    wanted = (1 << (rank + 1)) | (1 if rank == ACE else 0)
    window = (1 << length) - 1
    return any(
        (positions >> start) & window == window and (wanted >> start) & window
        for start in range(15 - length)
    )


def _pair_lines(counts: Sequence[int]) -> int:
    """Lines made by cards of equal rank, for counts in which the joker is already placed."""
    lines = 0
    pairs = sum(1 for count in counts if count >= 2)
    trips = sum(1 for count in counts if count >= 3)
    if max(counts) >= 5:
        lines |= BIT[Line.FIVE_OF_A_KIND]
        if counts[ACE] >= 5:
            lines |= BIT[Line.FIVE_ACES]
    if max(counts) >= 4:
        lines |= BIT[Line.FOUR_OF_A_KIND]
    if trips:
        lines |= BIT[Line.THREE_OF_A_KIND]
        if pairs >= 2:
            lines |= BIT[Line.FULL_HOUSE]
    if pairs >= 1:
        lines |= BIT[Line.PAIR]
    if pairs >= 2:
        lines |= BIT[Line.TWO_PAIR]
    if pairs >= 3:
        lines |= BIT[Line.THREE_PAIR]
    return lines


def _with_extra(counts: Sequence[int], rank: int) -> list[int]:
    placed = list(counts)
    placed[rank] += 1
    return placed


def rank_lines(counts: Sequence[int], joker: bool, mode: JokerMode) -> int:  # noqa: FBT001
    """Every line that depends on ranks alone, before any flush is considered.

    The ace-high and insurance lines assume no flush; where there is a flush suit, callers
    clear what :func:`spoilt_by_flush` names.
    """
    present = sum(1 << rank for rank in range(RANKS) if counts[rank])
    if not joker:
        lines = _pair_lines(counts)
        straight = has_run(present, 5)
    else:
        straight = any(has_run(present | (1 << rank), 5) for rank in range(RANKS))
        if mode is JokerMode.SEMI_WILD:
            lines = _pair_lines(_with_extra(counts, ACE))
        else:
            lines = 0
            for rank in range(RANKS):
                lines |= _pair_lines(_with_extra(counts, rank))
    if straight:
        lines |= BIT[Line.STRAIGHT]
    if not straight and not lines & BIT[Line.PAIR]:
        # A pai gow hand. The joker made no pair, so it can only be the missing ace.
        if joker:
            lines |= BIT[Line.ACE_HIGH_WITH_JOKER]
        elif counts[ACE]:
            lines |= BIT[Line.ACE_HIGH_NO_JOKER]
    return lines | insurance_lines(counts, joker)


def insurance_lines(counts: Sequence[int], joker: bool) -> int:  # noqa: FBT001
    """The insurance wager's pai gow line by top card, before any flush is considered.

    N.J.A.C. 13:69F-11.2(h): for this wager the joker is ranked as an ace, and only that: it
    pairs a natural ace and completes A-K-Q-J-10 or A-2-3-4-5, nothing else, and it has no
    suit. So the hand is a pai gow when its ranks, the joker's ace included, are seven different
    ones with no five in a row; a flush (five *natural* cards of one suit) is cleared by
    :func:`spoilt_by_flush`. The lowest pai gow is nine high (2-3-4-5-7-8-9).
    """
    ranks = sum(1 << rank for rank in range(RANKS) if counts[rank])
    if joker:
        if counts[ACE]:
            return 0  # the joker and an ace are a pair of aces
        ranks |= 1 << ACE
    if ranks.bit_count() != HAND_SIZE or has_run(ranks, 5):
        return 0
    if ranks >> ACE:
        ace = Line.INSURANCE_ACE_HIGH_WITH_JOKER if joker else Line.INSURANCE_ACE_HIGH_NO_JOKER
        return BIT[Line.INSURANCE_ACE_HIGH] | BIT[ace]
    return BIT[INSURANCE_TOPS[ranks.bit_length() - 1 - _INSURANCE_LOWEST_TOP]]


def spoilt_by_flush(suited: int) -> int:
    """The rank-only lines a flush suit holding ``suited`` ranks clears (see the module doc).

    Face Up's ace high is no pai gow once the joker can make a flush (four suited cards and the
    joker); the insurance wager's only once five natural cards are of one suit (its joker has
    no suit, 13:69F-11.2(h)).
    """
    return ACE_HIGH | (INSURANCE if suited.bit_count() >= 5 else 0)


def flush_lines(suited: int, joker: bool) -> int:  # noqa: FBT001
    """Lines made within the flush suit, given the ranks held in it and whether the joker is here.

    The caller guarantees ``suited`` holds five ranks, or four with the joker.
    """
    lines = BIT[Line.FLUSH]
    held = suited.bit_count()
    missing = [rank for rank in range(RANKS) if not suited >> rank & 1]
    if has_run(suited, 5):
        lines |= BIT[Line.STRAIGHT_FLUSH] | BIT[Line.STRAIGHT_FLUSH_WITHOUT_JOKER]
    if suited & ROYAL_RANKS == ROYAL_RANKS:
        lines |= _ROYAL | _NATURAL_ROYAL
    if suited & ACE_FIVE_RANKS == ACE_FIVE_RANKS:
        lines |= _NATURAL_ACE_FIVE
    if not joker:
        if held == 7 and has_run(suited, 7):
            lines |= (
                BIT[Line.SEVEN_CARD_STRAIGHT_FLUSH] | BIT[Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL]
            )
        return lines
    if any(_run_through(suited | (1 << rank), rank, 5) for rank in missing):
        lines |= BIT[Line.STRAIGHT_FLUSH] | BIT[Line.STRAIGHT_FLUSH_WITH_JOKER]
    if (suited & ROYAL_RANKS).bit_count() == 4:
        lines |= _ROYAL
    if held == 6 and any(has_run(suited | (1 << rank), 7) for rank in missing):
        lines |= (
            BIT[Line.SEVEN_CARD_STRAIGHT_FLUSH] | BIT[Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER]
        )
    return lines


def match_lines(suit_lines: int, other_suits: Sequence[int]) -> int:
    """Royal-match and Dynasty lines: a royal or A-5 in the flush suit plus a suited pair elsewhere.

    ``other_suits`` are the natural ranks held in each of the three other suits; the pair must
    be natural (§ 645a.6(d)(2), (e)(2), (g); 13:69F-11(f)2, (i)).
    """
    lines = 0

    def suited_pair(pair: int) -> bool:
        return any(ranks & pair == pair for ranks in other_suits)

    if suit_lines & _ROYAL:
        if suited_pair(KING_QUEEN):
            lines |= BIT[Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN]
        if suited_pair(ACE_KING):
            lines |= BIT[Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING]
            if suit_lines & _NATURAL_ROYAL:
                lines |= BIT[Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING]
        if suited_pair(ACE_QUEEN):
            lines |= BIT[Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN]
            if suit_lines & _NATURAL_ROYAL:
                lines |= BIT[Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN]
    if suit_lines & _NATURAL_ACE_FIVE and suited_pair(ACE_QUEEN):
        lines |= BIT[Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN]
    return lines


def _flush_suit_table() -> tuple[int, ...]:
    """Suit-counter field (12 bits) plus the joker bit above it -> flush suit, or -1."""
    table = []
    for key in range(1 << 13):
        joker = key >> 12
        suit = next(
            (s for s in range(4) if (key >> (3 * s)) & 7 >= 5 - joker),
            -1,
        )
        table.append(suit)
    return tuple(table)


FLUSH_SUIT: Final = _flush_suit_table()


class Qualifier:
    """Computes qualifying masks for one joker mode, memoising rank profiles and flush suits."""

    __slots__ = ("_by_rank_key", "_by_suited", "mode")

    def __init__(self, mode: JokerMode) -> None:
        self.mode = mode
        self._by_rank_key: dict[int, int] = {}
        self._by_suited: dict[int, int] = {}

    def __call__(self, cards: Sequence[int]) -> int:
        """The qualifying mask of seven card indices (already validated)."""
        total = 0
        for card in cards:
            total += CARD_CODE[card]
        rank_key = total & RANK_KEY_MASK
        lines = self._by_rank_key.get(rank_key)
        if lines is None:
            lines = self._rank_key_lines(rank_key)
        joker = rank_key >> _JOKER_SHIFT
        suit = FLUSH_SUIT[(total >> _SUIT_SHIFT) | (joker << 12)]
        if suit < 0:
            return lines
        bits = SUIT_RANK_BIT[suit]
        suited = 0
        for card in cards:
            suited += bits[card]
        suit_key = suited | (joker << RANKS)
        suit_lines = self._by_suited.get(suit_key)
        if suit_lines is None:
            suit_lines = self._by_suited[suit_key] = flush_lines(suited, bool(joker))
        lines = (lines & ~spoilt_by_flush(suited)) | suit_lines
        if suit_lines & NEEDS_OTHER_SUITS:
            others = [
                sum(SUIT_RANK_BIT[other][card] for card in cards)
                for other in range(4)
                if other != suit
            ]
            lines |= match_lines(suit_lines, others)
        return lines

    def _rank_key_lines(self, rank_key: int) -> int:
        counts = [(rank_key >> (3 * rank)) & 7 for rank in range(RANKS)]
        lines = rank_lines(counts, bool(rank_key >> _JOKER_SHIFT), self.mode)
        self._by_rank_key[rank_key] = lines
        return lines


_QUALIFIERS: Final = {mode: Qualifier(mode) for mode in JokerMode}


def qualifier(mode: JokerMode) -> Qualifier:
    """The shared qualifier of a joker mode (its memo tables fill as hands are seen)."""
    return _QUALIFIERS[mode]


def ace_high_outcomes(dealer: int, player: int) -> int:
    """Face Up Ace High outcomes from the dealer's and the player's qualifying masks."""
    if not dealer & ACE_HIGH:
        return 0
    if player & ACE_HIGH:
        return BIT[Line.BOTH_ACE_HIGH]
    if dealer & BIT[Line.ACE_HIGH_WITH_JOKER]:
        return BIT[Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER]
    return BIT[Line.DEALER_ONLY_ACE_HIGH_NO_JOKER]
