"""Pays as the display labels them for a supervisor (controller/web/pays.py)."""

from __future__ import annotations

from typing import Any

from controller.effects import PayoutMade
from controller.web.pays import cards, pay_label


def pay(**fields: Any) -> PayoutMade:
    """A pay as the ledger makes it: a bonus pay of seat 1 at T2 unless told otherwise."""
    made: dict[str, Any] = {
        "payout_id": "T2/shoe-07f6b07f/353/1/bonus",
        "table_id": "T2",
        "round_id": "shoe-07f6b07f-353",
        "seat": 1,
        "spot": "bonus",
        "kind": "win",
        "wager_cents": 500,
        "line": "four-of-a-kind",
        "win_cents": 12_500,
        "returned_cents": 500,
        "from_meter_cents": 0,
        "pool_id": None,
        "capped_cents": 0,
        "envy_from_seat": None,
        "status": "pending",
        "tax_report": False,
        "hand": "Ac Ad Ah As 7c 2d 9s",
    }
    return PayoutMade(**(made | fields))


def test_a_pay_reads_table_seat_wager_and_line_not_its_id() -> None:
    assert pay_label(pay()) == "T2 seat 1 · bonus · Four of a kind"


def test_a_pay_from_the_meter_is_a_jackpot_and_a_fixed_progressive_pay_is_not() -> None:
    jackpot = pay(spot="progressive", kind="progressive", line="five-aces", from_meter_cents=9)
    fixed = pay(spot="progressive", kind="progressive", line="four-of-a-kind")
    assert pay_label(jackpot) == "T2 seat 1 · jackpot · Five aces"
    assert pay_label(fixed) == "T2 seat 1 · progressive · Four of a kind"


def test_an_envy_pay_names_the_seat_it_envies() -> None:
    envy = pay(seat=4, kind="envy", envy_from_seat=6, line="seven-card-straight-flush")
    assert pay_label(envy) == "T2 seat 4 · envy of seat 6 · 7 card straight flush"


def test_a_line_the_rules_do_not_know_is_shown_as_journaled() -> None:
    assert pay_label(pay(line="house-special")) == "T2 seat 1 · bonus · house-special"
    assert pay_label(pay(line=None)) == "T2 seat 1 · bonus"


def test_cards_show_suit_symbols_red_and_black_ten_as_10_and_the_joker() -> None:
    assert cards("Td Jk 2c Ah As") == [
        {"rank": "10", "suit": "♦", "red": True},
        {"rank": "Joker", "suit": "", "red": False},
        {"rank": "2", "suit": "♣", "red": False},
        {"rank": "A", "suit": "♥", "red": True},
        {"rank": "A", "suit": "♠", "red": False},
    ]


def test_a_code_that_is_no_card_is_shown_as_it_is() -> None:
    assert cards("Zz <b>") == [
        {"rank": "Zz", "suit": "", "red": False},
        {"rank": "<b>", "suit": "", "red": False},
    ]
