"""The places on the layout: the seats, the dealer's, and the wager spots in front of a seat.

Devices name them (a bet sensor reports a spot), paytables are filed per spot, and the ledger
settles per spot; they belong to the rules of the game, not to any one of those.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

DEALER_SEAT: Final = 0
"""The dealer's seat number; player seats are numbered from 1 (docs/rules.md)."""


class Spot(StrEnum):
    """The side-bet spots in front of a seat."""

    BONUS = "bonus"
    ACE_HIGH = "ace-high"
    INSURANCE = "insurance"
    """The NJ insurance wager on the seat's own hand (N.J.A.C. 13:69F-11.2(h), 11.15)."""
    PROGRESSIVE = "progressive"
    DYNASTY = "dynasty"
    """The EZ Pai Gow Dynasty Bonus (N.J.A.C. 13:69F-11(i); 58 Pa. Code § 645a.6(g))."""
