"""Clock steps: notice when the wall clock that dates events jumps (docs/faults.md, "Clock steps").

Every event's ``at`` is the controller's wall clock (UTC). NTP slews that clock gently, but
some things step it at once: ``date -s``, an NTP or chrony step after an outage, a leap second
repeated by the kernel, a virtual machine restored from a snapshot or resumed after a pause.
A step backwards makes ``at`` go back while the journal's ``seq`` goes on; a step forwards
leaves a hole in the times. Either can put an event in the wrong report period.

The monotonic clock never steps, and the kernel slews it together with the wall clock, so
``wall - monotonic`` stays put until the wall clock steps (or the host was suspended, which
the monotonic clock does not count: that is a forward step too, as far as ``at`` is
concerned). :class:`ClockWatch` compares that offset between two readings:

* back by more than ``backward_tolerance_s`` (1 ms, the resolution of ``at``), or
* forward by more than ``forward_tolerance_s`` (default 2 s)

is a :class:`ClockStep`, reported once: the next reading is compared with this one.

Reading two clocks is not atomic: the process may be preempted between the reads. So each
reading brackets the wall clock between two monotonic readings (the tightest of a few tries),
and a step counts only when it is larger than the tolerance *plus* both readings'
uncertainty: a busy host never raises a false alarm, and a real step is never hidden by it.

The module is pure but for the clocks it is given (``time.time`` and ``time.monotonic`` by
default); :class:`controller.runtime.sequencer.Sequencer` consults its watch once per batch.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from controller.clock import utc_iso
from controller.events import FaultRecorded

if TYPE_CHECKING:
    from collections.abc import Callable

FAULT_SOURCE: Final = "clock"
"""The ``source`` of a journaled clock step."""
CLOCK_STEP: Final = "clock-step"
"""The ``reason`` of a journaled clock step; its detail gives the direction and the size."""
BACKWARD_TOLERANCE_S: Final = 0.001
"""A backward step at or below this is not reported: ``at`` is written to the millisecond."""
FORWARD_TOLERANCE_S: Final = 2.0
"""A forward step at or below this is not reported."""
_TRIES: Final = 3
"""Bracketing attempts per reading; the tightest bracket is kept."""


class Direction(StrEnum):
    """Which way the wall clock stepped."""

    BACKWARD = "backward"
    FORWARD = "forward"


def _iso(seconds: float) -> str:
    return utc_iso(datetime.fromtimestamp(seconds, UTC))


@dataclass(frozen=True, slots=True)
class Reading:
    """The wall clock read between two monotonic readings (all in seconds)."""

    wall: float
    monotonic_before: float
    monotonic_after: float

    @property
    def offset(self) -> float:
        """``wall - monotonic``, taking the monotonic time halfway through the bracket."""
        return self.wall - (self.monotonic_before + self.monotonic_after) / 2

    @property
    def uncertainty(self) -> float:
        """How far :attr:`offset` may be from the truth: half of the bracket."""
        return (self.monotonic_after - self.monotonic_before) / 2


@dataclass(frozen=True, slots=True)
class ClockStep:
    """The wall clock moved by ``seconds`` more (forward) or less (backward) than time passed."""

    seconds: float
    expected_wall: float
    """Where the wall clock would be had it not stepped."""
    wall: float
    """Where it is."""

    @property
    def direction(self) -> Direction:
        """Backward (``at`` went back) or forward (a hole in the times)."""
        return Direction.BACKWARD if self.seconds < 0 else Direction.FORWARD

    @property
    def size_s(self) -> float:
        """The size of the step in seconds, whichever way."""
        return abs(self.seconds)

    def describe(self) -> str:
        """One line for the journaled fault and the log: the size, and both times."""
        way = "back" if self.direction is Direction.BACKWARD else "forward"
        return (
            f"the wall clock stepped {way} {self.size_s:.3f} s: it reads {_iso(self.wall)} "
            f"where {_iso(self.expected_wall)} was due; events keep their journal order (seq)"
        )

    def fault(self, event_id: str, at: str) -> FaultRecorded:
        """The fault that journals this step."""
        return FaultRecorded(event_id, at, FAULT_SOURCE, CLOCK_STEP, self.describe())


def step_between(
    previous: Reading,
    current: Reading,
    *,
    backward_tolerance_s: float = BACKWARD_TOLERANCE_S,
    forward_tolerance_s: float = FORWARD_TOLERANCE_S,
) -> ClockStep | None:
    """The step of the wall clock between two readings, if it is certainly beyond tolerance."""
    seconds = current.offset - previous.offset
    doubt = previous.uncertainty + current.uncertainty
    tolerance = backward_tolerance_s if seconds < 0 else forward_tolerance_s
    if abs(seconds) - doubt <= tolerance:
        return None
    return ClockStep(seconds, current.wall - seconds, current.wall)


class ClockWatch:
    """Reads the clocks at each :meth:`check` and reports a step since the previous check once."""

    def __init__(
        self,
        *,
        backward_tolerance_s: float = BACKWARD_TOLERANCE_S,
        forward_tolerance_s: float = FORWARD_TOLERANCE_S,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if backward_tolerance_s < 0 or forward_tolerance_s < 0:
            raise ValueError("clock step tolerances are seconds, 0 or more")
        self.backward_tolerance_s = backward_tolerance_s
        self.forward_tolerance_s = forward_tolerance_s
        self._wall = wall
        self._monotonic = monotonic
        self._last: Reading | None = None
        self.steps: Counter[Direction] = Counter(dict.fromkeys(Direction, 0))
        """Steps reported since start, by direction (both present from the start, for metrics)."""

    def read(self) -> Reading:
        """The clocks now: the tightest of a few brackets."""
        best = self._bracket()
        for _ in range(_TRIES - 1):
            if best.uncertainty == 0:
                break
            reading = self._bracket()
            if reading.uncertainty < best.uncertainty:
                best = reading
        return best

    def _bracket(self) -> Reading:
        before = self._monotonic()
        wall = self._wall()
        return Reading(wall, before, self._monotonic())

    def check(self) -> ClockStep | None:
        """The step since the previous check, if any (the first check only takes a reading)."""
        current = self.read()
        previous, self._last = self._last, current
        if previous is None:
            return None
        step = step_between(
            previous,
            current,
            backward_tolerance_s=self.backward_tolerance_s,
            forward_tolerance_s=self.forward_tolerance_s,
        )
        if step is not None:
            self.steps[step.direction] += 1
        return step
