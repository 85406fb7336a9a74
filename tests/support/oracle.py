"""An independent brute-force oracle for the Pai Gow Poker rules engine, used only by the tests.

The oracle shares no code with :mod:`controller`: it takes card codes (``"As"``, ``"Td"``,
``"Jk"``) and returns line and category slugs and plain comparable tuples. It is written from
the rules as docs/rules.md reads them, 58 Pa. Code § 645a.6 and N.J.A.C. 13:69F-11, and it
trades speed for being obviously right.

How it works
============

*Substitution.* Every question about a hand holding the joker is answered by replacing the
joker with each card it is allowed to be, evaluating the resulting joker-free ("concrete")
hand with plain poker rules, and combining the answers:

- *Qualifying lines* (:func:`qualifying_lines`) are existential: a line holds when it holds
  for at least one allowed substitution, and each line chooses its own.

  - Straight, flush and straight-flush lines (royal, seven-card straight flush, royal match,
    ...): the joker becomes, in turn, each of the 52 natural cards not already in the hand.
    That is the rule in both modes ("any card not already in the hand that completes a
    straight, flush, straight flush or royal flush"; a substitution that completes nothing
    cannot make one of these lines hold). The substituted card is marked *wild*, so
    "natural" lines and "with joker" lines can tell whether it was used.
  - Rank-count lines (pair ... four of a kind, five aces, five of a kind): the joker becomes
    an unsuited card of one rank, which may duplicate a card of the hand. Semi-wild: only the
    ace. Fully wild: each of the 13 ranks in turn.
  - Ace high is read off the other lines: no pair, no straight and no flush (each with the
    joker's help), and the top card an ace (a natural ace without the joker, or the joker as
    the ace without a natural ace).
  - The NJ insurance wager's pai gow lines (:func:`insurance_lines`) give the joker one
    substitution in either mode, an unsuited ace (N.J.A.C. 13:69F-11.2(h)).

- *Five-card values* (:func:`five_card_value`): the joker becomes every allowed card and the
  best concrete value is kept. Semi-wild: an unsuited ace, or any card not already in the five
  whose concrete hand is a straight, flush, straight flush or royal flush. Fully wild: any
  card not already in the five, or an unsuited card of any rank (so five of a kind exists).
- *Seven-card values* (:func:`best_five_category`, :func:`compare_seven`): the best of the 21
  five-card values. Whether "not already in the hand" means the five or the seven cards makes
  no difference here: a joker standing for one of the two unused cards gives the same concrete
  five cards as that natural card does.

*Concrete values* are ``(category index, key)`` tuples compared lexicographically. Categories
run ``high-card`` (0) up to ``five-of-a-kind`` (10). The key is the highest-unmatched-card
rule: the ranks of the groups, biggest group first and higher rank first, which is also card by
card from the top for flushes and high cards. Straights and straight flushes are keyed by their
position in an explicit list of the ten straights, ordered as § 645a.6(b)(3),(7) (A-2-3-4-5
second highest) or as N.J.A.C. 13:69F-11(d) (A-2-3-4-5 lowest); the A-high straight flush is
the ``royal-flush`` category of its own.

*Speed.* Straight-type lines use rank bitmasks (bit ``r`` for rank ``r``, and bit 1 again for
the ace as low card) and skip suits with fewer than five cards; five-card values and the
mode-independent part of the lines are memoised.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

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

# ---------------------------------------------------------------------------------------------
# Line slugs (the paytable names, as in controller/rules/lines.py)

SF7_NATURAL: Final = "seven-card-straight-flush-natural"
SF7_WITH_JOKER: Final = "seven-card-straight-flush-with-joker"
SF7: Final = "seven-card-straight-flush"
ROYAL_PLUS_KING_QUEEN: Final = "royal-flush-plus-natural-suited-king-queen"
ROYAL_PLUS_ACE_KING: Final = "royal-flush-plus-natural-suited-ace-king"
ROYAL_PLUS_ACE_QUEEN: Final = "royal-flush-plus-natural-suited-ace-queen"
NATURAL_ROYAL_PLUS_ACE_QUEEN: Final = "natural-royal-flush-plus-natural-suited-ace-queen"
NATURAL_ROYAL_PLUS_ACE_KING: Final = "natural-royal-flush-plus-natural-suited-ace-king"
NATURAL_WHEEL_PLUS_ACE_QUEEN: Final = (
    "natural-ace-five-straight-flush-plus-natural-suited-ace-queen"
)
NATURAL_WHEEL: Final = "natural-ace-five-straight-flush"
FIVE_ACES: Final = "five-aces"
FIVE_OF_A_KIND: Final = "five-of-a-kind"
ROYAL_FLUSH: Final = "royal-flush"
NATURAL_ROYAL_FLUSH: Final = "natural-royal-flush"
STRAIGHT_FLUSH: Final = "straight-flush"
STRAIGHT_FLUSH_WITHOUT_JOKER: Final = "straight-flush-without-joker"
STRAIGHT_FLUSH_WITH_JOKER: Final = "straight-flush-with-joker"
FOUR_OF_A_KIND: Final = "four-of-a-kind"
FULL_HOUSE: Final = "full-house"
FLUSH: Final = "flush"
STRAIGHT: Final = "straight"
THREE_OF_A_KIND: Final = "three-of-a-kind"
THREE_PAIR: Final = "three-pair"
TWO_PAIR: Final = "two-pair"
PAIR: Final = "pair"
ACE_HIGH_WITH_JOKER: Final = "ace-high-with-joker"
ACE_HIGH_NO_JOKER: Final = "ace-high-no-joker"
BOTH_ACE_HIGH: Final = "dealer-and-player-ace-high"
DEALER_ONLY_ACE_HIGH_WITH_JOKER: Final = "dealer-only-ace-high-with-joker"
DEALER_ONLY_ACE_HIGH_NO_JOKER: Final = "dealer-only-ace-high-no-joker"
INSURANCE_ACE_HIGH: Final = "insurance-ace-high"
INSURANCE_ACE_HIGH_WITH_JOKER: Final = "insurance-ace-high-with-joker"
INSURANCE_ACE_HIGH_NO_JOKER: Final = "insurance-ace-high-no-joker"
INSURANCE_BY_TOP: Final = {
    9: "insurance-nine-high",
    TEN: "insurance-ten-high",
    11: "insurance-jack-high",
    QUEEN: "insurance-queen-high",
    KING: "insurance-king-high",
}
INSURANCE_LINES: Final = frozenset(
    {
        INSURANCE_ACE_HIGH,
        INSURANCE_ACE_HIGH_WITH_JOKER,
        INSURANCE_ACE_HIGH_NO_JOKER,
        *INSURANCE_BY_TOP.values(),
    }
)

PER_HAND_LINES: Final = frozenset(
    {
        SF7_NATURAL,
        SF7_WITH_JOKER,
        SF7,
        ROYAL_PLUS_KING_QUEEN,
        ROYAL_PLUS_ACE_KING,
        ROYAL_PLUS_ACE_QUEEN,
        NATURAL_ROYAL_PLUS_ACE_QUEEN,
        NATURAL_ROYAL_PLUS_ACE_KING,
        NATURAL_WHEEL_PLUS_ACE_QUEEN,
        NATURAL_WHEEL,
        FIVE_ACES,
        FIVE_OF_A_KIND,
        ROYAL_FLUSH,
        NATURAL_ROYAL_FLUSH,
        STRAIGHT_FLUSH,
        STRAIGHT_FLUSH_WITHOUT_JOKER,
        STRAIGHT_FLUSH_WITH_JOKER,
        FOUR_OF_A_KIND,
        FULL_HOUSE,
        FLUSH,
        STRAIGHT,
        THREE_OF_A_KIND,
        THREE_PAIR,
        TWO_PAIR,
        PAIR,
        ACE_HIGH_WITH_JOKER,
        ACE_HIGH_NO_JOKER,
        *INSURANCE_LINES,
    }
)
OUTCOME_LINES: Final = frozenset(
    {BOTH_ACE_HIGH, DEALER_ONLY_ACE_HIGH_WITH_JOKER, DEALER_ONLY_ACE_HIGH_NO_JOKER}
)

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


def _parse_hand(codes: str | Iterable[str], size: int) -> tuple[list[NaturalCard], bool]:
    """The natural cards and whether the joker is present; checks size and distinctness."""
    parsed = [parse_code(code) for code in split_codes(codes)]
    if len(parsed) != size:
        raise ValueError(f"expected {size} cards, got {len(parsed)}")
    if len(set(parsed)) != size:
        raise ValueError(f"duplicate card in {codes!r}")
    naturals = [card for card in parsed if card is not None]
    return naturals, len(naturals) < size


def _key(codes: str | Iterable[str]) -> tuple[str, ...]:
    """A canonical, hashable form of a hand for the memo tables."""
    return tuple(sorted(code_of(c) if c else JOKER for c in map(parse_code, split_codes(codes))))


NATURAL_CARDS: Final[tuple[NaturalCard, ...]] = tuple(
    (rank, suit) for rank in RANKS for suit in range(len(SUIT_SYMBOLS))
)


# ---------------------------------------------------------------------------------------------
# Five-card ranking


def _straight_top(ranks: Sequence[int]) -> int | None:
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
    top = _straight_top(ranks)
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
    naturals, has_joker = _parse_hand(key, 5)
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


def _check_mode(mode: str, ace_five: str = SECOND_HIGHEST) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown joker mode {mode!r}")
    if ace_five not in ACE_FIVE_OPTIONS:
        raise ValueError(f"unknown ace-five option {ace_five!r}")


def five_card_value(
    codes5: str | Iterable[str], mode: str = SEMI_WILD, ace_five: str = SECOND_HIGHEST
) -> tuple[str, Value]:
    """The category slug and comparable value of a five-card hand (best joker use)."""
    _check_mode(mode, ace_five)
    value = _five_value(_key(codes5), mode, ace_five)
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
    _parse_hand(key, 7)
    return max(_five_value(five, mode, ace_five) for five in combinations(key, 5))


def best_five_value(
    codes7: str | Iterable[str], mode: str = SEMI_WILD, ace_five: str = SECOND_HIGHEST
) -> Value:
    """The value of the best five-card hand among seven cards."""
    _check_mode(mode, ace_five)
    return _seven_value(_key(codes7), mode, ace_five)


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
    naturals, has_joker = _parse_hand(codes2, 2)
    ranks = sorted([rank for rank, _ in naturals] + [ACE] * has_joker, reverse=True)
    if ranks[0] == ranks[1]:
        return PAIR_CAT, (ranks[0],)
    return HIGH_CARD_CAT, tuple(ranks)


def compare_two(a2: str | Iterable[str], b2: str | Iterable[str]) -> int:
    """Compare two two-card (low) hands (1, 0 or -1)."""
    return _sign(two_card_value(a2), two_card_value(b2))


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
    naturals, has_joker = _parse_hand(key, 7)
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
    _check_mode(mode)
    key = _key(codes)
    naturals, has_joker = _parse_hand(key, 7)
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
    if any(_straight_top(five) is not None for five in combinations(ranks, 5)):
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
    dealer, player = _key(dealer_codes), _key(player_codes)
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
    _check_mode(mode)
    key = _key(codes)
    naturals, has_joker = _parse_hand(key, 7)
    lines = qualifying_lines(key, mode)
    if not has_joker:
        return lines, lines
    alone = suited_lines([(rank, suit, False) for rank, suit in naturals])
    alone |= rank_lines([rank for rank, _ in naturals])
    return lines, lines & frozenset(alone)


# ---------------------------------------------------------------------------------------------
# Paytables: the line a hand is paid on, and the Dynasty Bonus hands of each reading

DYNASTY_HANDS: Final[dict[str, tuple[str, ...]]] = {
    # 58 Pa. Code § 645a.6(g)(1)-(5); (g)(3) by its text, "an additional ace and queen of the
    # same suit without a joker", the royal itself "without a joker".
    "pa": (
        NATURAL_WHEEL_PLUS_ACE_QUEEN,
        SF7_NATURAL,
        NATURAL_ROYAL_PLUS_ACE_QUEEN,
        SF7_WITH_JOKER,
        NATURAL_WHEEL,
    ),
    # § 645a.6(g)(3) by its caption, "a natural royal flush and a natural ace/king suited".
    "pa-caption": (
        NATURAL_WHEEL_PLUS_ACE_QUEEN,
        SF7_NATURAL,
        NATURAL_ROYAL_PLUS_ACE_KING,
        SF7_WITH_JOKER,
        NATURAL_WHEEL,
    ),
    # N.J.A.C. 13:69F-11(i)1-4: (i)3's royal is "with or without a joker"; no (g)(5).
    "nj": (NATURAL_WHEEL_PLUS_ACE_QUEEN, SF7_NATURAL, ROYAL_PLUS_ACE_QUEEN, SF7_WITH_JOKER),
}
"""Each Dynasty reading's seven-card hands, highest first, as the texts list them."""


def odds_of(pays: str) -> int:
    """N of an odds pay written ``N to 1`` (thousands separated or not); 0 for ``Push``."""
    if pays == "Push":
        return 0
    number, to_one = pays.split(" to ")
    if to_one != "1":
        raise ValueError(f"not an odds pay: {pays!r}")
    return int(number.replace(",", ""))


def paid_line(lines: Iterable[str], rows: Sequence[tuple[str, str]]) -> str | None:
    """The line of the highest-paying odds row (slug, pays) a hand has; ties: the first listed.

    docs/rules.md § 4.2: "each hand is paid on exactly one line, the highest-paying line of that
    paytable that the hand qualifies for".
    """
    held = set(lines)
    best: tuple[int, str] | None = None
    for slug, pays in rows:
        if slug in held and (best is None or odds_of(pays) > best[0]):
            best = (odds_of(pays), slug)
    return None if best is None else best[1]
