"""Cards and seven-card hands: the 53-card deck, card codes and hand validation (BRIEF §2)."""

from __future__ import annotations

import pytest

from controller.cards import (
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
)


def test_645a6_deck_has_52_cards_and_one_joker() -> None:
    assert len(DECK) == 53
    assert len({card.code for card in DECK}) == 53
    assert [card for card in DECK if card.is_joker] == [JOKER]
    assert {(card.rank, card.suit) for card in DECK if not card.is_joker} == {
        (rank, suit) for rank in Rank for suit in Suit
    }


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
def test_card_codes_any_case_and_10_for_ten(code: str, rank: Rank, suit: Suit) -> None:
    card = Card.parse(code)
    assert (card.rank, card.suit) == (rank, suit)
    assert card is Card.of(rank, suit)


@pytest.mark.parametrize("code", ["Jk", "jk", "JK"])
def test_joker_code(code: str) -> None:
    card = Card.parse(code)
    assert card is JOKER
    assert card.rank is None
    assert card.suit is None
    assert card.code == "Jk"


@pytest.mark.parametrize("code", ["", "A", "1s", "11h", "Ax", "Jx", "Kk", "Joker", "AsKs"])
def test_bad_card_code_is_named_in_the_error(code: str) -> None:
    with pytest.raises(CardError, match=repr(code)):
        Card.parse(code)


def test_every_card_formats_and_parses_back() -> None:
    assert parse_cards(format_cards(DECK)) == DECK
    assert parse_cards(["As", "Kd"]) == (Card.parse("As"), Card.parse("Kd"))
    assert parse_cards("As,Kd, Qc") == parse_cards("As Kd Qc")


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
        SevenCardHand.parse("As Kd Tc 9h as 3c 2c")


def test_hand_with_two_jokers_is_rejected() -> None:
    with pytest.raises(HandError, match="two jokers"):
        SevenCardHand.parse("As Kd Tc 9h Jk 3c Jk")
