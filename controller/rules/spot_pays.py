"""How an odds spot's wager is paid: the line it wins in a round, and the most it can win.

An odds wager (the bonus, Ace High, insurance and Dynasty wagers, docs/rules.md § 5) pays
"N to 1" on one line of its paytable. Which line depends on the spot: most spots read the
seat's own seven cards, the Ace High wager reads them against the dealer's. Each spot of
:mod:`controller.rules.spots` names one :class:`OddsPays`; the ledger settles a wager with its
``line`` and works out the § 688a.12(e) floor of a table's maximum payout with its ``most``
(controller/ledger/payout_floor.py), so a spot's settlement is written once, here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from controller.rules.lines import BIT, Line
from controller.rules.paytable import Odds
from controller.rules.qualify import ACE_HIGH, ace_high_outcomes, qualifier

if TYPE_CHECKING:
    from controller.rules.cards import SevenCardHand
    from controller.rules.paytable import Paytable, PaytableLine

Pay = Callable[[int], int]
"""What a wager wins, in cents, on a hand with a qualifying mask."""

DEALER_ONLY: Final = (
    BIT[Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER],
    BIT[Line.DEALER_ONLY_ACE_HIGH_NO_JOKER],
)


def hand_mask(table: Paytable, hand: SevenCardHand) -> int:
    """The lines ``hand`` qualifies for, read with the paytable's joker mode."""
    return qualifier(table.joker)(hand.indices)


@dataclass(frozen=True, slots=True)
class OddsPays:
    """How one odds spot's wager is settled."""

    line: Callable[[Paytable, SevenCardHand, SevenCardHand], PaytableLine | None]
    """The row the wager wins, from its paytable, the seat's seven cards and the dealer's."""
    most: Callable[[Paytable, int], Pay]
    """What a wager of a stake wins on a hand of a qualifying mask, for the floor of the
    maximum payout (the most over every mask a seven-card hand can have)."""


def odds_pay(table: Paytable, stake: int) -> Pay:
    """A wager of ``stake`` on the row ``table`` pays for a mask, "N to 1" (0 if none)."""

    def pay(mask: int) -> int:
        row = table.line_for(mask)
        return stake * row.pays.to_one if row is not None and isinstance(row.pays, Odds) else 0

    return pay


def _own_line(table: Paytable, hand: SevenCardHand, _dealer: SevenCardHand) -> PaytableLine | None:
    return table.line_for(hand_mask(table, hand))


def _against_dealer(
    table: Paytable, hand: SevenCardHand, dealer: SevenCardHand
) -> PaytableLine | None:
    return table.line_for(ace_high_outcomes(hand_mask(table, dealer), hand_mask(table, hand)))


def _ace_high_most(table: Paytable, stake: int) -> Pay:
    """The Ace High wager: its "both" row on an ace-high hand, else a "dealer only" row."""
    both = odds_pay(table, stake)

    def pay(mask: int) -> int:
        if mask & ACE_HIGH:
            return both(BIT[Line.BOTH_ACE_HIGH])
        return max(both(outcome) for outcome in DEALER_ONLY)

    return pay


OWN_HAND: Final = OddsPays(_own_line, odds_pay)
"""Paid on the seat's own seven cards: the bonus, Dynasty and insurance wagers (§ 5.10 reads
the insurance hand with the joker an ace, which its paytable's joker mode says)."""
AGAINST_DEALER: Final = OddsPays(_against_dealer, _ace_high_most)
"""The Face Up Ace High wager: the dealer's ace-high hand, and whether the seat's is too."""
