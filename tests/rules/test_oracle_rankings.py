"""The rankings agree with the independent brute-force oracle of tests/support/rules/oracle.py.

The five-card values and comparisons, the best five of seven and the two-card hands of
:mod:`controller.rules.ranking` (58 Pa. Code § 645a.6(b), (c)): on random hands (hypothesis),
on hands shaped toward straights, flushes and the joker, and on every hand of a few reduced
decks. The seven-card lines are tests/rules/test_oracle_agreement.py.
"""

from __future__ import annotations

from itertools import combinations, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.rules import oracle
from support.rules.hands import ALL_CODES, JOKER, SUITS, code, rich_hands
from support.rules.oracle_engine import (
    MODES,
    ace_fives,
    deck,
    engine_five,
    modes,
    sevens,
    sign,
    slug,
)

from controller.rules.cards import Card, JokerMode, SevenCardHand
from controller.rules.ranking import AceFive, best_five, evaluate_two

# ---------------------------------------------------------------------------------------------
# Strategies


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
