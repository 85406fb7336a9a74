"""Floods of bad input, bounded: rejections are journaled one by one only up to a rate.

Every rejected input is journaled as a fault so that the record is complete, but a device
with valid credentials can send junk as fast as the network carries it, and a row per message
would fill the disk (10,000 junk messages were 10,000 rows in 4 s). So per source, in each
interval (:attr:`RejectionLimit.interval_s`, from the first rejection), the first
:attr:`RejectionLimit.threshold` rejections are journaled one by one and the rest are only
counted; when the interval ends, one row says how many were left out and for which reasons
(:meth:`RejectionLimit.due`). The metrics count every rejection, journaled or not
(docs/faults.md, "Floods").

A *source* is the table a message came from, not its topic: an MQTT source names the topic
(``mqtt:<site>/jackpot/v1/table/<tid>/event/<type>``), and a device could vary the type to
start a fresh allowance each time, so :func:`limit_key` cuts the name at the table. At most
:data:`MAX_SOURCES` sources are tracked at once; any more share one allowance.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_SOURCES: Final = 256
OTHER_SOURCES: Final = "(other sources)"
SUPPRESSED: Final = "rejections-suppressed"
"""The reason of the row that counts the rejections left out of the journal."""


def limit_key(source: str) -> str:
    """The source a rejection counts against: a topic is cut at its table."""
    for marker in ("/event/", "/status"):
        head, found, _ = source.partition(marker)
        if found:
            return head
    return source


@dataclass(slots=True)
class _Window:
    start: float
    journaled: int = 0
    left_out: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class LeftOut:
    """Rejections of one source left out of the journal in one interval."""

    source: str
    reasons: Counter[str]
    interval_s: float

    @property
    def count(self) -> int:
        """How many."""
        return sum(self.reasons.values())

    def detail(self) -> str:
        """What the journal row says."""
        reasons = ", ".join(f"{reason} x{n}" for reason, n in sorted(self.reasons.items()))
        return (
            f"{self.count} more rejections from {self.source} within {self.interval_s:g} s "
            f"were counted but not journaled one by one: {reasons}"
        )


class RejectionLimit:
    """Which rejections to journal one by one (see the module docstring)."""

    def __init__(
        self,
        *,
        threshold: int = 20,
        interval_s: float = 10.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.interval_s = interval_s
        self.monotonic = monotonic
        self._windows: dict[str, _Window] = {}
        self._ready: list[LeftOut] = []

    def admit(self, source: str, reason: str) -> bool:
        """Whether to journal this rejection; if not, it is counted for the interval's row."""
        now = self.monotonic()
        self._close(now)
        key = limit_key(source)
        if key not in self._windows and len(self._windows) >= MAX_SOURCES:
            key = OTHER_SOURCES
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = _Window(now)
        if window.journaled < self.threshold:
            window.journaled += 1
            return True
        window.left_out[reason] += 1
        return False

    def _close(self, now: float, *, everything: bool = False) -> None:
        for key, window in list(self._windows.items()):
            if everything or now >= window.start + self.interval_s:
                if window.left_out:
                    self._ready.append(LeftOut(key, window.left_out, self.interval_s))
                del self._windows[key]

    def next_deadline(self) -> float | None:
        """When the next row of rejections left out is due (monotonic), if any."""
        if self._ready:
            return self.monotonic()
        ends = [w.start + self.interval_s for w in self._windows.values() if w.left_out]
        return min(ends, default=None)

    def due(self, *, everything: bool = False) -> list[LeftOut]:
        """The rows due now (every one, when stopping); their intervals are over."""
        self._close(self.monotonic(), everything=everything)
        rows, self._ready = self._ready, []
        return rows
