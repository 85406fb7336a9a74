"""The rules engine agrees with the independent brute-force oracle of tests/support/oracle.py.

Compared here: the seven-card lines of :func:`controller.rules.qualify.qualifier`, the Face Up
ace-high outcomes, and the five-, seven- and two-card rankings of :mod:`controller.rules.ranking`.
Each is checked on random hands (hypothesis), on hands biased toward the rare lines (seven-card
straight flushes, royal matches, five aces, ace high with the joker ...), on every hand of a few
reduced decks, and on hand-written spot checks. Tests are named after the clause they prove.
"""

from __future__ import annotations

import functools
from itertools import combinations, pairwise
from typing import TYPE_CHECKING, Protocol, Self, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import oracle
from support.hands import ALL_CODES, JOKER, SUITS, any_seven, code, rich_hands

from controller.analyzer.census import natural_lines
from controller.rules.cards import Card, JokerMode, SevenCardHand, parse_cards
from controller.rules.lines import lines_in
from controller.rules.qualify import ace_high_outcomes, qualifier
from controller.rules.ranking import AceFive, best_five, evaluate_five, evaluate_two

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Self

    from controller.rules.qualify import Qualifier
    from controller.rules.ranking import HandValue

MODES = oracle.MODES

# ---------------------------------------------------------------------------------------------
# The engine, driven with card codes


@functools.cache
def _classifier(mode: str) -> Qualifier:
    return qualifier(JokerMode(mode))


def engine_mask(codes: Iterable[str], mode: str) -> int:
    return _classifier(mode)(SevenCardHand.parse(list(codes)).indices)


def engine_lines(codes: Iterable[str], mode: str) -> frozenset[str]:
    return frozenset(line.value for line in lines_in(engine_mask(codes, mode)))


def engine_outcomes(dealer: Sequence[str], player: Sequence[str], mode: str) -> frozenset[str]:
    mask = ace_high_outcomes(engine_mask(dealer, mode), engine_mask(player, mode))
    return frozenset(line.value for line in lines_in(mask))


def engine_five(codes: Iterable[str], mode: str, ace_five: str) -> HandValue:
    cards = parse_cards(list(codes))
    return evaluate_five(cards, JokerMode(mode), AceFive(ace_five)).value


def slug(value: HandValue) -> str:
    return value.category.name.lower().replace("_", "-")


class _Ordered(Protocol):
    """A value ordered against its own kind: a hand value, a rank tuple."""

    def __lt__(self, other: Self, /) -> bool: ...
    def __gt__(self, other: Self, /) -> bool: ...


_O = TypeVar("_O", bound=_Ordered)


def sign(a: _O, b: _O) -> int:
    return (a > b) - (a < b)


def describe(codes: Iterable[str], mode: str, expected: frozenset[str], got: frozenset[str]) -> str:
    missing = sorted(expected - got)
    extra = sorted(got - expected)
    return f"{' '.join(codes)} [{mode}]: engine lacks {missing}, engine adds {extra}"


def assert_lines_agree(codes: Sequence[str], mode: str) -> None:
    expected = oracle.qualifying_lines(codes, mode)
    got = engine_lines(codes, mode)
    assert got == expected, describe(codes, mode, expected, got)


# ---------------------------------------------------------------------------------------------
# Strategies


