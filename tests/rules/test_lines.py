"""Seven-card lines and the line each paytable pays, each test named after the clause it proves.

§ 645a.6(d)-(g) (PA), N.J.A.C. 13:69F-11(f),(g),(i) (NJ) and the Ace High and progressive
paytables of § 688a.12. Where a paytable needs a hand family that no seed paytable uses
(Emperor's Treasure, Dynasty Bonus, NJ pay table "B"), the test writes a small paytable of
that family; the pays in those are placeholders, only the order of lines matters.
"""

from __future__ import annotations

import pytest

from controller.rules.cards import JokerMode, SevenCardHand
from controller.rules.lines import BIT, DEFINITIONS, Line, lines_in
from controller.rules.paytable import DYNASTY_PROFILES, Paytable
from controller.rules.paytable_files import parse_paytable, seed_paytables
from controller.rules.qualify import ace_high_outcomes, qualifier

SEMI = JokerMode.SEMI_WILD
WILD = JokerMode.FULLY_WILD
TABLES = seed_paytables()


def lines(text: str, mode: JokerMode = SEMI) -> frozenset[Line]:
    return lines_in(qualifier(mode)(SevenCardHand.parse(text).indices))


def paid(table: Paytable, text: str) -> Line | None:
    row = table.line_for(qualifier(table.joker)(SevenCardHand.parse(text).indices))
    return None if row is None else row.line


def family_table(wager: str, ordered: tuple[Line, ...]) -> Paytable:
    rows = "\n".join(
        f'[[lines]]\nline = "{line}"\noutcome = "{line}"\npays = "{len(ordered) - i} to 1"\n'
        for i, line in enumerate(ordered)
    )
    text = (
        f'name = "t"\ntitle = "t"\nwager = "{wager}"\nsource = "test"\njoker = "semi-wild"\n{rows}'
    )
    return parse_paytable(text, "test.toml")


def test_every_line_is_defined_with_its_seed_clause() -> None:
    assert set(DEFINITIONS) == set(Line)
    assert all(definition.sources for definition in DEFINITIONS.values())
    assert len(set(BIT.values())) == len(Line)


# § 645a.6(d)(1), (e)(1), (g)(2): the seven-card straight flush without the joker.


def test_645a6_d1_seven_card_straight_flush_natural() -> None:
    found = lines("8h 9h Th Jh Qh Kh Ah")
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL in found
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH in found
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER not in found


def test_645a6_a_seven_card_straight_flush_may_run_ace_low() -> None:
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL in lines("Ad 2d 3d 4d 5d 6d 7d")


def test_645a6_a_no_wrap_around_seven_card_straight_flush() -> None:
    found = lines("Jd Qd Kd Ad 2d 3d 4d")
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH not in found
    assert Line.STRAIGHT_FLUSH not in found  # J-Q-K-A and A-2-3-4 are not five in a row
    assert Line.STRAIGHT not in found
    assert Line.FLUSH in found


def test_seven_suited_cards_with_a_gap_are_not_a_seven_card_straight_flush() -> None:
    found = lines("2c 3c 4c 5c 6c 7c 9c")
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH not in found
    assert Line.STRAIGHT_FLUSH_WITHOUT_JOKER in found


# § 645a.6(d)(3), (e)(3), (g)(4): with the joker.


@pytest.mark.parametrize(
    "text",
    [
        "2s 3s 4s 5s 6s 7s Jk",
        "2s 3s 4s 6s 7s 8s Jk",
        "Jk Ks Qs Js Ts 9s 8s",
        "Jk 2s 3s 4s 5s 6s 7s",
    ],
)
def test_645a6_d3_seven_card_straight_flush_with_joker(text: str) -> None:
    found = lines(text)
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER in found
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH in found
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL not in found


def test_645a6_d3_joker_cannot_fill_two_gaps() -> None:
    assert Line.SEVEN_CARD_STRAIGHT_FLUSH not in lines("2s 3s 5s 6s 8s 9s Jk")


# § 645a.6(d)(2): royal flush plus royal match.


def test_645a6_d2_royal_flush_plus_royal_match() -> None:
    found = lines("As Ks Qs Js Ts Kh Qh")
    assert Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN in found
    assert (
        paid(TABLES["fortune-1"], "As Ks Qs Js Ts Kh Qh") is Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN
    )


def test_645a6_d2_royal_flush_with_joker_plus_royal_match() -> None:
    assert Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN in lines("As Ks Js Ts Jk Kd Qd")


def test_645a6_d2_royal_match_needs_natural_kq() -> None:
    found = lines("As Ks Qs Js Ts Kh Jk")
    assert Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN not in found
    assert paid(TABLES["fortune-1"], "As Ks Qs Js Ts Kh Jk") is Line.ROYAL_FLUSH


