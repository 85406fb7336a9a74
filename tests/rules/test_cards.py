"""Cards and seven-card hands: the 53-card deck, card codes and hand validation.

docs/rules.md § 1, "The deck and card codes".
"""

from __future__ import annotations

import pytest

from controller.rules.cards import (
    DECK,
    JOKER,
    Card,
    CardError,
    HandError,
    Rank,
    SevenCardHand,
    Suit,
    format_cards,
    parse_cards,
    parse_cards_lenient,
)


def test_645a6_deck_has_52_cards_and_one_joker() -> None:
    assert len(DECK) == 53
    assert len({card.code for card in DECK}) == 53
    assert [card for card in DECK if card.is_joker] == [JOKER]
    assert {(card.rank, card.suit) for card in DECK if not card.is_joker} == {
        (rank, suit) for rank in Rank for suit in Suit
    }


@pytest.mark.parametrize("card", DECK, ids=[card.code for card in DECK])
def test_every_canonical_code_parses_to_its_card_and_back(card: Card) -> None:
    assert Card.parse(card.code) is card
    assert Card.parse_lenient(card.code) is card
    assert Card.parse(card.code).code == card.code


def test_the_canonical_codes_are_upper_case_rank_then_lower_case_suit_and_jk() -> None:
    codes = {card.code for card in DECK}
    assert len(codes) == 53
    naturals = {rank + suit for rank in "AKQJT98765432" for suit in "shdc"}
    assert codes == naturals | {"Jk"}


@pytest.mark.parametrize(
    "code",
    [
        "as",  # the suit is lower case, the rank upper case: no other letter case
        "AS",
        "aS",
        "tc",
        "kd",
        "JK",
        "jk",
        "jK",
        "10c",  # the journal writes T; only a person typing may say 10
        "10H",
        " As",  # no surrounding space, of any kind
        "As ",
        " 9s ",
        "As\n",
        "\tAs",
        "As\x00",
        "\u00a0As",
        "A\u017f",  # the long s upper-cases to S: Unicode case folding makes no card
        "\u0130s",  # dotted capital I, whose lower case is i + a combining dot
        "\uff21s",  # fullwidth A
        "\u212ad",  # the Kelvin sign K, whose lower case is k
        "J\u212a",
        "\u2168s",  # Roman numeral nine
        "\u0669s",  # Arabic-Indic digit nine: int() would read 9
    ],
)
def test_only_the_canonical_code_is_a_card(code: str) -> None:
    with pytest.raises(CardError, match="is not a card code"):
        Card.parse(code)


@pytest.mark.parametrize("codes", [["As", "as"], ["As", "AS"], ["Td", "10d"], ["Jk", "JK"]])
def test_a_hand_from_a_device_with_a_non_canonical_code_is_refused(codes: list[str]) -> None:
    hand = ["Kd", "Qc", "9h", "5s", "3c", *codes]
    with pytest.raises(CardError, match=repr(codes[1])):
        SevenCardHand.parse(hand)


@pytest.mark.parametrize(
    ("code", "rank", "suit"),
    [
        ("As", Rank.ACE, Suit.SPADES),
        ("as", Rank.ACE, Suit.SPADES),
        ("KD", Rank.KING, Suit.DIAMONDS),
        ("Tc", Rank.TEN, Suit.CLUBS),
        ("10c", Rank.TEN, Suit.CLUBS),
        ("10H", Rank.TEN, Suit.HEARTS),
        ("2h", Rank.TWO, Suit.HEARTS),
        (" 9s ", Rank.NINE, Suit.SPADES),
    ],
)
def test_typed_codes_take_any_ascii_case_and_10_for_ten(code: str, rank: Rank, suit: Suit) -> None:
    card = Card.parse_lenient(code)
    assert (card.rank, card.suit) == (rank, suit)
    assert card is Card.of(rank, suit)


@pytest.mark.parametrize("code", ["Jk", "jk", "JK"])
def test_typed_joker_code(code: str) -> None:
    card = Card.parse_lenient(code)
    assert card is JOKER
    assert card.rank is None
    assert card.suit is None
    assert card.code == "Jk"


@pytest.mark.parametrize("code", ["A\u017f", "\uff21s", "\u212ad", "\u00a0As", "\u0669s"])
def test_typed_codes_are_ascii_too_so_case_folding_makes_no_card(code: str) -> None:
    with pytest.raises(CardError, match="is not a card"):
        Card.parse_lenient(code)


@pytest.mark.parametrize("code", ["", "A", "1s", "11h", "Ax", "Jx", "Kk", "Joker", "AsKs"])
def test_bad_card_code_is_named_in_the_error(code: str) -> None:
    with pytest.raises(CardError, match=repr(code)):
        Card.parse(code)
    if (
        code != "Joker"
    ):  # typed, the joker as the display draws it (tests/cli/test_cli_hand_symbols.py)
        with pytest.raises(CardError, match=repr(code)):
            Card.parse_lenient(code)


def test_a_long_refused_code_is_quoted_only_in_part() -> None:
    with pytest.raises(CardError) as refused:
        Card.parse("A" * 4000)
    assert len(str(refused.value)) < 200
    assert "'AAAAAAAAAAAAAAAA'..." in str(refused.value)


def test_every_card_formats_and_parses_back() -> None:
    assert parse_cards(format_cards(DECK)) == DECK
    assert parse_cards(["As", "Kd"]) == (Card.parse("As"), Card.parse("Kd"))
    assert parse_cards("As,Kd, Qc") == parse_cards("As Kd Qc")
    assert parse_cards_lenient("as 10d, JK") == parse_cards("As Td Jk")


def test_seven_card_hand_parses_and_keeps_order() -> None:
    hand = SevenCardHand.parse("As Kd Tc 9h 5s 3c Jk")
    assert str(hand) == "As Kd Tc 9h 5s 3c Jk"
    assert hand.has_joker
    assert hand.indices == tuple(card.index for card in hand)


@pytest.mark.parametrize("text", ["As Kd Tc 9h 5s 3c", "As Kd Tc 9h 5s 3c 2c 4d", ""])
def test_hand_with_wrong_count_is_rejected(text: str) -> None:
    with pytest.raises(HandError, match="7 cards"):
        SevenCardHand.parse(text)


def test_hand_with_duplicate_card_is_rejected() -> None:
    with pytest.raises(HandError, match="duplicate card As"):
        SevenCardHand.parse("As Kd Tc 9h As 3c 2c")
    with pytest.raises(HandError, match="duplicate card As"):
        SevenCardHand.parse_lenient("As Kd Tc 9h as 3c 2c")


def test_hand_with_two_jokers_is_rejected() -> None:
    with pytest.raises(HandError, match="two jokers"):
        SevenCardHand.parse("As Kd Tc 9h Jk 3c Jk")
