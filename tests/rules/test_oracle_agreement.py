"""The rules engine agrees with the independent brute-force oracle of tests/support/rules/oracle.py.

Compared here: the seven-card lines of :func:`controller.rules.qualify.qualifier`, the Face Up
ace-high outcomes, and the analyzer's natural lines (the five-, seven- and two-card rankings of
:mod:`controller.rules.ranking` are tests/rules/test_oracle_rankings.py).
Each is checked on random hands (hypothesis), on hands biased toward the rare lines (seven-card
straight flushes, royal matches, five aces, ace high with the joker ...), on every hand of a few
reduced decks, and on hand-written spot checks. Tests are named after the clause they prove.
"""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.rules import oracle
from support.rules.hands import ALL_CODES, JOKER, SUITS, any_seven, code, rich_hands
from support.rules.oracle_engine import (
    MODES,
    assert_lines_agree,
    deck,
    describe,
    engine_lines,
    engine_outcomes,
    sevens,
)

from controller.analyzer.census import natural_lines
from controller.rules.cards import JokerMode, SevenCardHand
from controller.rules.lines import lines_in

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
# The analyzer's natural and joker split: the lines a hand's natural cards make alone


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=600, deadline=None)
@given(hand=sevens)
def test_natural_lines_match_oracle(mode: str, hand: list[str]) -> None:
    cards = SevenCardHand.parse(hand).indices
    got = frozenset(line.value for line in lines_in(natural_lines(cards, JokerMode(mode))))
    expected = oracle.natural_lines(hand, mode)
    assert got == expected, describe(hand, mode, expected, got)