def test_645a6_d2_royal_match_must_be_suited() -> None:
    assert Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN not in lines("As Ks Qs Js Ts Kh Qd")


def test_645a6_d2i_emperors_challenge_match_is_a_natural_suited_ace_king() -> None:
    found = lines("Ks Qs Js Ts Jk Ah Kh")
    assert Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING in found
    assert Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN not in found
    assert Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING not in lines("Ks Qs Js Ts As Ah Jk")


# § 645a.6(e): Emperor's Treasure.


def test_645a6_e2_emperors_treasure_pays_royal_plus_natural_ace_king() -> None:
    table = family_table(
        "emperors-treasure",
        (
            Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
            Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
            Line.FIVE_ACES,
            Line.ROYAL_FLUSH,
        ),
    )
    assert paid(table, "Ad Kd Qd Jd Td Ac Kc") is Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING
    assert paid(table, "Ad Kd Qd Jd Td Kc Qc") is Line.ROYAL_FLUSH
    assert paid(table, "9d Kd Qd Jd Td 8d Jk") is Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER


# § 645a.6(f) and § 688a.12(d): progressive hands.


def test_645a6_f1_progressive_seven_card_straight_flush_with_or_without_joker() -> None:
    table = TABLES["progressive-1"]
    assert paid(table, "3c 4c 5c 6c 7c 8c 9c") is Line.SEVEN_CARD_STRAIGHT_FLUSH
    assert paid(table, "3c 4c 5c 6c Jk 8c 9c") is Line.SEVEN_CARD_STRAIGHT_FLUSH


def test_645a6_f2_five_aces_pays_ten_percent_on_progressive_1() -> None:
    assert paid(TABLES["progressive-1"], "Ac Ad Ah As Jk 2c 3d") is Line.FIVE_ACES


def test_645a6_f3_royal_flush_with_joker_pays_as_royal() -> None:
    assert paid(TABLES["progressive-1"], "Ac Kc Qc Jk Tc 2d 3d") is Line.ROYAL_FLUSH


def test_688a12_d_paytable_4_natural_seven_card_straight_flush_is_above_the_joker_one() -> None:
    table = TABLES["progressive-4"]
    assert paid(table, "3c 4c 5c 6c 7c 8c 9c") is Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL
    assert paid(table, "3c 4c 5c 6c Jk 8c 9c") is Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER
    assert paid(table, "As Ks Qs Js Ts Kh Qh") is Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN


def test_688a12_d_full_house_is_the_lowest_progressive_1_line() -> None:
    table = TABLES["progressive-1"]
    assert paid(table, "Kc Kd Kh 2s 2d 7c 9h") is Line.FULL_HOUSE
    assert paid(table, "Kc Kd Kh 2s 5d 7c 9h") is None
    assert paid(table, "Kc Qc 9c 7c 2c 3d 4h") is None  # a flush pays nothing here


def test_688a12_d_fully_wild_natural_and_wild_seven_card_straight_flush() -> None:
    table = TABLES["progressive-2"]
    assert paid(table, "3c 4c 5c 6c 7c 8c 9c") is Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL
    assert paid(table, "3c 4c 5c 6c Jk 8c 9c") is Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER


def test_688a12_d_fully_wild_joker_makes_five_of_a_kind() -> None:
    assert Line.FIVE_OF_A_KIND in lines("9c 9d 9h 9s Jk 2c 3d", WILD)
    assert Line.FIVE_OF_A_KIND not in lines("9c 9d 9h 9s Jk 2c 3d", SEMI)
    assert paid(TABLES["progressive-2"], "9c 9d 9h 9s Jk 2c 3d") is Line.FIVE_OF_A_KIND
    assert paid(TABLES["progressive-2"], "Ac Ad Ah As Jk 2c 3d") is Line.FIVE_OF_A_KIND


def test_rules_4_2_five_aces_is_paid_on_whichever_line_pays_more_at_the_meter() -> None:
    table = TABLES["progressive-5"]  # Five aces 10 % of meter, Five-of-a-kind $1,000
    mask = qualifier(table.joker)(SevenCardHand.parse("Ac Ad Ah As Jk 2c 3d").indices)

    def line_at(meter_cents: int) -> Line | None:
        row = table.line_for(mask, meter_cents)
        return None if row is None else row.line

    assert line_at(500_000) is Line.FIVE_OF_A_KIND  # at the $5,000 seed: $500 < $1,000
    assert line_at(999_999) is Line.FIVE_OF_A_KIND
    assert line_at(1_000_000) is Line.FIVE_ACES  # equal pays: the line listed first
    assert line_at(1_000_001) is Line.FIVE_ACES
    assert paid(table, "Ac Ad Ah As Jk 2c 3d") is Line.FIVE_OF_A_KIND  # no meter: the seed
    assert paid(table, "Kc Kd Kh Ks Jk 2c 3d") is Line.FIVE_OF_A_KIND


