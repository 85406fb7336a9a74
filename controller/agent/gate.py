"""Whether the agent's table is open: it closes when the controller has gone quiet.

N.J.A.C. 13:69E-1.39B and NY 9 NYCRR 5321.18: losing communication with the controller makes
the table's progressive unplayable. The agent hears the controller through its
acknowledgements (each answers an event or the agent's heartbeat); with none for
``closed_after_s`` the table is CLOSED: the agent refuses progressive wagers at the bet
sensors (:func:`wager_refusal`) and shows CLOSED, until acknowledgements resume. It starts
closed: nothing has been heard yet. Times are the agent's monotonic clock, in seconds.

A wager is made when bets are locked, so a chip that arrived on a progressive spot while the
table was open would become a wager at a lock made once it has closed. The agent therefore
keeps the seats with a progressive chip present since the last lock (:func:`chips_after`) and
refuses a lock while closed until those chips have left (:func:`lock_refusal`): the dealer
takes the progressive wagers down, the sensors report it, and the round goes on without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from controller.events import BetSensed, BetsLocked
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from controller.events import AnyEvent

TABLE_CLOSED: Final = "table-closed"
"""The NAK reason of a progressive wager refused while the table is closed."""


@dataclass(slots=True)
class TableGate:
    """The table's open or closed state, from when the controller was last heard."""

    closed_after_s: float
    last_heard: float | None = None

    def heard(self, now: float) -> None:
        """A valid acknowledgement arrived at ``now``."""
        self.last_heard = now

    def is_open(self, now: float) -> bool:
        """Whether progressive wagers are taken at ``now``."""
        return self.last_heard is not None and now - self.last_heard < self.closed_after_s

    def closes_at(self) -> float | None:
        """When the table closes if nothing more is heard; None while it is closed anyway."""
        return None if self.last_heard is None else self.last_heard + self.closed_after_s

    def why_closed(self, now: float) -> str:
        """For the log and the sign: why the table is closed."""
        if self.last_heard is None:
            return "no acknowledgement from the controller yet"
        return f"no acknowledgement or heartbeat answer for {now - self.last_heard:.1f} s"


def wager_refusal(bet: BetSensed, *, table_open: bool) -> str | None:
    """The reason a bet sensor's report is refused, or None to take it.

    Only a chip arriving on a progressive spot is refused while closed: a chip leaving it, and
    the odds spots, go on (the controller needs a removal to know the chip is gone).
    """
    if table_open or not bet.present or bet.spot != Spot.PROGRESSIVE.value:
        return None
    return TABLE_CLOSED


def chips_after(chips: frozenset[int], event: AnyEvent) -> frozenset[int]:
    """The seats with a progressive chip present once ``event`` is stored (a lock clears them)."""
    if isinstance(event, BetsLocked):
        return frozenset()
    if isinstance(event, BetSensed) and event.spot == Spot.PROGRESSIVE.value:
        return chips | {event.seat} if event.present else chips - {event.seat}
    return chips


def lock_refusal(chips: frozenset[int], *, table_open: bool) -> str | None:
    """The reason a lock is refused (progressive chips present while closed), or None."""
    return None if table_open or not chips else TABLE_CLOSED
