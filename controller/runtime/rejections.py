"""Bad input journaled as faults, a flood of it bounded (docs/faults.md, "Floods").

Every rejection is counted for the metrics; up to the rate of
:class:`~controller.runtime.rejection_limit.RejectionLimit` each is journaled as a
``FaultRecorded`` of its own, and the rest are counted in one row per source and interval,
journaled when the interval ends (an asyncio timer, never a poll) and when the sequencer
closes. Journaling a fault goes through the sequencer like any event: it never moves a meter.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Final

from controller.events import FaultRecorded
from controller.ports import ControllerUnavailableError
from controller.runtime.rejection_limit import SUPPRESSED, RejectionLimit

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from controller.events import AnyEvent
    from controller.ports import Receipt
    from controller.runtime.sequencer_stats import SequencerStats

log = logging.getLogger(__name__)

DETAIL_MAX: Final = 8000
"""Characters of a rejection's detail journaled: a parked 4 KiB message whole, in base64."""


class Rejections:
    """The sequencer's record of bad input (see the module docstring)."""

    def __init__(
        self,
        limit: RejectionLimit | None,
        stats: SequencerStats,
        clock: Callable[[], str],
        submit: Callable[[AnyEvent], Awaitable[Receipt]],
        queue_aside: Callable[[AnyEvent], None],
    ) -> None:
        self.limit = limit or RejectionLimit()
        self._stats = stats
        self._clock = clock
        self._submit = submit
        self._queue_aside = queue_aside
        self._timer: asyncio.TimerHandle | None = None

    async def reject(self, source: str, reason: str, detail: str = "") -> None:
        """Count, log and journal one rejection (best effort when failing closed)."""
        self._stats.rejected[reason] += 1
        if not self.limit.admit(source, reason):
            self._stats.rejections_left_out += 1
            self._flush_later()
            return
        log.warning("rejected input from %s: %s %s", source, reason, detail[:200])
        detail = detail[:DETAIL_MAX]
        fault = FaultRecorded(f"fault-{uuid.uuid4()}", self._clock(), source, reason, detail)
        try:
            await self._submit(fault)
        except ControllerUnavailableError:
            log.warning("fault not journaled: the controller is failing closed")

    def flush(self, *, everything: bool = False) -> None:
        """Queue the rows of the rejections left out whose interval ended (all: ``everything``)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        for left_out in self.limit.due(everything=everything):
            event_id = f"fault-{uuid.uuid4()}"
            self._queue_aside(
                FaultRecorded(
                    event_id, self._clock(), left_out.source, SUPPRESSED, left_out.detail()
                )
            )
        if not everything:
            self._flush_later()

    def _flush_later(self) -> None:
        """Journal the rows of rejections left out once their interval ends."""
        deadline = self.limit.next_deadline()
        if self._timer is not None or deadline is None:
            return
        delay = max(0.0, deadline - self.limit.monotonic())
        self._timer = asyncio.get_running_loop().call_later(delay, self.flush)
