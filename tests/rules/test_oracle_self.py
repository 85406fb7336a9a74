"""Sanity tests of the brute-force oracle itself, on textbook hands, named after the clause.

The oracle (tests/support/rules/oracle.py) is what the rules engine is judged against, so it is
checked here
by hand first: the rankings of 58 Pa. Code § 645a.6 and N.J.A.C. 13:69F-11, the two joker
modes, and the seven-card lines. The last tests check the oracle's two halves against each
other: the best five-card category of a hand must be the highest category among its lines.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.rules import oracle
from support.rules.oracle import FULLY_WILD, LOWEST, SEMI_WILD

# ---------------------------------------------------------------------------------------------
# Helpers


def category(codes: str, mode: str = SEMI_WILD, ace_five: str = oracle.SECOND_HIGHEST) -> str:
    return oracle.five_card_value(codes, mode, ace_five)[0]


def beats(a: str, b: str, mode: str = SEMI_WILD, ace_five: str = oracle.SECOND_HIGHEST) -> bool:
    """Whether hand a ranks strictly above hand b, checked both ways round."""
    return (
        oracle.compare_five(a, b, mode, ace_five) == 1
        and oracle.compare_five(b, a, mode, ace_five) == -1
    )


def ties(a: str, b: str, mode: str = SEMI_WILD, ace_five: str = oracle.SECOND_HIGHEST) -> bool:
    return oracle.compare_five(a, b, mode, ace_five) == 0


def lines(codes: str, mode: str = SEMI_WILD) -> frozenset[str]:
    return oracle.qualifying_lines(codes, mode)


# ---------------------------------------------------------------------------------------------
# § 645a.6(a), N.J.A.C. 13:69F-11(a): card ranks, the low ace, the joker


def test_645a6_a_ace_is_low_only_in_ace_to_five() -> None:
    assert category("As 2d 3h 4c 5s") == "straight"
    assert category("Qs Kd Ah 2c 3s") == "high-card"  # no wrap-around
    assert category("Ks Ad 2h 3c 4s") == "high-card"
    assert beats("As 7d 5h 4c 3s", "Ks Qd Jh 9c 8s")  # otherwise the ace is high


def test_645a6_a_semi_wild_joker_plays_as_ace() -> None:
    assert ties("Kh 9c 7d 4s Jk", "Ah Kc 9d 7s 4h")
    assert category("As Jk 9c 7d 4h") == "pair"
    assert beats("As Jk 9c 7d 4h", "Ks Kd Qc Jd 9h")
    assert category("Ks Kd Qc Qd Jk") == "two-pair"  # aces up? no: kings and queens, ace kicker
    assert ties("Ks Kd Qc Qd Jk", "Ks Kd Qc Qd Ah")


def test_645a6_a_semi_wild_joker_completes_straight_and_flush() -> None:
    assert category("9s Th Jc Qd Jk") == "straight"
    assert ties("9s Th Jc Qd Jk", "Ks Qh Jc Td 9h")  # the joker takes the best place: K
    assert ties("Ts Jh Qc Kd Jk", "As Kh Qc Jd Th")
    assert category("Ks 9s 7s 3s Jk") == "flush"
    assert ties("Ks 9s 7s 3s Jk", "As Ks 9s 7s 3s")  # the ace of spades is missing
    assert ties("As 9s 7s 3s Jk", "As Ks 9s 7s 3s")  # the ace is there: the king is missing
    assert category("Ks Qs Js Ts Jk") == "royal-flush"
    assert category("2s 3s 4s 5s Jk") == "straight-flush"
    # The joker is never a pairing card other than the ace in semi-wild.
    assert category("7s 7d 7h 7c Jk") == "four-of-a-kind"
    assert ties("7s 7d 7h 7c Jk", "7s 7d 7h 7c Ah")
    assert category("Ks Kd Qc 9d Jk") == "pair"


def test_nj_11_c_fully_wild_joker_is_any_card() -> None:
    assert category("7s 7d 7h 7c Jk", FULLY_WILD) == "five-of-a-kind"
    assert category("Ks Kd Qc Qd Jk", FULLY_WILD) == "full-house"
    assert ties("Ks Kd Qc Qd Jk", "Ks Kd Kc Qd Qh", FULLY_WILD)
    assert category("Ks Kd Qc 9d Jk", FULLY_WILD) == "three-of-a-kind"
    assert category("Kh 9c 7d 4s Jk", FULLY_WILD) == "pair"  # pair of kings beats ace high
    assert ties("Kh 9c 7d 4s Jk", "Kh Kc 9d 7s 4h", FULLY_WILD)
    assert ties("Ks 9s 7s 3s Jk", "As Ks 9s 7s 3s", FULLY_WILD)


# ---------------------------------------------------------------------------------------------
# § 645a.6(b), N.J.A.C. 13:69F-11(b): the categories, highest first


def test_645a6_b1_five_aces_outranks_royal_flush() -> None:
    for mode in oracle.MODES:
        assert category("As Ad Ah Ac Jk", mode) == "five-of-a-kind"
        assert beats("As Ad Ah Ac Jk", "As Ks Qs Js Ts", mode)


def test_688a12_fully_wild_five_of_a_kind_ordered_by_rank() -> None:
    assert beats("As Ad Ah Ac Jk", "Ks Kd Kh Kc Jk", FULLY_WILD)
    assert beats("3s 3d 3h 3c Jk", "2s 2d 2h 2c Jk", FULLY_WILD)
    assert beats("2s 2d 2h 2c Jk", "As Ks Qs Js Ts", FULLY_WILD)


def test_645a6_b2_royal_flush_with_joker_equals_natural_royal() -> None:
    assert category("As Ks Qs Js Ts") == "royal-flush"
    assert ties("As Ks Qs Js Ts", "Ah Kh Jk Jh Th")
    assert beats("Ah Kh Jk Jh Th", "As 2s 3s 4s 5s")


def test_645a6_b3_ace_five_is_the_highest_straight_flush() -> None:
    assert category("As 2s 3s 4s 5s") == "straight-flush"
    assert beats("As 2s 3s 4s 5s", "9h Th Jh Qh Kh")
    assert beats("9h Th Jh Qh Kh", "8h 9h Th Jh Qh")
    assert beats("3d 4d 5d 6d 7d", "2c 3c 4c 5c 6c")
    assert beats("2c 3c 4c 5c 6c", "Ah Ad Ac As Kd")  # lowest straight flush beats four aces
    assert ties("As 2s 3s 4s 5s", "Ah 2h 3h 4h 5h")


def test_nj_11_d_ace_five_lowest_option() -> None:
    assert beats("2c 3c 4c 5c 6c", "As 2s 3s 4s 5s", SEMI_WILD, LOWEST)
    assert beats("As 2s 3s 4s 5s", "Ah Ad Ac As Kd", SEMI_WILD, LOWEST)
    assert beats("2c 3d 4c 5c 6c", "As 2d 3s 4s 5s", SEMI_WILD, LOWEST)
    assert beats("As 2d 3s 4s 5s", "Ac Ad Ah 4s 5s", SEMI_WILD, LOWEST)
    # With the wheel lowest, 2-3-4-5 and the joker is a six-high straight, not A-5.
    assert ties("2c 3d 4c 5c Jk", "2c 3d 4c 5c 6h", SEMI_WILD, LOWEST)
    assert ties("2c 3d 4c 5c Jk", "Ac 2d 3c 4c 5h", SEMI_WILD)


def test_645a6_b4_four_of_a_kind_by_rank_then_kicker() -> None:
    assert beats("As Ad Ah Ac 2d", "Ks Kd Kh Kc Qd")
    assert beats("3s 3d 3h 3c 2d", "2s 2d 2h 2c Ad")
    assert beats("9s 9d 9h 9c Kd", "9s 9d 9h 9c Qd")


def test_645a6_b5_full_house_by_the_three_then_the_pair() -> None:
    assert category("As Ad Ah Kc Kd") == "full-house"
    assert beats("3s 3h 3d 2c 2s", "2h 2d 2c As Ah")
    assert beats("Ks Kh Kd 3c 3s", "Ks Kh Kd 2c 2s")
    assert beats("2s 2h 2d 3c 3s", "As Ks Qs Js 9s")


def test_645a6_b6_flushes_compare_card_by_card() -> None:
    assert beats("As Ks 9s 7s 3s", "Ah Kh 9h 7h 2h")
    assert beats("As Qs 4s 3s 2s", "Kh Qh Jh 9h 8h")
    assert ties("As Ks 9s 7s 3s", "Ah Kh 9h 7h 3h")
    assert beats("2s 3s 4s 5s 7s", "As Ks Qd Jc Th")


def test_645a6_b7_straight_order_ace_five_second_highest() -> None:
    assert beats("As Kd Qh Jc Ts", "As 2d 3h 4c 5s")
    assert beats("As 2d 3h 4c 5s", "Ks Qd Jh Tc 9s")
    assert beats("3s 4d 5h 6c 7s", "2s 3d 4h 5c 6s")
    assert beats("2s 3d 4h 5c 6s", "As Ad Ac Kd Qh")


def test_645a6_b8_b9_b10_trips_two_pair_pair() -> None:
    assert beats("3s 3d 3h 2c 4d", "As Ad Kh Kc Qd")
    assert beats("As Ad Kh Kc 2d", "As Ad Qh Qc Kd")
    assert beats("3s 3d 2h 2c 5d", "Ks Kd Qh Jc 9d")
    assert beats("As Ad Kh Kc 3d", "As Ad Kh Kc 2d")
    assert beats("2s 2d 4h 5c 6d", "As Kd Qh Jc 9d")
    assert beats("Ks Kd 4h 3c 2d", "Qs Qd Ah Kc Jd")


def test_645a6_c_highest_unmatched_card_and_copy_hands() -> None:
    assert beats("As Kd 9c 7h 3s", "Ad Ks 9h 7c 2d")
    assert ties("As Kd 9c 7h 3s", "Ad Ks 9h 7c 3d")  # NJ 13:69F-11(e): a copy hand
    assert ties("As Kd Qc Jh Ts", "Ad Ks Qh Jc Td")
    assert beats("Qs Qd 9c 7h 3s", "Qh Qc 9h 6c 5d")


def test_645a6_seven_card_hand_plays_its_best_five() -> None:
    assert oracle.best_five_category("As Ks Qs Js Ts 2d 3c") == "royal-flush"
    assert oracle.best_five_category("As Ad Ah Ac Jk 2d 3c") == "five-of-a-kind"
    assert oracle.best_five_category("7s 7d 7h 7c Jk 2d 3c") == "four-of-a-kind"
    assert oracle.best_five_category("7s 7d 7h 7c Jk 2d 3c", FULLY_WILD) == "five-of-a-kind"
    assert oracle.best_five_category("2s 3d 5h 8c Jk Kd Qc") == "high-card"
    assert oracle.best_five_category("2s 3d 5h 8c Jk Kd Qc", FULLY_WILD) == "pair"
    assert oracle.compare_seven("As Ks Qs Js Ts 2d 3c", "Ah Kh Qh Jh Th 2s 3s") == 0
    assert oracle.compare_seven("Ah 2h 3h 4h 5h 9d 9c", "Kh Qh Jh Th 9h 8d 8c") == 1
    assert (
        oracle.compare_seven("Ah 2h 3h 4h 5h 9d 9c", "Kh Qh Jh Th 9h 8d 8c", ace_five=LOWEST) == -1
    )


def test_645a6_b10_two_card_hands_pair_or_high_cards() -> None:
    assert oracle.compare_two("Jk As", "Kd Kh") == 1  # joker and ace: a pair of aces
    assert oracle.compare_two("Jk 2c", "As 3d") == -1  # joker as ace: A-2 below A-3
    assert oracle.compare_two("Jk 3c", "As 3d") == 0
    assert oracle.compare_two("2c 2d", "As Kd") == 1
    assert oracle.compare_two("Qc Jd", "Qh Td") == 1


# ---------------------------------------------------------------------------------------------
# Seven-card lines


@pytest.mark.parametrize(
    ("hand", "mode", "present", "absent"),
    [
        # § 645a.6(d)(1),(3), (f)(1); NJ (f)1,3: seven-card straight flushes
        (
            "3h 4h 5h 6h 7h 8h 9h",
            SEMI_WILD,
            {oracle.SF7_NATURAL, oracle.SF7},
            {oracle.SF7_WITH_JOKER},
        ),
        ("As 2s 3s 4s 5s 6s 7s", SEMI_WILD, {oracle.SF7_NATURAL, oracle.NATURAL_WHEEL}, set()),
        (
            "8d 9d Td Jd Qd Kd Ad",
            FULLY_WILD,
            {oracle.SF7_NATURAL, oracle.NATURAL_ROYAL_FLUSH},
            set(),
        ),
        ("Qs Ks As 2s 3s 4s 5s", SEMI_WILD, {oracle.NATURAL_WHEEL}, {oracle.SF7}),
        (
            "3h 4h 5h Jk 7h 8h 9h",
            SEMI_WILD,
            {oracle.SF7_WITH_JOKER, oracle.SF7},
            {oracle.SF7_NATURAL},
        ),
        ("Jk 4h 5h 6h 7h 8h 9h", FULLY_WILD, {oracle.SF7_WITH_JOKER}, {oracle.SF7_NATURAL}),
        ("Jk 2h 3h 4h 5h 6h 7h", SEMI_WILD, {oracle.SF7_WITH_JOKER}, {oracle.NATURAL_WHEEL}),
        ("3h 4h 5h Jk 7h 8h Th", SEMI_WILD, {oracle.STRAIGHT_FLUSH_WITH_JOKER}, {oracle.SF7}),
        # § 645a.6(d)(2), (e)(2); NJ (f)2, (i)3: royal flush plus a natural suited match
        (
            "As Ks Qs Js Ts Kh Qh",
            SEMI_WILD,
            {oracle.ROYAL_PLUS_KING_QUEEN},
            {oracle.ROYAL_PLUS_ACE_KING},
        ),
        (
            "As Ks Qs Jk Ts Kh Qh",
            SEMI_WILD,
            {oracle.ROYAL_PLUS_KING_QUEEN},
            {oracle.NATURAL_ROYAL_FLUSH},
        ),
        (
            "As Ks Qs Js Ts Kh Jk",
            FULLY_WILD,
            {oracle.NATURAL_ROYAL_FLUSH},
            {oracle.ROYAL_PLUS_KING_QUEEN},
        ),
        ("As Ks Qs Js Ts Kh Qd", SEMI_WILD, {oracle.ROYAL_FLUSH}, {oracle.ROYAL_PLUS_KING_QUEEN}),
        (
            "As Ks Qs Js Ts Ah Kh",
            SEMI_WILD,
            {oracle.ROYAL_PLUS_ACE_KING, oracle.NATURAL_ROYAL_PLUS_ACE_KING},
            set(),
        ),
        (
            "Jk Ks Qs Js Ts Ah Kh",
            SEMI_WILD,
            {oracle.ROYAL_PLUS_ACE_KING},
            {oracle.NATURAL_ROYAL_PLUS_ACE_KING},
        ),
        # § 645a.6(g)(3) and NJ (i)3: the ace-queen match
        (
            "As Ks Qs Js Ts Ah Qh",
            SEMI_WILD,
            {oracle.ROYAL_PLUS_ACE_QUEEN, oracle.NATURAL_ROYAL_PLUS_ACE_QUEEN},
            set(),
        ),
        (
            "As Ks Jk Js Ts Ah Qh",
            SEMI_WILD,
            {oracle.ROYAL_PLUS_ACE_QUEEN},
            {oracle.NATURAL_ROYAL_PLUS_ACE_QUEEN},
        ),
        # § 645a.6(g)(1),(5); NJ (i)1: natural A-5 straight flush, plus natural suited A-Q
        (
            "As 2s 3s 4s 5s Ah Qh",
            SEMI_WILD,
            {oracle.NATURAL_WHEEL_PLUS_ACE_QUEEN, oracle.NATURAL_WHEEL},
            set(),
        ),
        (
            "Jk 2s 3s 4s 5s Ah Qh",
            SEMI_WILD,
            {oracle.STRAIGHT_FLUSH_WITH_JOKER},
            {oracle.NATURAL_WHEEL},
        ),
        (
            "As 2s 3s 4s 5s Ah Qd",
            SEMI_WILD,
            {oracle.NATURAL_WHEEL},
            {oracle.NATURAL_WHEEL_PLUS_ACE_QUEEN},
        ),
        # § 645a.6(b)(1); 688a.12(d): five aces, five of a kind
        (
            "As Ah Ad Ac Jk 2c 3d",
            SEMI_WILD,
            {oracle.FIVE_ACES, oracle.FIVE_OF_A_KIND, oracle.FOUR_OF_A_KIND},
            set(),
        ),
        ("As Ah Ad Ac Jk 2c 3d", FULLY_WILD, {oracle.FIVE_ACES, oracle.FIVE_OF_A_KIND}, set()),
        ("7s 7h 7d 7c Jk 2c 3d", FULLY_WILD, {oracle.FIVE_OF_A_KIND}, {oracle.FIVE_ACES}),
        (
            "7s 7h 7d 7c Jk 2c 3d",
            SEMI_WILD,
            {oracle.FOUR_OF_A_KIND},
            {oracle.FIVE_OF_A_KIND, oracle.FULL_HOUSE},
        ),
        # NJ (b)2, (g): natural royal; straight flush with and without the joker
        (
            "9h Th Jh Qh Kh Jk 2c",
            SEMI_WILD,
            {
                oracle.STRAIGHT_FLUSH_WITH_JOKER,
                oracle.STRAIGHT_FLUSH_WITHOUT_JOKER,
                oracle.ROYAL_FLUSH,
            },
            {oracle.NATURAL_ROYAL_FLUSH},
        ),
        (
            "9h Th Jh Qh Kh Ah 2c",
            SEMI_WILD,
            {oracle.NATURAL_ROYAL_FLUSH, oracle.STRAIGHT_FLUSH_WITHOUT_JOKER},
            {oracle.STRAIGHT_FLUSH_WITH_JOKER},
        ),
        (
            "9h Th Jh 2h Kh Jk 2c",
            SEMI_WILD,
            {oracle.STRAIGHT_FLUSH_WITH_JOKER, oracle.FLUSH},
            {oracle.STRAIGHT_FLUSH_WITHOUT_JOKER},
        ),
        # pairs, three pair (688a.12(c)), full house
        (
            "2s 2h 5d 5c 9s 9h Kd",
            SEMI_WILD,
            {oracle.THREE_PAIR, oracle.TWO_PAIR, oracle.PAIR},
            {oracle.THREE_OF_A_KIND},
        ),
        ("2s 2h 5d 5c As Jk Kd", SEMI_WILD, {oracle.THREE_PAIR}, {oracle.FULL_HOUSE}),
        (
            "2s 2h 5d 5c 9s Jk Kd",
            SEMI_WILD,
            {oracle.TWO_PAIR},
            {oracle.THREE_PAIR, oracle.THREE_OF_A_KIND},
        ),
        ("2s 2h 5d 5c 9s Jk Kd", FULLY_WILD, {oracle.THREE_PAIR, oracle.FULL_HOUSE}, set()),
        ("Ks Kh 2d 2c As Jk 9d", SEMI_WILD, {oracle.THREE_PAIR}, {oracle.FULL_HOUSE}),
        ("Ks Kh 2d 2c 3s Jk 9d", FULLY_WILD, {oracle.FULL_HOUSE}, {oracle.FOUR_OF_A_KIND}),
        ("Ks Kh Kd 2c 2s 2h 9d", SEMI_WILD, {oracle.FULL_HOUSE}, {oracle.THREE_PAIR}),
        ("Ks Kh Kd Kc 2s 2h 9d", SEMI_WILD, {oracle.FULL_HOUSE, oracle.FOUR_OF_A_KIND}, set()),
        # straights and flushes with the joker's help
        ("Jk Kd 9c 6h 5s 4d 2c", SEMI_WILD, {oracle.STRAIGHT}, {oracle.ACE_HIGH_WITH_JOKER}),
        ("Qs Kd Ah 2c 3s 7d 8h", SEMI_WILD, {oracle.ACE_HIGH_NO_JOKER}, {oracle.STRAIGHT}),
        ("Jk Kd 9d 6d 3d 4c 2s", SEMI_WILD, {oracle.FLUSH}, {oracle.ACE_HIGH_WITH_JOKER}),
        # 688a.12(b) Face Up: ace high
        ("As Kd 9c 7h 5s 3d 2c", SEMI_WILD, {oracle.ACE_HIGH_NO_JOKER}, {oracle.PAIR}),
        ("As Kd 9c 7h 5s 3d 2c", FULLY_WILD, {oracle.ACE_HIGH_NO_JOKER}, set()),
        (
            "Jk Kd 9c 7h 5s 3d 2c",
            SEMI_WILD,
            {oracle.ACE_HIGH_WITH_JOKER},
            {oracle.ACE_HIGH_NO_JOKER},
        ),
        ("Jk Kd 9c 7h 5s 3d 2c", FULLY_WILD, {oracle.PAIR}, {oracle.ACE_HIGH_WITH_JOKER}),
        (
            "Jk Ad 9c 7h 5s 3d Kc",
            SEMI_WILD,
            {oracle.PAIR},
            {oracle.ACE_HIGH_WITH_JOKER, oracle.ACE_HIGH_NO_JOKER},
        ),
        ("Qs Kd Jh 2c 3s 7d 8h", SEMI_WILD, set(), {oracle.ACE_HIGH_NO_JOKER, oracle.PAIR}),
    ],
)
def test_seven_card_lines_of_textbook_hands(
    hand: str, mode: str, present: set[str], absent: set[str]
) -> None:
    got = lines(hand, mode)
    assert present <= got, f"{hand} ({mode}) lacks {present - got}"
    assert not absent & got, f"{hand} ({mode}) has {absent & got}"


def test_688a12_b_ace_high_outcomes() -> None:
    ace_high = "As Kd 9c 7h 5s 3d 2c"
    with_joker = "Jk Kh 9d 7c 5h 3s 2d"
    not_ace_high = "Qs Qd Jh 8c 6s 4h 2h"
    assert oracle.ace_high_outcome(ace_high, with_joker) == oracle.BOTH_ACE_HIGH
    assert oracle.ace_high_outcome(with_joker, ace_high) == oracle.BOTH_ACE_HIGH
    assert oracle.ace_high_outcome(ace_high, not_ace_high) == oracle.DEALER_ONLY_ACE_HIGH_NO_JOKER
    dealer_only_joker = oracle.ace_high_outcome(with_joker, not_ace_high)
    assert dealer_only_joker == oracle.DEALER_ONLY_ACE_HIGH_WITH_JOKER
    assert oracle.ace_high_outcome(not_ace_high, ace_high) is None
    assert oracle.ace_high_outcome(with_joker, not_ace_high, FULLY_WILD) is None
    with pytest.raises(ValueError, match="share a card"):
        oracle.ace_high_outcome(ace_high, "As Qd Jh 8c 6s 4h 2h")


def test_oracle_rejects_malformed_hands() -> None:
    with pytest.raises(ValueError, match="expected 7 cards"):
        oracle.qualifying_lines("As Kd", SEMI_WILD)
    with pytest.raises(ValueError, match="duplicate"):
        oracle.qualifying_lines("As As Kd Qd Jd Td 9d", SEMI_WILD)
    with pytest.raises(ValueError, match="not a card"):
        oracle.five_card_value("As Kd Qd Jd Xx")
    with pytest.raises(ValueError, match="joker mode"):
        oracle.qualifying_lines("As Kd Qd Jd Td 9d 8d", "wild")


# ---------------------------------------------------------------------------------------------
# The oracle's two halves agree with each other

CATEGORY_OF_LINE = {
    oracle.FIVE_OF_A_KIND: "five-of-a-kind",
    oracle.ROYAL_FLUSH: "royal-flush",
    oracle.STRAIGHT_FLUSH: "straight-flush",
    oracle.FOUR_OF_A_KIND: "four-of-a-kind",
    oracle.FULL_HOUSE: "full-house",
    oracle.FLUSH: "flush",
    oracle.STRAIGHT: "straight",
    oracle.THREE_OF_A_KIND: "three-of-a-kind",
    oracle.TWO_PAIR: "two-pair",
    oracle.PAIR: "pair",
}

seven_cards = st.lists(st.sampled_from(oracle.ALL_CODES), min_size=7, max_size=7, unique=True)
joker_hands = st.lists(
    st.sampled_from(oracle.NATURAL_CODES), min_size=6, max_size=6, unique=True
).map(lambda six: [*six, oracle.JOKER])


@settings(max_examples=300, deadline=None)
@given(hand=st.one_of(seven_cards, joker_hands), mode=st.sampled_from(oracle.MODES))
def test_best_five_category_is_the_highest_line(hand: list[str], mode: str) -> None:
    got = oracle.qualifying_lines(hand, mode)
    contained = [
        oracle.CATEGORIES.index(CATEGORY_OF_LINE[line]) for line in got & CATEGORY_OF_LINE.keys()
    ]
    expected = oracle.CATEGORIES[max(contained, default=0)]
    assert oracle.best_five_category(hand, mode) == expected
    assert (oracle.FIVE_ACES in got) == (oracle.best_five_value(hand, mode) == (10, (14,)))


@settings(max_examples=200, deadline=None)
@given(hand=joker_hands)
def test_fully_wild_joker_hand_is_never_ace_high(hand: list[str]) -> None:
    got = oracle.qualifying_lines(hand, FULLY_WILD)
    assert oracle.PAIR in got
    assert not got & {oracle.ACE_HIGH_WITH_JOKER, oracle.ACE_HIGH_NO_JOKER}
    assert oracle.qualifying_lines(hand, SEMI_WILD) - got <= {oracle.ACE_HIGH_WITH_JOKER}


# ---------------------------------------------------------------------------------------------
# Natural lines: what the hand makes without the joker


@pytest.mark.parametrize(
    ("codes", "mode", "natural", "with_joker"),
    [
        # Five aces needs the joker; the four aces are a natural four of a kind.
        ("Ac Ad Ah As Jk 2d 3d", SEMI_WILD, {"four-of-a-kind"}, {"five-aces", "five-of-a-kind"}),
        # Four kings and the joker: semi-wild, the joker is an ace and adds nothing.
        ("Kc Kd Kh Ks Jk 7c 2d", SEMI_WILD, {"four-of-a-kind"}, set()),
        ("Kc Kd Kh Ks Jk 7c 2d", FULLY_WILD, {"four-of-a-kind"}, {"five-of-a-kind", "full-house"}),
        # Six hearts with a gap: a natural flush; the seven-card straight flush needs the joker.
        ("3h 4h 5h 6h Jk 8h 9h", SEMI_WILD, {"flush"}, {"seven-card-straight-flush-with-joker"}),
        # A natural royal flush stays natural beside the joker.
        ("Ts Js Qs Ks As Jk Qh", SEMI_WILD, {"royal-flush", "natural-royal-flush"}, set()),
        # A royal with the joker and a natural K-Q: the royal match needs the joker.
        (
            "As Ks Qs Js Jk Kh Qh",
            SEMI_WILD,
            {"two-pair"},
            {"royal-flush", "royal-flush-plus-natural-suited-king-queen"},
        ),
        # No joker: every line is natural.
        ("3c 4c 5c 6c 7c 8c 9c", SEMI_WILD, {"seven-card-straight-flush-natural"}, set()),
        # Ace high with the joker as the ace is never natural.
        ("Jk Kh Qh 9c 7d 3d 2h", SEMI_WILD, set(), {"ace-high-with-joker"}),
    ],
)
def test_natural_lines_are_those_the_natural_cards_make_alone(
    codes: str, mode: str, natural: set[str], with_joker: set[str]
) -> None:
    made = oracle.natural_lines(codes, mode)
    assert made <= lines(codes, mode)
    assert natural <= made
    assert not with_joker & made
    assert with_joker <= lines(codes, mode)
