"""A wall clock and a monotonic clock for tests, that move only when told to.

Import it as ``from support.fake_clocks import Clocks`` (tests/ is on the path; see
tests/conftest.py). Give
:class:`controller.runtime.clock_watch.ClockWatch` its :meth:`Clocks.wall` and
:meth:`Clocks.monotonic`, and the sequencer :meth:`Clocks.iso` as its event clock: then
:meth:`Clocks.step` is someone setting the system clock, and :meth:`Clocks.elapse` time passing.
"""

from __future__ import annotations

from datetime import UTC, datetime

START_WALL = datetime(2026, 11, 29, 15, tzinfo=UTC).timestamp()
START_MONOTONIC = 5_000.0


class Clocks:
    """A wall clock and a monotonic clock that move only when told to."""

    def __init__(self) -> None:
        self.wall_s = START_WALL
        self.monotonic_s = START_MONOTONIC
        self.delays: list[float] = []
        """Time lost after each monotonic read, one per read: a process preempted meanwhile."""

    def wall(self) -> float:
        """The wall clock, as ``time.time``."""
        return self.wall_s

    def monotonic(self) -> float:
        """The monotonic clock, as ``time.monotonic``; then the next delay passes."""
        now = self.monotonic_s
        if self.delays:
            self.elapse(self.delays.pop(0))
        return now

    def elapse(self, seconds: float) -> None:
        """Time passes: both clocks move together."""
        self.wall_s += seconds
        self.monotonic_s += seconds

    def step(self, seconds: float) -> None:
        """Someone sets the wall clock: it moves, the monotonic clock does not."""
        self.wall_s += seconds

    def iso(self) -> str:
        """The wall clock as events carry it: UTC, ISO 8601, milliseconds, ``Z``."""
        moment = datetime.fromtimestamp(self.wall_s, UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
