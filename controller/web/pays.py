"""Pays as a floor supervisor reads them: who won, on which wager, with which hand.

A payout id (``T2/shoe-07f6b07f/353/1/bonus``) is the journal's key, made to be unique, not
read: the display says ``T2 seat 1 · bonus · Four of a kind`` and keeps the id beside it for
``jackpotd verify-hit``. Words as docs/operations.md defines them: a **pay** is any amount won
on a wager; a **jackpot** is a pay from a pool's meter; a pay awaiting a supervisor's
verification is **pending**.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.rules.cards import Card, CardError, Suit
from controller.rules.lines import Line

if TYPE_CHECKING:
    from controller.effects import PayoutMade

SUITS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
RED = frozenset({Suit.HEARTS, Suit.DIAMONDS})


def line_label(slug: str | None) -> str:
    """A line's name for people (``Five aces``), from its slug; an unknown slug as it is."""
    try:
        return Line(slug).definition.label if slug else ""
    except ValueError:
        return slug or ""


def wager_label(payout: PayoutMade) -> str:
    """What the pay was won on: ``jackpot``, ``bonus``, ``envy of seat 3``..."""
    if payout.kind == "envy":
        return f"envy of seat {payout.envy_from_seat}"
    if payout.from_meter_cents > 0:
        return "jackpot"
    return payout.spot


def pay_label(payout: PayoutMade) -> str:
    """``T2 seat 1 · bonus · Four of a kind``: the table, the seat, the wager, the line."""
    parts = [f"{payout.table_id} seat {payout.seat}", wager_label(payout)]
    line = line_label(payout.line)
    if line:
        parts.append(line)
    return " · ".join(parts)


def cards(hand: str) -> list[dict[str, Any]]:
    """A hand's cards for the page: rank (``10`` for ten), suit symbol, and red or black.

    A code that is not a card (a hand journaled before a check, say) is shown as it is.
    """
    shown: list[dict[str, Any]] = []
    for code in hand.split():
        try:
            card = Card.parse(code)
        except CardError:
            shown.append({"rank": code, "suit": "", "red": False})
            continue
        if card.rank is None or card.suit is None:
            shown.append({"rank": "Joker", "suit": "", "red": False})
            continue
        rank = card.code[0]
        shown.append(
            {
                "rank": "10" if rank == "T" else rank,
                "suit": SUITS[card.suit],
                "red": card.suit in RED,
            }
        )
    return shown
