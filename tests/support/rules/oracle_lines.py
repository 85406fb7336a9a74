"""The oracle's seven-card lines: what a hand qualifies for, with the joker and without it.

Part of the independent brute-force oracle (tests/support/rules/oracle.py, "How it works"): a line
holds when it holds for at least one allowed substitution of the joker; straight-type lines use
rank bitmasks; the natural lines are those the natural cards make by themselves.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations
from typing import TYPE_CHECKING, Final

from support.rules.oracle_cards import (
    ACE,
    FULLY_WILD,
    KING,
    NO_SUIT,
    QUEEN,
    SEMI_WILD,
    TEN,
    ConcreteCard,
    NaturalCard,
    hand_key,
    parse_hand,
)
from support.rules.oracle_slugs import (
    ACE_HIGH_NO_JOKER,
    ACE_HIGH_WITH_JOKER,
    BOTH_ACE_HIGH,
    DEALER_ONLY_ACE_HIGH_NO_JOKER,
    DEALER_ONLY_ACE_HIGH_WITH_JOKER,
    FIVE_ACES,
    FIVE_OF_A_KIND,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    INSURANCE_ACE_HIGH,
    INSURANCE_ACE_HIGH_NO_JOKER,
    INSURANCE_ACE_HIGH_WITH_JOKER,
    INSURANCE_BY_TOP,
    NATURAL_ROYAL_FLUSH,
    NATURAL_ROYAL_PLUS_ACE_KING,
    NATURAL_ROYAL_PLUS_ACE_QUEEN,
    NATURAL_WHEEL,
    NATURAL_WHEEL_PLUS_ACE_QUEEN,
    PAIR,
    ROYAL_FLUSH,
    ROYAL_PLUS_ACE_KING,
    ROYAL_PLUS_ACE_QUEEN,
    ROYAL_PLUS_KING_QUEEN,
    SF7,
    SF7_NATURAL,
    SF7_WITH_JOKER,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_FLUSH_WITH_JOKER,
    STRAIGHT_FLUSH_WITHOUT_JOKER,
    THREE_OF_A_KIND,
    THREE_PAIR,
    TWO_PAIR,
)
from support.rules.oracle_values import check_mode, joker_substitutions, straight_top

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


# ---------------------------------------------------------------------------------------------
# Seven-card lines


def _rank_bits(rank: int) -> int:
    """Bit ``rank``; the ace also sets bit 1, its place as the low card of A-2-3-4-5."""
    return (1 << rank) | (0b10 if rank == ACE else 0)


def _window(low: int, length: int) -> int:
    return sum(1 << rank for rank in range(low, low + length))


WINDOWS5: Final = tuple(_window(low, 5) for low in range(1, ACE - 3))  # A-5 .. T-A
WINDOWS7: Final = tuple(_window(low, 7) for low in range(1, ACE - 5))  # A-7 .. 8-A
ROYAL_BITS: Final = _window(TEN, 5)
WHEEL_BITS: Final = _window(1, 5)
WHEEL_RANKS: Final = frozenset({ACE, 2, 3, 4, 5})
ROYAL_MATCHES: Final = {
    frozenset({KING, QUEEN}): ROYAL_PLUS_KING_QUEEN,
    frozenset({ACE, KING}): ROYAL_PLUS_ACE_KING,
    frozenset({ACE, QUEEN}): ROYAL_PLUS_ACE_QUEEN,
}
NATURAL_ROYAL_MATCHES: Final = {
    frozenset({ACE, KING}): NATURAL_ROYAL_PLUS_ACE_KING,
    frozenset({ACE, QUEEN}): NATURAL_ROYAL_PLUS_ACE_QUEEN,
}


def _natural_suited_pair(others: Sequence[ConcreteCard]) -> frozenset[int] | None:
    """The two ranks when ``others`` are two natural cards of one suit, else None."""
    if len(others) != 2:
        return None
    (rank_a, suit_a, wild_a), (rank_b, suit_b, wild_b) = others
    if wild_a or wild_b or suit_a != suit_b:
        return None
    return frozenset({rank_a, rank_b})


def suited_lines(cards: Sequence[ConcreteCard]) -> set[str]:
    """Straight, flush and straight-flush lines of seven concrete, distinct, suited cards."""
    lines: set[str] = set()
    union = 0
    full = [0, 0, 0, 0]
    natural = [0, 0, 0, 0]
    count = [0, 0, 0, 0]
    for rank, suit, wild in cards:
        bits = _rank_bits(rank)
        union |= bits
        full[suit] |= bits
        count[suit] += 1
        if not wild:
            natural[suit] |= bits
    if any(union & window == window for window in WINDOWS5):
        lines.add(STRAIGHT)
    for suit in range(4):
        if count[suit] < 5:
            continue
        lines.add(FLUSH)
        suited, nat = full[suit], natural[suit]
        for window in WINDOWS5:
            if suited & window == window:
                lines.add(STRAIGHT_FLUSH)
                # Only the wild card can be the suited card that the natural cards lack.
                is_natural = nat & window == window
                lines.add(STRAIGHT_FLUSH_WITHOUT_JOKER if is_natural else STRAIGHT_FLUSH_WITH_JOKER)
        for window in WINDOWS7:
            if suited & window == window:
                lines.add(SF7)
                lines.add(SF7_NATURAL if nat & window == window else SF7_WITH_JOKER)
        lines |= _royal_and_wheel_lines(cards, suit, suited, nat)
    return lines


def _royal_and_wheel_lines(
    cards: Sequence[ConcreteCard], suit: int, suited: int, nat: int
) -> set[str]:
    """Royal flush and natural A-5 straight flush lines in one suit, with their matches.

    The match is the two cards left over beside the five of the royal (or A-5) flush.
    """
    lines: set[str] = set()
    if suited & ROYAL_BITS == ROYAL_BITS:
        lines.add(ROYAL_FLUSH)
        natural_royal = nat & ROYAL_BITS == ROYAL_BITS
        if natural_royal:
            lines.add(NATURAL_ROYAL_FLUSH)
        others = [c for c in cards if not (c[1] == suit and c[0] >= TEN)]
        match = _natural_suited_pair(others)
        if match in ROYAL_MATCHES:
            lines.add(ROYAL_MATCHES[match])
        if natural_royal and match in NATURAL_ROYAL_MATCHES:
            lines.add(NATURAL_ROYAL_MATCHES[match])
    if nat & WHEEL_BITS == WHEEL_BITS:
        lines.add(NATURAL_WHEEL)
        others = [c for c in cards if not (c[1] == suit and c[0] in WHEEL_RANKS)]
        if _natural_suited_pair(others) == frozenset({ACE, QUEEN}):
            lines.add(NATURAL_WHEEL_PLUS_ACE_QUEEN)
    return lines


def rank_lines(ranks: Sequence[int]) -> set[str]:
    """Rank-count lines of seven ranks (a stand-in for the joker may duplicate a rank)."""
    counts = Counter(ranks)
    pairs = sum(1 for n in counts.values() if n >= 2)
    most = max(counts.values())
    lines: set[str] = set()
    if pairs >= 1:
        lines.add(PAIR)
    if pairs >= 2:
        lines.add(TWO_PAIR)
    if pairs >= 3:
        lines.add(THREE_PAIR)
    if most >= 3:
        lines.add(THREE_OF_A_KIND)
    if most >= 4:
        lines.add(FOUR_OF_A_KIND)
    if most >= 5:
        lines.add(FIVE_OF_A_KIND)
    if counts[ACE] >= 5:
        lines.add(FIVE_ACES)
    if any(a != b and counts[a] >= 3 and counts[b] >= 2 for a in counts for b in counts):
        lines.add(FULL_HOUSE)
    return lines


@lru_cache(maxsize=1 << 12)
def _suited_lines_of(key: tuple[str, ...]) -> frozenset[str]:
    """Suited lines of a hand, joker used every allowed way (the same in both modes)."""
    naturals, has_joker = parse_hand(key, 7)
    concrete = [(rank, suit, False) for rank, suit in naturals]
    if not has_joker:
        return frozenset(suited_lines(concrete))
    lines: set[str] = set()
    for rank, suit in joker_substitutions(naturals, FULLY_WILD):
        if suit != NO_SUIT:  # a straight or flush needs a real card
            lines |= suited_lines([*concrete, (rank, suit, True)])
    return frozenset(lines)


def qualifying_lines(codes: str | Iterable[str], mode: str = SEMI_WILD) -> frozenset[str]:
    """Every per-hand line slug a seven-card hand qualifies for under a joker mode."""
    check_mode(mode)
    key = hand_key(codes)
    naturals, has_joker = parse_hand(key, 7)
    lines = set(_suited_lines_of(key))
    ranks = [rank for rank, _ in naturals]
    if has_joker:
        for rank, suit in joker_substitutions(naturals, mode):
            if suit == NO_SUIT:
                lines |= rank_lines([*ranks, rank])
    else:
        lines |= rank_lines(ranks)
    # Ace high (Face Up): a pai gow hand, i.e. no pair, straight or flush even with the
    # joker's help, whose top card is an ace.
    if not lines & {PAIR, STRAIGHT, FLUSH}:
        if ACE in ranks and not has_joker:
            lines.add(ACE_HIGH_NO_JOKER)
        if has_joker and ACE not in ranks:  # never in fully-wild: there the joker pairs
            lines.add(ACE_HIGH_WITH_JOKER)
    return frozenset(lines | insurance_lines(naturals, has_joker=has_joker))


def insurance_lines(naturals: Sequence[NaturalCard], *, has_joker: bool) -> set[str]:
    """The NJ insurance wager's pai gow line, in either joker mode (N.J.A.C. 13:69F-11.2(h)).

    For this wager the joker is ranked as an ace and is nothing else: it becomes one unsuited
    ace, and the seven concrete cards are then a pai gow hand when no two share a rank, no five
    of them are a straight, and no five are of one suit. The line names the top card.
    """
    cards = [*naturals, (ACE, NO_SUIT)] if has_joker else list(naturals)
    ranks = [rank for rank, _ in cards]
    if len(set(ranks)) < len(ranks):
        return set()
    if any(straight_top(five) is not None for five in combinations(ranks, 5)):
        return set()
    suits = Counter(suit for _, suit in cards if suit != NO_SUIT)
    if max(suits.values()) >= 5:
        return set()
    top = max(ranks)
    if top != ACE:
        return {INSURANCE_BY_TOP[top]}
    kind = INSURANCE_ACE_HIGH_WITH_JOKER if has_joker else INSURANCE_ACE_HIGH_NO_JOKER
    return {INSURANCE_ACE_HIGH, kind}


def ace_high_outcome(
    dealer_codes: str | Iterable[str], player_codes: str | Iterable[str], mode: str = SEMI_WILD
) -> str | None:
    """The Face Up ace-high outcome of a dealer's and a player's hand from one deck, if any."""
    dealer, player = hand_key(dealer_codes), hand_key(player_codes)
    if set(dealer) & set(player):
        raise ValueError("the dealer's and the player's hands share a card")
    dealer_lines = qualifying_lines(dealer, mode)
    player_lines = qualifying_lines(player, mode)
    ace_high = {ACE_HIGH_WITH_JOKER, ACE_HIGH_NO_JOKER}
    if dealer_lines & ace_high and player_lines & ace_high:
        return BOTH_ACE_HIGH
    if player_lines & ace_high:
        return None
    if ACE_HIGH_WITH_JOKER in dealer_lines:
        return DEALER_ONLY_ACE_HIGH_WITH_JOKER
    if ACE_HIGH_NO_JOKER in dealer_lines:
        return DEALER_ONLY_ACE_HIGH_NO_JOKER
    return None


# ---------------------------------------------------------------------------------------------
# Natural lines: what a hand makes without the joker (the analyzer's natural and joker split)


def natural_lines(codes: str | Iterable[str], mode: str = SEMI_WILD) -> frozenset[str]:
    """The lines of a seven-card hand that its natural cards make by themselves."""
    return split_lines(codes, mode)[1]


def split_lines(
    codes: str | Iterable[str], mode: str = SEMI_WILD
) -> tuple[frozenset[str], frozenset[str]]:
    """A hand's lines (:func:`qualifying_lines`), and those its natural cards make by themselves.

    A hand without the joker makes each of its lines naturally. In a hand with the joker, a
    line is natural when the six natural cards alone, under plain poker rules and with no
    substitution, already make it: the straight, flush and rank-count lines that
    :func:`suited_lines` and :func:`rank_lines` give any cards. The pai gow lines (Face Up's ace
    high, the insurance lines) never are: in a hand with the joker they need the joker as the
    ace, since a natural ace beside it would pair it.
    """
    check_mode(mode)
    key = hand_key(codes)
    naturals, has_joker = parse_hand(key, 7)
    lines = qualifying_lines(key, mode)
    if not has_joker:
        return lines, lines
    alone = suited_lines([(rank, suit, False) for rank, suit in naturals])
    alone |= rank_lines([rank for rank, _ in naturals])
    return lines, lines & frozenset(alone)
