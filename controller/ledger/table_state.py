r"""A table's round, as its devices report it: bets sensed, bets locked, cards dealt, settled.

States (docs/architecture.md, "Table rounds")::

    BETTING --LOCK--> DEALING --DONE--> settled (back to BETTING)
                         |  \--VOID--> void (wagers returned, back to BETTING)
                         \--bad card--> HELD --VOID or corrected RoundSettled--> BETTING

* **Betting**: bet sensors report chips arriving on and leaving side-bet spots. Nothing is a
  wager yet and no meter moves.
* **Locked / dealing**: at "no more bets" each chip on a spot becomes a locked wager, and a
  progressive wager contributes at once. The shoe reports each card and the position it went
  to (0 the dealer, 1 and up the seats).
* **Held**: a card that cannot be right (unreadable, a duplicate in the round, an eighth card,
  a position that does not exist) or a deal that does not add up holds the round for a
  supervisor, with an alarm, and touches no meter. The supervisor voids it, or settles it with
  the cards as they should be.
* A table that goes **offline** takes no bets until it is back (docs/architecture.md,
  "Failing closed").

This module is the pure state; :mod:`controller.ledger.apply` applies the events to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from controller.errors import RefusedError
from controller.rules.cards import HAND_SIZE, Card, CardError
from controller.rules.spots import DEALER_SEAT

if TYPE_CHECKING:
    from collections.abc import Mapping


class Phase(StrEnum):
    """Where a table's round stands."""

    BETTING = "betting"
    DEALING = "dealing"
    HELD = "held"


class RoundProblem(RefusedError, ValueError):  # noqa: N818 - a problem of the round, not of the program
    """What makes a round unsettleable; the round is held with this as the reason."""


@dataclass(frozen=True, slots=True)
class TableState:
    """One table's live state."""

    table_id: str
    online: bool = True
    phase: Phase = Phase.BETTING
    round_id: str | None = None
    bets: Mapping[tuple[int, str], int] = field(default_factory=dict)
    cards: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    held_reason: str = ""

    def with_bet(self, seat: int, spot: str, amount_cents: int) -> TableState:
        """A chip arrived on a spot (amount > 0) or left it (0)."""
        bets = {key: value for key, value in self.bets.items() if key != (seat, spot)}
        if amount_cents:
            bets[seat, spot] = amount_cents
        return replace(self, bets=bets)

    def locked(self, round_id: str) -> TableState:
        """Bets are locked and round ``round_id`` is being dealt."""
        return replace(self, phase=Phase.DEALING, round_id=round_id, bets={}, cards={})

    def with_card(self, position: int, code: str, seats: int) -> TableState:
        """A card dealt to a position; raises :class:`RoundProblem` when it cannot be right."""
        if not 0 <= position <= seats:
            raise RoundProblem(f"a card from position {position}: the table has seats 1 to {seats}")
        try:
            card = Card.parse(code)
        except CardError as error:
            raise RoundProblem(str(error)) from error
        # The hands hold canonical codes (card.code, below): a string match is a card match.
        if any(card.code in dealt for dealt in self.cards.values()):
            what = "a second joker" if card.is_joker else f"duplicate card {card.code}"
            raise RoundProblem(f"{what} in round {self.round_id}")
        hand = self.cards.get(position, ())
        if len(hand) >= HAND_SIZE:
            raise RoundProblem(f"an eighth card for position {position}")
        return replace(self, cards={**self.cards, position: (*hand, card.code)})

    def held(self, reason: str) -> TableState:
        """The round waits for a supervisor."""
        return replace(self, phase=Phase.HELD, held_reason=reason)

    def cleared(self) -> TableState:
        """The round is over (settled or void): back to taking bets."""
        return replace(self, phase=Phase.BETTING, round_id=None, bets={}, cards={}, held_reason="")

    def complete_hands(
        self, wagering_seats: set[int]
    ) -> tuple[tuple[str, ...], dict[int, tuple[str, ...]]]:
        """The dealer's hand and each dealt seat's; raises :class:`RoundProblem` if incomplete."""
        dealer = self.cards.get(DEALER_SEAT, ())
        if len(dealer) != HAND_SIZE:
            raise RoundProblem(f"the dealer has {len(dealer)} cards, not {HAND_SIZE}")
        seats = {position: hand for position, hand in self.cards.items() if position}
        for position, hand in seats.items():
            if len(hand) != HAND_SIZE:
                raise RoundProblem(f"seat {position} has {len(hand)} cards, not {HAND_SIZE}")
        missing = sorted(wagering_seats - seats.keys())
        if missing:
            raise RoundProblem(f"seat {missing[0]} has a wager but was dealt no hand")
        return dealer, seats