@st.composite
def ace_high_leaning(draw: st.DrawFn, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Seven cards, often ace high (with or without the joker), avoiding ``exclude``."""
    free = [c for c in ALL_CODES if c not in exclude]
    kind = draw(st.sampled_from(["no-joker", "with-joker", "random"]))
    hand: list[str] = []
    if kind != "random":
        for rank in draw(st.lists(st.integers(2, 13), min_size=6, max_size=6, unique=True)):
            options = [code(rank, s) for s in SUITS if code(rank, s) in free]
            if options:
                hand.append(draw(st.sampled_from(options)))
        tops = [JOKER] if kind == "with-joker" and JOKER in free else []
        tops = tops or [code(oracle.ACE, s) for s in SUITS if code(oracle.ACE, s) in free]
        if tops:
            hand.append(draw(st.sampled_from(tops)))
    while len(hand) < 7:
        hand.append(draw(st.sampled_from([c for c in free if c not in hand])))
    return hand


@st.composite
def dealer_and_player(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    dealer = draw(ace_high_leaning())
    return dealer, draw(ace_high_leaning(frozenset(dealer)))


def joker_first(hand: list[str]) -> st.SearchStrategy[list[str]]:
    """Five of the seven cards, keeping the joker when the hand holds it, usually."""
    return st.permutations(hand).map(lambda cards: sorted(cards, key=lambda c: c != JOKER)[:5])


any_five = st.lists(st.sampled_from(ALL_CODES), min_size=5, max_size=5, unique=True)
joker_five = st.lists(
    st.sampled_from(oracle.NATURAL_CODES), min_size=4, max_size=4, unique=True
).map(lambda four: [*four, JOKER])


@st.composite
def shaped_fives(draw: st.DrawFn) -> list[str]:
    """Four cards of a narrow rank band, often of one suit, and the joker or a fifth card."""
    suit = draw(st.sampled_from(SUITS))
    low = draw(st.integers(1, 9))  # the band low .. low + 5; rank 1 is the ace played low
    ranks = draw(st.lists(st.integers(low, low + 5), min_size=4, max_size=4, unique=True))
    suited = draw(st.booleans())
    cards = [code(rank, suit if suited else draw(st.sampled_from(SUITS))) for rank in ranks]
    fifth = JOKER if draw(st.booleans()) else None
    return [*cards, fifth or draw(st.sampled_from([c for c in ALL_CODES if c not in cards]))]


fives = st.one_of(any_five, joker_five, shaped_fives(), rich_hands().flatmap(joker_first))
sevens = st.one_of(any_seven, rich_hands())
modes = st.sampled_from(MODES)
ace_fives = st.sampled_from(oracle.ACE_FIVE_OPTIONS)

# ---------------------------------------------------------------------------------------------
# Seven-card lines: random and biased hands


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=400, deadline=None)
@given(hand=any_seven)
def test_645a6_d_seven_card_lines_match_oracle(mode: str, hand: list[str]) -> None:
    assert_lines_agree(hand, mode)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=600, deadline=None)
@given(hand=rich_hands())
def test_645a6_d_to_g_rare_seven_card_lines_match_oracle(mode: str, hand: list[str]) -> None:
    assert_lines_agree(hand, mode)


def test_rich_hands_reach_every_line() -> None:
    """The biased strategy above really exercises every per-hand line, in both modes."""
    seen: dict[str, set[str]] = {mode: set() for mode in MODES}

    @settings(max_examples=1500, deadline=None, derandomize=True, database=None)
    @given(hand=rich_hands())
    def collect(hand: list[str]) -> None:
        for mode in MODES:
            seen[mode] |= oracle.qualifying_lines(hand, mode)

    collect()
    assert seen[oracle.SEMI_WILD] == oracle.PER_HAND_LINES
    assert seen[oracle.FULLY_WILD] == oracle.PER_HAND_LINES - {oracle.ACE_HIGH_WITH_JOKER}


# ---------------------------------------------------------------------------------------------
# 688a.12(b) Face Up: ace-high outcomes over a dealer's and a player's hand


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=400, deadline=None)
@given(hands=dealer_and_player())
def test_688a12_b_ace_high_outcomes_match_oracle(
    mode: str, hands: tuple[list[str], list[str]]
) -> None:
    dealer, player = hands
    outcome = oracle.ace_high_outcome(dealer, player, mode)
    expected = frozenset() if outcome is None else frozenset({outcome})
    got = engine_outcomes(dealer, player, mode)
    assert got == expected, f"dealer {dealer} player {player} [{mode}]: {got} != {expected}"


def test_688a12_b_ace_high_strategy_reaches_every_outcome() -> None:
    seen: set[str | None] = set()

    @settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @given(hands=dealer_and_player())
    def collect(hands: tuple[list[str], list[str]]) -> None:
        seen.add(oracle.ace_high_outcome(*hands))

    collect()
    assert seen == {*oracle.OUTCOME_LINES, None}


# ---------------------------------------------------------------------------------------------
# Every hand of a reduced deck


def deck(ranks: str, suits: str, *extra: str) -> tuple[str, ...]:
    return (*(r + s for r in ranks for s in suits), *extra, JOKER)


REDUCED_DECKS = {
    # name: (cards, the rare lines its hands must reach, so the deck is not trivial)
    "broadway-9-to-A-3-suits": (
        deck("9TJQKA", "shd"),
        {
            oracle.ROYAL_PLUS_KING_QUEEN,
            oracle.ROYAL_PLUS_ACE_KING,
            oracle.ROYAL_PLUS_ACE_QUEEN,
            oracle.NATURAL_ROYAL_PLUS_ACE_KING,
            oracle.NATURAL_ROYAL_PLUS_ACE_QUEEN,
            oracle.SF7_WITH_JOKER,
            oracle.STRAIGHT_FLUSH_WITH_JOKER,
            oracle.NATURAL_ROYAL_FLUSH,
        },
    ),
    "wheel-A-to-6-3-suits-and-Qh": (
        deck("A23456", "shd", "Qh"),
        {
            oracle.NATURAL_WHEEL,
            oracle.NATURAL_WHEEL_PLUS_ACE_QUEEN,
            oracle.SF7_WITH_JOKER,
            oracle.STRAIGHT_FLUSH_WITH_JOKER,
        },
    ),
    "run-2-to-9-2-suits": (
        deck("23456789", "sh"),
        {oracle.SF7_NATURAL, oracle.SF7_WITH_JOKER, oracle.STRAIGHT_FLUSH_WITHOUT_JOKER},
    ),
    "sets-A-K-2-4-suits": (
        deck("AK2", "shdc"),
        {oracle.FIVE_ACES, oracle.FIVE_OF_A_KIND, oracle.FULL_HOUSE, oracle.THREE_PAIR},
    ),
    "ace-high-8-ranks-2-suits": (
        deck("AK975432", "sh"),
        {oracle.ACE_HIGH_NO_JOKER, oracle.ACE_HIGH_WITH_JOKER},
    ),
}


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", REDUCED_DECKS)
def test_645a6_every_seven_card_hand_of_reduced_deck_matches_oracle(name: str) -> None:
    """Every seven-card hand of the deck, with or without the joker, in both modes."""
    cards, reaches = REDUCED_DECKS[name]
    mismatches = []
    hands = 0
    seen: set[str] = set()
    for hand in combinations(cards, 7):
        hands += 1
        for mode in MODES:
            expected = oracle.qualifying_lines(hand, mode)
            seen |= expected
            got = engine_lines(hand, mode)
            if got != expected:
                mismatches.append(describe(hand, mode, expected, got))
    assert not mismatches, f"{len(mismatches)} of {2 * hands} disagree:\n" + "\n".join(
        mismatches[:15]
    )
    assert reaches <= seen


# ---------------------------------------------------------------------------------------------
# Spot checks: every rare line, hand-written, must and must not

L = oracle
SPOT_CHECKS = [
    # hand, mode, lines it must have, lines it must not have
    ("3h 4h 5h 6h 7h 8h 9h", "semi-wild", {L.SF7_NATURAL, L.SF7}, {L.SF7_WITH_JOKER}),
    ("As 2s 3s 4s 5s 6s 7s", "fully-wild", {L.SF7_NATURAL, L.NATURAL_WHEEL}, {L.SF7_WITH_JOKER}),
    ("8d 9d Td Jd Qd Kd Ad", "semi-wild", {L.SF7_NATURAL, L.NATURAL_ROYAL_FLUSH}, set()),
    ("Qs Ks As 2s 3s 4s 5s", "semi-wild", {L.NATURAL_WHEEL}, {L.SF7, L.SF7_NATURAL}),
    ("3h 4h 5h Jk 7h 8h 9h", "semi-wild", {L.SF7_WITH_JOKER, L.SF7}, {L.SF7_NATURAL}),
    ("Jk 2h 3h 4h 5h 6h 7h", "fully-wild", {L.SF7_WITH_JOKER}, {L.NATURAL_WHEEL}),
    ("Jk 9c Tc Jc Qc Kc Ac", "semi-wild", {L.SF7_WITH_JOKER, L.NATURAL_ROYAL_FLUSH}, set()),
    ("3h 4h 5h Jk 7h 8h Th", "semi-wild", {L.STRAIGHT_FLUSH_WITH_JOKER}, {L.SF7}),
    ("3h 4h 5h 6h 7h 8h 9c", "semi-wild", {L.STRAIGHT_FLUSH}, {L.SF7}),
    ("As Ks Qs Js Ts Kh Qh", "semi-wild", {L.ROYAL_PLUS_KING_QUEEN}, {L.ROYAL_PLUS_ACE_KING}),
    ("As Ks Qs Jk Ts Kh Qh", "fully-wild", {L.ROYAL_PLUS_KING_QUEEN}, {L.NATURAL_ROYAL_FLUSH}),
    ("As Ks Qs Js Ts Kh Jk", "semi-wild", {L.NATURAL_ROYAL_FLUSH}, {L.ROYAL_PLUS_KING_QUEEN}),
    ("As Ks Qs Js Ts Kh Qd", "semi-wild", {L.ROYAL_FLUSH}, {L.ROYAL_PLUS_KING_QUEEN}),
    (
        "As Ks Qs Js Ts Ah Kh",
        "semi-wild",
        {L.ROYAL_PLUS_ACE_KING, L.NATURAL_ROYAL_PLUS_ACE_KING},
        set(),
    ),
    ("Jk Ks Qs Js Ts Ah Kh", "semi-wild", {L.ROYAL_PLUS_ACE_KING}, {L.NATURAL_ROYAL_PLUS_ACE_KING}),
    ("As Ks Qs Js Ts Ah Jk", "fully-wild", {L.ROYAL_FLUSH}, {L.ROYAL_PLUS_ACE_KING}),
    (
        "As Ks Qs Js Ts Ah Qh",
        "semi-wild",
        {L.ROYAL_PLUS_ACE_QUEEN, L.NATURAL_ROYAL_PLUS_ACE_QUEEN},
        set(),
    ),
    (
        "As Ks Jk Js Ts Ah Qh",
        "semi-wild",
        {L.ROYAL_PLUS_ACE_QUEEN},
        {L.NATURAL_ROYAL_PLUS_ACE_QUEEN},
    ),
    (
        "As Ks Qs Js Ts Ah Qd",
        "semi-wild",
        {L.NATURAL_ROYAL_FLUSH},
        {L.NATURAL_ROYAL_PLUS_ACE_QUEEN},
    ),
    ("As 2s 3s 4s 5s Ah Qh", "semi-wild", {L.NATURAL_WHEEL_PLUS_ACE_QUEEN, L.NATURAL_WHEEL}, set()),
    ("As 2s 3s 4s 5s Ah Qd", "semi-wild", {L.NATURAL_WHEEL}, {L.NATURAL_WHEEL_PLUS_ACE_QUEEN}),
    ("Jk 2s 3s 4s 5s Ah Qh", "semi-wild", {L.STRAIGHT_FLUSH_WITH_JOKER}, {L.NATURAL_WHEEL}),
    ("As 2s 3s 4s 5s Jk Qh", "fully-wild", {L.NATURAL_WHEEL}, {L.NATURAL_WHEEL_PLUS_ACE_QUEEN}),
    ("As Ah Ad Ac Jk 2c 3d", "semi-wild", {L.FIVE_ACES, L.FIVE_OF_A_KIND, L.FOUR_OF_A_KIND}, set()),
    ("As Ah Ad Ac Jk 2c 3d", "fully-wild", {L.FIVE_ACES, L.FIVE_OF_A_KIND}, set()),
    ("As Ah Ad Ac Kc 2c 3d", "semi-wild", {L.FOUR_OF_A_KIND}, {L.FIVE_ACES, L.FIVE_OF_A_KIND}),
    ("7s 7h 7d 7c Jk 2c 3d", "fully-wild", {L.FIVE_OF_A_KIND}, {L.FIVE_ACES}),
    ("7s 7h 7d 7c Jk 2c 3d", "semi-wild", {L.FOUR_OF_A_KIND}, {L.FIVE_OF_A_KIND, L.FULL_HOUSE}),
    (
        "9h Th Jh Qh Kh Jk 2c",
        "semi-wild",
        {L.ROYAL_FLUSH, L.STRAIGHT_FLUSH_WITH_JOKER},
        {L.NATURAL_ROYAL_FLUSH},
    ),
    (
        "9h Th Jh Qh Kh Ah 2c",
        "semi-wild",
        {L.STRAIGHT_FLUSH_WITHOUT_JOKER},
        {L.STRAIGHT_FLUSH_WITH_JOKER},
    ),
    (
        "9h Th Jh 2h Kh Jk 2c",
        "fully-wild",
        {L.STRAIGHT_FLUSH_WITH_JOKER},
        {L.STRAIGHT_FLUSH_WITHOUT_JOKER},
    ),
    ("2s 2h 5d 5c As Jk Kd", "semi-wild", {L.THREE_PAIR}, {L.FULL_HOUSE}),
    ("2s 2h 5d 5c 9s Jk Kd", "semi-wild", {L.TWO_PAIR}, {L.THREE_PAIR, L.THREE_OF_A_KIND}),
    ("2s 2h 5d 5c 9s Jk Kd", "fully-wild", {L.THREE_PAIR, L.FULL_HOUSE}, {L.FOUR_OF_A_KIND}),
    ("As Kd 9c 7h 5s 3d 2c", "semi-wild", {L.ACE_HIGH_NO_JOKER}, {L.ACE_HIGH_WITH_JOKER}),
    ("Jk Kd 9c 7h 5s 3d 2c", "semi-wild", {L.ACE_HIGH_WITH_JOKER}, {L.ACE_HIGH_NO_JOKER}),
    ("Jk Kd 9c 7h 5s 3d 2c", "fully-wild", {L.PAIR}, {L.ACE_HIGH_WITH_JOKER}),
    ("Jk Ad 9c 7h 5s 3d Kc", "semi-wild", {L.PAIR}, {L.ACE_HIGH_WITH_JOKER, L.ACE_HIGH_NO_JOKER}),
    ("Jk Kd 9c 6h 5s 4d 2c", "semi-wild", {L.STRAIGHT}, {L.ACE_HIGH_WITH_JOKER}),
    ("Jk Kd 9d 6d 3d 4c 2s", "semi-wild", {L.FLUSH}, {L.ACE_HIGH_WITH_JOKER}),
    ("As Kd 9c 5d 3h 4d 2s", "semi-wild", {L.STRAIGHT}, {L.ACE_HIGH_NO_JOKER}),
    ("As Kd Qd 8d 3d 4c 9d", "semi-wild", {L.FLUSH}, {L.ACE_HIGH_NO_JOKER}),
]


@pytest.mark.parametrize(("hand", "mode", "present", "absent"), SPOT_CHECKS)
def test_645a6_spot_checks_of_rare_lines(
    hand: str, mode: str, present: set[str], absent: set[str]
) -> None:
    codes = hand.split()
    for name, got in (
        ("oracle", oracle.qualifying_lines(codes, mode)),
        ("engine", engine_lines(codes, mode)),
    ):
        assert present <= got, f"{name}: {hand} [{mode}] lacks {present - got}"
        assert not absent & got, f"{name}: {hand} [{mode}] has {absent & got}"
    assert_lines_agree(codes, mode)


# ---------------------------------------------------------------------------------------------
# Rankings: five-card hands


@settings(max_examples=600, deadline=None)
@given(a=fives, b=fives, mode=modes, ace_five=ace_fives)
def test_645a6_b_c_five_card_comparisons_match_oracle(
    a: list[str], b: list[str], mode: str, ace_five: str
) -> None:
    value_a, value_b = engine_five(a, mode, ace_five), engine_five(b, mode, ace_five)
    assert slug(value_a) == oracle.five_card_value(a, mode, ace_five)[0], (a, mode)
    assert slug(value_b) == oracle.five_card_value(b, mode, ace_five)[0], (b, mode)
    expected = oracle.compare_five(a, b, mode, ace_five)
    assert sign(value_a, value_b) == expected, (a, b, mode, ace_five)
    assert (value_a == value_b) == (expected == 0)


FIVE_CARD_DECKS = {
    "broadway-9-to-A-3-suits": (deck("9TJQKA", "shd"), ("second-highest",)),
    "wheel-A-to-6-3-suits": (deck("A23456", "shd"), oracle.ACE_FIVE_OPTIONS),
    "sets-A-K-Q-2-4-suits": (deck("AKQ2", "shdc"), ("second-highest",)),
}


@pytest.mark.exhaustive
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FIVE_CARD_DECKS)
def test_645a6_b_c_every_five_card_hand_of_reduced_deck_ranks_as_oracle(
    name: str, mode: str
) -> None:
    """Same category for every hand, and the same order over all of them (ties included).

    The hands are sorted by the oracle's value; the engine must agree on every neighbouring
    pair, which by transitivity means it orders the whole deck's hands the same way.
    """
    cards, options = FIVE_CARD_DECKS[name]
    for ace_five in options:
        rows = []
        wrong = []
        for hand in combinations(cards, 5):
            category, value = oracle.five_card_value(hand, mode, ace_five)
            engine = engine_five(hand, mode, ace_five)
            if slug(engine) != category:
                wrong.append(f"{' '.join(hand)}: oracle {category}, engine {slug(engine)}")
            rows.append((value, engine, hand))
        assert not wrong, f"[{mode}, {ace_five}] {len(wrong)} categories differ:\n" + "\n".join(
            wrong[:15]
        )
        rows.sort(key=lambda row: row[0])
        for (value_a, engine_a, hand_a), (value_b, engine_b, hand_b) in pairwise(rows):
            expected = sign(value_a, value_b)
            assert sign(engine_a, engine_b) == expected, (
                f"[{mode}, {ace_five}] {' '.join(hand_a)} vs {' '.join(hand_b)}: "
                f"oracle {expected}, engine {sign(engine_a, engine_b)}"
            )


# ---------------------------------------------------------------------------------------------
# Rankings: the best five of seven, and two-card hands


@settings(max_examples=300, deadline=None)
@given(a=sevens, b=sevens, mode=modes, ace_five=ace_fives)
def test_645a6_b_c_best_five_of_seven_matches_oracle(
    a: list[str], b: list[str], mode: str, ace_five: str
) -> None:
    results = []
    for hand in (a, b):
        best = best_five(SevenCardHand.parse(hand), JokerMode(mode), AceFive(ace_five))
        assert slug(best.value) == oracle.best_five_category(hand, mode, ace_five), (hand, mode)
        five = [card.code for card in best.cards]
        assert len(set(five)) == 5, (hand, five)
        assert set(five) <= set(hand), (hand, five)
        assert engine_five(five, mode, ace_five) == best.value, (hand, five)
        assert oracle.five_card_value(five, mode, ace_five)[1] == oracle.best_five_value(
            hand, mode, ace_five
        ), (hand, five)
        if JOKER not in five:
            assert best.joker_as is None, (hand, five, best.joker_as)
        elif best.joker_as is not None:
            # The card the joker stands for; a duplicate of a card in the five only pairs.
            play = best.joker_as
            rank = int(play.rank)
            suit = oracle.NO_SUIT if play.suit is None else SUITS.index(play.suit.symbol)
            naturals = [oracle.parse_code(c) or (0, 0) for c in five if c != JOKER]
            stand_in = (rank, oracle.NO_SUIT) if (rank, suit) in naturals else (rank, suit)
            concrete = oracle.concrete_value([*naturals, stand_in], ace_five)
            assert concrete == oracle.five_card_value(five, mode, ace_five)[1], (
                five,
                best.joker_as,
            )
        results.append(best.value)
    assert sign(*results) == oracle.compare_seven(a, b, mode, ace_five), (a, b, mode, ace_five)


twos = st.lists(st.sampled_from(ALL_CODES), min_size=2, max_size=2, unique=True)


@settings(max_examples=300, deadline=None)
@given(a=twos, b=twos)
def test_645a6_b10_two_card_hands_match_oracle(a: list[str], b: list[str]) -> None:
    value_a = evaluate_two([Card.parse(c) for c in a])
    value_b = evaluate_two([Card.parse(c) for c in b])
    assert sign(value_a, value_b) == oracle.compare_two(a, b), (a, b)
    expected_slug = oracle.CATEGORIES[oracle.two_card_value(a)[0]]
    assert slug(value_a) == expected_slug, a


def test_645a6_b10_every_two_card_hand_ranks_as_oracle() -> None:
    hands = sorted(combinations(ALL_CODES, 2), key=oracle.two_card_value)
    values = [evaluate_two([Card.parse(c) for c in hand]) for hand in hands]
    for i in range(len(hands) - 1):
        expected = oracle.compare_two(hands[i], hands[i + 1])
        assert sign(values[i], values[i + 1]) == expected, (hands[i], hands[i + 1])


# ---------------------------------------------------------------------------------------------
# The analyzer's natural and joker split: the lines a hand's natural cards make alone


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=600, deadline=None)
@given(hand=sevens)
def test_natural_lines_match_oracle(mode: str, hand: list[str]) -> None:
    cards = SevenCardHand.parse(hand).indices
    got = frozenset(line.value for line in lines_in(natural_lines(cards, JokerMode(mode))))
    expected = oracle.natural_lines(hand, mode)
    assert got == expected, describe(hand, mode, expected, got)