def test_rules_4_2_highest_paying_line_never_depends_on_the_meter_when_one_dominates() -> None:
    table = TABLES["progressive-1"]  # Five aces 10 % of meter, Four-of-a-kind $75
    mask = qualifier(table.joker)(SevenCardHand.parse("Ac Ad Ah As Jk 2c 3d").indices)
    assert table.line_for(mask, 1_000_000) is table.line_for(mask, 10**9)
    row = table.line_for(mask)
    assert row is not None
    assert row.line is Line.FIVE_ACES


def test_688a12_d_fully_wild_joker_pairs_any_rank() -> None:
    assert Line.FULL_HOUSE in lines("Kc Kd Qh Qs Jk 2c 5d", WILD)
    assert Line.FULL_HOUSE not in lines("Kc Kd Qh Qs Jk 2c 5d", SEMI)
    assert paid(TABLES["progressive-7"], "Kc Kd Kh 2s Jk 5c 9d") is Line.FOUR_OF_A_KIND


# Fortune Bonus lines and "highest-paying line" (docs/rules.md § 4.2).


def test_rules_4_2_trips_and_straight_is_paid_as_trips_where_trips_pay_more() -> None:
    text = "5c 6d 7h 8s 9c 9d 9h"
    assert {Line.THREE_OF_A_KIND, Line.STRAIGHT} <= lines(text)
    assert paid(TABLES["fortune-1"], text) is Line.THREE_OF_A_KIND


def test_645a6_b1_five_aces_on_fortune() -> None:
    assert paid(TABLES["fortune-1"], "Ac Ad Ah As Jk 2c 3d") is Line.FIVE_ACES
    assert paid(TABLES["fortune-1"], "Ac Ad Ah Ks Jk 2c 3d") is Line.FOUR_OF_A_KIND


def test_688a12_c_three_pair_pushes_on_paytable_1_only() -> None:
    text = "Kc Kd 7h 7s 3c 3d 9h"
    assert paid(TABLES["fortune-1"], text) is Line.THREE_PAIR
    assert paid(TABLES["fortune-2"], text) is None


def test_rules_5_6_joker_and_ace_count_as_a_pair_of_aces_in_three_pair() -> None:
    assert Line.THREE_PAIR in lines("Ac Jk Kd Kh 7s 7c 2d")
    assert Line.THREE_PAIR not in lines("Qc Jk Kd Kh 7s 7c 2d")


def test_688a12_c_joker_completes_straight_and_flush() -> None:
    assert paid(TABLES["fortune-1"], "5c 6d 7h Jk 9s Kc 2d") is Line.STRAIGHT
    assert paid(TABLES["fortune-1"], "2h 6h 9h Jh Jk Kc 3d") is Line.FLUSH


def test_645a6_a_straight_does_not_wrap_around() -> None:
    assert Line.STRAIGHT not in lines("Qc Kd Ah 2s 3c 8d 9h")
    assert Line.STRAIGHT in lines("Ac 2d 3h 4s 5c 8d 9h")


# N.J.A.C. 13:69F-11(g): pay table "B".


def test_13_69f_11_g_straight_flush_with_and_without_joker() -> None:
    assert Line.STRAIGHT_FLUSH_WITH_JOKER in lines("5h 6h 7h Jk 9h Kc 2d")
    assert Line.STRAIGHT_FLUSH_WITHOUT_JOKER not in lines("5h 6h 7h Jk 9h Kc 2d")
    natural = lines("5h 6h 7h 8h 9h Kc 2d")
    assert Line.STRAIGHT_FLUSH_WITHOUT_JOKER in natural
    assert Line.STRAIGHT_FLUSH_WITH_JOKER not in natural
    table = family_table(
        "fortune-bonus",
        (Line.STRAIGHT_FLUSH_WITHOUT_JOKER, Line.STRAIGHT_FLUSH_WITH_JOKER, Line.FLUSH),
    )
    assert paid(table, "5h 6h 7h 8h 9h Jk 2d") is Line.STRAIGHT_FLUSH_WITHOUT_JOKER
    assert paid(table, "5h 6h 7h Jk 9h Kc 2d") is Line.STRAIGHT_FLUSH_WITH_JOKER


def test_13_69f_11_b2_natural_royal_flush() -> None:
    assert Line.NATURAL_ROYAL_FLUSH in lines("Ah Kh Qh Jh Th 2c 3d")
    assert Line.NATURAL_ROYAL_FLUSH not in lines("Ah Kh Qh Jh Jk 2c 3d")
    assert Line.ROYAL_FLUSH in lines("Ah Kh Qh Jh Jk 2c 3d")


