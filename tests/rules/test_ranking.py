"""Five-card and two-card ranking, each test named after the clause it proves.

58 Pa. Code § 645a.6(a)-(c) and N.J.A.C. 13:69F-11(a)-(e). The oracle comparison in
test_oracle_rankings.py covers random hands; these pin the textbook cases.
"""

from __future__ import annotations

import pytest

from controller.rules.cards import JokerMode, SevenCardHand, parse_cards
from controller.rules.ranking import (
    AceFive,
    Category,
    HandValue,
    best_five,
    compare,
    evaluate_five,
    evaluate_two,
)

WILD = JokerMode.FULLY_WILD
LOWEST = AceFive.LOWEST


def value(
    text: str, mode: JokerMode = JokerMode.SEMI_WILD, ace_five: AceFive = AceFive.SECOND_HIGHEST
) -> HandValue:
    return evaluate_five(parse_cards(text), mode, ace_five).value


def category(text: str, mode: JokerMode = JokerMode.SEMI_WILD) -> Category:
    return value(text, mode).category


def test_645a6_a_ace_is_the_highest_card() -> None:
    assert value("As Kd 9c 7h 3s") > value("Ks Qd Jc 9h 7s")


def test_645a6_a_ace_plays_low_only_in_a_2_3_4_5() -> None:
    assert category("As 2d 3c 4h 5s") is Category.STRAIGHT
    assert category("Qs Kd Ac 2h 3s") is Category.HIGH_CARD  # no wrap-around
    assert category("Ks Ad 2c 3h 4s") is Category.HIGH_CARD


def test_645a6_a_joker_ranks_as_an_ace() -> None:
    assert category("Jk As 9c 7h 3s") is Category.PAIR
    assert value("Jk Kd Kc Qh Qs") == value(
        "Ac Kd Kc Qh Qs"
    )  # two pair with an ace, not a full house
    assert value("Jk 9d 7c 4h 3s") == value("Ah 9d 7c 4h 3s")


def test_645a6_a_joker_never_pairs_a_rank_other_than_ace() -> None:
    assert category("Jk Kd 9c 7h 3s") is Category.HIGH_CARD
    assert category("Jk Kd Kc 7h 3s") is Category.PAIR


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jk 9d Tc Jh Qs", Category.STRAIGHT),
        ("Jk 2d 3c 5h 6s", Category.STRAIGHT),
        ("Jk 2s 7s 9s Ks", Category.FLUSH),
        ("Jk 5s 6s 8s 9s", Category.STRAIGHT_FLUSH),
        ("Jk Ks Qs Js Ts", Category.ROYAL_FLUSH),
        ("Jk As Ks Qs Ts", Category.ROYAL_FLUSH),
    ],
)
def test_645a6_a_joker_completes_a_straight_flush_or_royal(text: str, expected: Category) -> None:
    assert category(text) is expected


def test_645a6_a_joker_in_a_flush_is_the_highest_missing_card() -> None:
    assert value("Jk As Ks 8s 4s") == value("As Ks Qs 8s 4s")
    hand = evaluate_five(parse_cards("Jk 2s 7s 9s Ks"))
    assert hand.joker_as is not None
    assert hand.joker_as.code == "As"


@pytest.mark.parametrize(
    "hands",
    [
        (
            "Ac Ad Ah As Jk",
            "As Ks Qs Js Ts",
            "Kh Qh Jh Th 9h",
            "2c 2d 2h 2s 3c",
            "Ac Ad Ah Ks Kd",
            "As Js 9s 7s 5s",
            "Ts Jd Qc Kh As",
            "Ac Ad Ah Ks Qd",
            "Ac Ad Kh Ks Qd",
            "Ac Ad Kh Qs Jd",
            "Ac Kd Qh Js 9d",
        )
    ],
)
def test_645a6_b_ten_hands_in_order_from_five_aces_down(hands: tuple[str, ...]) -> None:
    values = [value(hand) for hand in hands]
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == len(values)
    assert [v.category for v in values] == sorted(Category, reverse=True)


def test_645a6_b1_five_aces_outranks_a_royal_flush() -> None:
    assert category("Ac Ad Ah As Jk") is Category.FIVE_OF_A_KIND
    assert value("Ac Ad Ah As Jk").describe() == "five aces"
    assert value("Ac Ad Ah As Jk") > value("As Ks Qs Js Ts")


def test_645a6_b2_royal_flush_with_a_joker_equals_a_natural_one() -> None:
    assert compare(value("Ks Qs Js Ts Jk"), value("Ah Kh Qh Jh Th")) == 0


def test_645a6_b3_a_2_3_4_5_is_the_highest_straight_flush() -> None:
    wheel = value("As 2s 3s 4s 5s")
    assert wheel > value("Ks Qs Js Ts 9s")
    assert wheel < value("As Ks Qs Js Ts")
    assert value("6s 2s 3s 4s 5s") < value("7h 3h 4h 5h 6h")


