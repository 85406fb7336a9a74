"""Since when, and why: what the display remembers of the floor that the ledger does not keep.

The ledger knows that a table is closed; a supervisor across the pit must also read since when
and why (a heartbeat timeout, its MQTT last will, the controller failing closed). The meters
must say how fresh they are: when the controller or its broker link is gone, the numbers on the
screen are the last ones known, and the page shows them greyed "as of" the last moment the
feed was known live.

:class:`FloorWatch` follows the published updates (after commit, like every sink) and notes:

* each table's closing as journaled (its time and reason) until it reopens; the tables the
  controller closes while failing closed are the controller's outage, not theirs;
* when the controller went offline, and why;
* the last moment the feed was seen live (``live_at``), checked at every update and every
  snapshot the page asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.clock import utc_now
from controller.outputs import ControllerUpdate, TableUpdate

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Callable

    from controller.outputs import AnyUpdate


@dataclass(frozen=True, slots=True)
class Closure:
    """Something went offline at ``at`` (UTC, ISO 8601) for ``reason``."""

    at: str
    reason: str


class FloorWatch:
    """Closures and outages with their times, and when the feed was last live."""

    def __init__(
        self, feed_trouble: Callable[[], list[str]], clock: Callable[[], str] = utc_now
    ) -> None:
        self._feed_trouble = feed_trouble
        self._clock = clock
        self.started_at = clock()
        self.closures: dict[str, Closure] = {}
        """Tables journaled offline in this run, from their first closing until they reopen."""
        self.controller_down: Closure | None = None
        self.live_at: str | None = None
        """The last moment the feed was seen live (None: not since the display started)."""

    def note(self, update: AnyUpdate) -> None:
        """One published update."""
        if isinstance(update, TableUpdate) and update.seq > 0:
            # Journaled changes only: those of seq 0 are the controller failing closed or
            # recovering, said once for the whole floor by its ControllerUpdate.
            if update.online:
                self.closures.pop(update.table_id, None)
            elif update.table_id not in self.closures:
                self.closures[update.table_id] = Closure(update.at, update.reason)
        elif isinstance(update, ControllerUpdate):
            if update.online:
                self.controller_down = None
            elif self.controller_down is None:
                self.controller_down = Closure(update.at, update.reason)
        self.observe()

    def observe(self) -> list[str]:
        """What keeps the meters from being live now (nothing: the moment is noted)."""
        trouble = self._feed_trouble()
        if not trouble:
            self.live_at = self._clock()
        return trouble

    async def follow(self, updates: AsyncIterable[AnyUpdate]) -> None:
        """Note every update, until cancelled."""
        async for update in updates:
            self.note(update)