# § 645a.6(g) and 13:69F-11(i): the Dynasty Bonus profiles.


def dynasty(profile: str) -> Paytable:
    return family_table(
        "dynasty-bonus", (*DYNASTY_PROFILES[profile], Line.FIVE_ACES, Line.ROYAL_FLUSH)
    )


def test_645a6_g1_ace_five_natural_straight_flush_plus_suited_ace_queen() -> None:
    text = "Ah 2h 3h 4h 5h As Qs"
    for profile in DYNASTY_PROFILES:
        assert (
            paid(dynasty(profile), text)
            is Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN
        )


def test_645a6_g5_ace_five_natural_straight_flush_is_pa_only() -> None:
    text = "Ah 2h 3h 4h 5h Ks Qs"
    assert paid(dynasty("pa"), text) is Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH
    assert paid(dynasty("nj"), text) is None
    assert Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH not in lines("Ah 2h 3h Jk 5h Ks Qs")


def test_645a6_g3_pa_text_reads_natural_royal_plus_ace_queen() -> None:
    table = dynasty("pa")
    assert paid(table, "Ah Kh Qh Jh Th Ac Qc") is Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN
    assert paid(table, "Ah Kh Qh Jh Jk Ac Qc") is Line.ROYAL_FLUSH  # PA needs a natural royal
    assert paid(table, "Ah Kh Qh Jh Th Ac Kc") is Line.ROYAL_FLUSH


def test_645a6_g3_pa_caption_reads_natural_royal_plus_ace_king() -> None:
    table = dynasty("pa-caption")
    assert paid(table, "Ah Kh Qh Jh Th Ac Kc") is Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING
    assert paid(table, "Ah Kh Qh Jh Th Ac Qc") is Line.ROYAL_FLUSH


def test_13_69f_11_i3_nj_royal_with_or_without_joker_plus_natural_ace_queen() -> None:
    table = dynasty("nj")
    assert paid(table, "Ah Kh Qh Jh Th Ac Qc") is Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN
    assert paid(table, "Ah Kh Qh Jh Jk Ac Qc") is Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN
    assert paid(table, "Ah Kh Qh Jh Th Ac Jk") is Line.ROYAL_FLUSH


# § 688a.12(b): Ace High.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As Kd Qc 9s 7h 3c 2d", Line.ACE_HIGH_NO_JOKER),
        ("Jk Kd Qc 9s 7h 3c 2d", Line.ACE_HIGH_WITH_JOKER),
        ("Ks Qd Jc 9s 7h 3c 2d", None),  # king high
        ("As Ad Qc 9s 7h 3c 2d", None),  # a pair
        ("As Jk Qc 9s 7h 3c 2d", None),  # joker + ace is a pair of aces
        ("Jk Kd Qc Js 9h 3c 2d", None),  # the joker would complete K-Q-J-T-9
        ("Jk Ks Qs 9s 7s 3c 2d", None),  # the joker would complete a flush
        ("As Ks Qs 9s 7s 3c 2d", None),  # a flush
        ("As 2d 3c 4s 5h 9c Jd", None),  # a wheel straight
    ],
)
def test_688a12_b_ace_high_is_a_pai_gow_hand_topped_by_an_ace(
    text: str, expected: Line | None
) -> None:
    found = lines(text) & {Line.ACE_HIGH_NO_JOKER, Line.ACE_HIGH_WITH_JOKER}
    assert found == ({expected} if expected else set())


@pytest.mark.parametrize(
    ("dealer", "player", "expected"),
    [
        ("As Kd Qc 9s 7h 3c 2d", "Ah Kc Qd 9h 7s 3d 2c", Line.BOTH_ACE_HIGH),
        ("Jk Kd Qc 9s 7h 3c 2d", "Ah Kc Qd 9h 7s 3d 2c", Line.BOTH_ACE_HIGH),
        ("Jk Kd Qc 9s 7h 3c 2d", "Kh Kc Qd 9h 7s 3d 2c", Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER),
        ("As Kd Qc 9s 7h 3c 2d", "Kh Kc Qd 9h 7s 3d 2c", Line.DEALER_ONLY_ACE_HIGH_NO_JOKER),
        ("Ks Kd Qc 9s 7h 3c 2d", "Ah Kc Qd 9h 7s 3d 2c", None),
    ],
)
def test_688a12_b_ace_high_outcomes(dealer: str, player: str, expected: Line | None) -> None:
    semi = qualifier(SEMI)
    mask = ace_high_outcomes(
        semi(SevenCardHand.parse(dealer).indices), semi(SevenCardHand.parse(player).indices)
    )
    row = TABLES["ace-high-1"].line_for(mask)
    assert (row.line if row else None) is expected