def test_645a6_b7_a_2_3_4_5_is_the_second_highest_straight() -> None:
    wheel = value("As 2d 3c 4h 5s")
    assert value("Ts Jd Qc Kh As") > wheel > value("9s Td Jc Qh Ks")
    assert value("2s 3d 4c 5h 6s") < value("3s 4d 5c 6h 7s")


def test_13_69f_11_d_option_makes_a_2_3_4_5_the_lowest_straight_and_straight_flush() -> None:
    assert value("As 2d 3c 4h 5s", ace_five=LOWEST) < value("2s 3d 4c 5h 6s", ace_five=LOWEST)
    assert value("As 2s 3s 4s 5s", ace_five=LOWEST) < value("2h 3h 4h 5h 6h", ace_five=LOWEST)
    assert value("As 2s 3s 4s 5s", ace_five=LOWEST).category is Category.STRAIGHT_FLUSH


def test_645a6_b4_four_aces_highest_four_twos_lowest() -> None:
    assert value("Ac Ad Ah As 2c") > value("Kc Kd Kh Ks Ac") > value("2c 2d 2h 2s Ac")


def test_645a6_b5_full_house_ranks_by_its_three() -> None:
    assert value("Ac Ad Ah Ks Kd") > value("Kc Kd Kh As Ad")
    assert value("2c 2d 2h 3s 3d") == min(value("2c 2d 2h 3s 3d"), value("3c 3d 3h 2s 2d"))


def test_645a6_b6_flushes_compare_by_the_highest_card_not_in_the_other_hand() -> None:
    assert value("As Js 9s 7s 5s") > value("Ah Jh 9h 7h 4h")
    assert value("Ks Qs 9s 7s 5s") < value("Ah 3h 4h 6h 7h")
    assert compare(value("As Js 9s 7s 5s"), value("Ah Jh 9h 7h 5h")) == 0


def test_645a6_b9_two_pair_aces_and_kings_highest() -> None:
    assert value("Ac Ad Kh Ks 2d") > value("Ac Ad Qh Qs Kd")
    assert value("3c 3d 2h 2s 4d") < value("4c 4d 2h 2s 3d")


def test_645a6_c_highest_unmatched_card_breaks_ties() -> None:
    assert value("Ac Ad Kh 7s 2d") > value("Ah As Qh Js Td")
    assert value("Kc Qd 9h 7s 3d") > value("Kh Qs 9c 7d 2c")


def test_645a6_c_identical_hands_tie_13_69f_11_e_copy_hand() -> None:
    assert compare(value("Ac Kd 9h 7s 3d"), value("Ah Ks 9c 7d 3c")) == 0
    assert compare(value("As 2d 3c 4h 5s"), value("Ah 2c 3d 4s 5h")) == 0


def test_645a6_b10_two_card_low_hand_pair_beats_high_cards() -> None:
    assert evaluate_two(parse_cards("2c 2d")) > evaluate_two(parse_cards("Ac Kd"))
    assert evaluate_two(parse_cards("Ac Kd")).category is Category.HIGH_CARD
    assert evaluate_two(parse_cards("Ac Kd")) > evaluate_two(parse_cards("Ac Qd"))
    assert compare(evaluate_two(parse_cards("Ac Kd")), evaluate_two(parse_cards("Ah Ks"))) == 0


def test_645a6_a_joker_in_a_two_card_hand_is_an_ace() -> None:
    assert evaluate_two(parse_cards("Jk Ad")) == HandValue(Category.PAIR, (14,))
    assert compare(evaluate_two(parse_cards("Jk 5d")), evaluate_two(parse_cards("Ac 5h"))) == 0


def test_688a12_d_fully_wild_joker_makes_five_of_a_kind_and_pairs_anything() -> None:
    assert value("Kc Kd Kh Ks Jk", WILD) == HandValue(Category.FIVE_OF_A_KIND, (13,))
    assert value("Ac Ad Ah As Jk", WILD) > value("Kc Kd Kh Ks Jk", WILD)
    assert value("Kc Kd Kh Ks Jk", WILD) > value("As Ks Qs Js Ts", WILD)
    assert category("Jk Kd Kc Qh Qs", WILD) is Category.FULL_HOUSE
    assert category("Jk Kd 9c 7h 3s", WILD) is Category.PAIR


def test_best_five_of_seven_reports_the_joker() -> None:
    best = best_five(SevenCardHand.parse("As Ks Qs Js Jk Kh Qh"))
    assert best.value.category is Category.ROYAL_FLUSH
    assert best.joker_as is not None
    assert best.joker_as.code == "Ts"
    assert set(best.cards) == set(parse_cards("As Ks Qs Js Jk"))


def test_best_five_orders_groups_first() -> None:
    best = best_five(SevenCardHand.parse("2c 9d Kh 9s Kd 4c 9h"))
    assert best.value.category is Category.FULL_HOUSE
    assert [card.code[0] for card in best.cards] == ["9", "9", "9", "K", "K"]


def test_evaluate_five_rejects_wrong_cards() -> None:
    with pytest.raises(ValueError, match="five distinct"):
        evaluate_five(parse_cards("As Ks Qs Js"))
    with pytest.raises(ValueError, match="two distinct"):
        evaluate_two(parse_cards("As As"))
