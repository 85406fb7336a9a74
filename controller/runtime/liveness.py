"""Table liveness: a table whose devices go silent past its timeout is closed, then reopened.

docs/architecture.md, "The standards it meets": losing communication with a table makes its
progressive unplayable. Every device event and heartbeat counts as a sign of life. When a table has
been silent for its timeout, the monitor journals ``table-status`` offline (its wagers are then
refused and its sign shows CLOSED); the first sign of life after that journals it online again. The
monitor sleeps until the next deadline or the next change, never on a fixed poll.

Whether a table is open is the journal's to say (``is_open``), not the monitor's memory: a table
the journal opens by any row (a retained ``online`` on a broker's status topic, journaled again
at every start; a status row while the monitor held the table closed) is closed again once its
timeout passes unheard. The deadline runs from the last sign of life or, if none, from this
process's start, so that after a restart a silent table is closed within its timeout whatever
its retained status says (NY 9 NYCRR 5321.18(c)). :meth:`committed`, the sequencer's commit
hook, wakes the monitor when a row opens a table.

A table the journal holds closed for any other reason (a ``table-status`` row from a broker's
status topic, which anyone on the broker can publish, or one journaled while this process was
not watching) reopens the same way: the caller says so with ``closed`` when it hears the table,
so that a status row cannot keep a table the daemon hears closed (NY 9 NYCRR 5321.18(c): the
progressive is unplayable while the controller does not hear the table, and only then). A
table that is really silent is never heard, so it stays closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import TYPE_CHECKING

from controller.effects import TableStatus
from controller.events import TableStatusChanged
from controller.ports import ControllerUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from controller.ports import Intake, Receipt

log = logging.getLogger(__name__)


class Liveness:
    """Watches the tables' signs of life; run :meth:`run` as a task."""

    def __init__(
        self,
        timeouts: Mapping[str, float],
        *,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], str],
        offline: set[str] | None = None,
        is_open: Callable[[str], bool] | None = None,
    ) -> None:
        """Watch ``timeouts`` (seconds, by table); ``offline``: closed in the journal now.

        ``is_open`` says whether the journal holds a table open; without it the monitor goes
        by its own view (whether it closed the table).
        """
        self.timeouts = dict(timeouts)
        self._monotonic = monotonic
        self._clock = clock
        start = monotonic()
        self.last_seen: dict[str, float] = dict.fromkeys(self.timeouts, start)
        self.silent: set[str] = set(offline or ())
        """Tables closed for silence (or found closed in the journal at start-up)."""
        self.timed_out: set[str] = set()
        """Tables this monitor closed for silence, since they last opened (not those found
        closed at start-up): what the display calls a heartbeat timeout."""
        self._is_open = is_open or self._not_silent
        self._retry_at: dict[str, float] = {}
        self._reopening: dict[str, int] = {}
        """The journal's head when each table's last reopening was given."""
        self._changed = asyncio.Event()

    def seen(
        self,
        table_id: str,
        device: str = "",  # noqa: ARG002 - liveness is per table
        *,
        revive: bool = True,
        closed: bool = False,
        head: int = 0,
    ) -> TableStatusChanged | None:
        """A sign of life from a table; returns the event that reopens it if it was closed.

        The caller journals that event *before* the device event that brought the sign of
        life, with no await in between, so that the first bet after a silence is not refused.
        With ``revive=False`` (the journal cannot take the reopening now) the sign of life is
        only noted, and the table stays closed until the next one. ``closed``: the journal
        holds the table closed, as of its row ``head``; one reopening is given per ``head``
        (the journal has not moved on since the last: it is still on its way).
        """
        if table_id not in self.timeouts:
            return None
        self.last_seen[table_id] = self._monotonic()
        if not revive:
            return None
        if table_id not in self.silent and not (closed and self._reopening.get(table_id) != head):
            return None
        self._opened(table_id)
        self._reopening[table_id] = head
        event_id = f"{table_id}/liveness/{uuid.uuid4()}"
        return TableStatusChanged(
            event_id, self._clock(), table_id, online=True, reason="signs of life again"
        )

    def committed(self, receipts: Sequence[Receipt]) -> None:
        """The sequencer's commit hook: a row that opened a table starts its watch again.

        Whichever row it was (this monitor's reopening, a status topic's ``online``), the table
        is open now and is closed again if its timeout passes unheard.
        """
        for receipt in receipts:
            if receipt.duplicate or not receipt.applied:
                continue
            for effect in receipt.effects:
                if not isinstance(effect, TableStatus) or not effect.online:
                    continue
                if effect.table_id in self.timeouts:
                    self._opened(effect.table_id)

    def _opened(self, table_id: str) -> None:
        self.silent.discard(table_id)
        self.timed_out.discard(table_id)
        self._changed.set()

    def _not_silent(self, table_id: str) -> bool:
        return table_id not in self.silent

    def seconds_since(self, table_id: str) -> float:
        """How long the table has been silent."""
        return self._monotonic() - self.last_seen.get(table_id, self._monotonic())

    def _due(self) -> tuple[list[str], float | None]:
        now = self._monotonic()
        closing, next_deadline = [], None
        for table_id, timeout in self.timeouts.items():
            if not self._is_open(table_id):
                continue  # closed: the next sign of life reopens it (seen)
            deadline = max(self.last_seen[table_id] + timeout, self._retry_at.get(table_id, 0.0))
            if deadline <= now:
                closing.append(table_id)
            else:
                next_deadline = deadline if next_deadline is None else min(next_deadline, deadline)
        return closing, next_deadline

    async def run(self, intake: Intake) -> None:
        """Close tables as they fall silent, until cancelled (:meth:`seen` reopens them)."""
        while True:
            closing, deadline = self._due()
            for table_id in closing:
                await self._close(intake, table_id)
            if closing:
                continue
            wait = None if deadline is None else max(0.0, deadline - self._monotonic())
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=wait)

    async def _close(self, intake: Intake, table_id: str) -> None:
        # Marked silent before the await, so that a sign of life while the close is being
        # journaled queues the reopening after it.
        self.silent.add(table_id)
        self.timed_out.add(table_id)
        reason = f"silent for more than {self.timeouts[table_id]:g} s"
        event_id = f"{table_id}/liveness/{uuid.uuid4()}"
        event = TableStatusChanged(event_id, self._clock(), table_id, online=False, reason=reason)
        try:
            receipt = await intake.submit(event)
        except ControllerUnavailableError:
            log.warning("table %s liveness change not journaled: failing closed", table_id)
        else:
            if receipt.applied:
                self._retry_at.pop(table_id, None)
                return
            log.error("table %s liveness change refused: %s", table_id, receipt.reason)
        # Not journaled: the journal may still hold the table open, so the close is tried
        # again a timeout later (not at once: a journal that refuses would be asked in a loop).
        self.silent.discard(table_id)
        self.timed_out.discard(table_id)
        self._retry_at[table_id] = self._monotonic() + self.timeouts[table_id]
