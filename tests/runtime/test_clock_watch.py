"""Clock steps: the wall clock that dates events, watched against the monotonic clock.

docs/faults.md, "Clock steps": a step backwards, or forwards beyond the tolerance, is reported
once with its size; slow drift under the tolerance and a busy host (clocks read far apart) are
not steps. The clocks are injected: a step is made by moving the wall clock alone.
"""

from __future__ import annotations

import pytest
from support.fake_clocks import START_MONOTONIC, START_WALL, Clocks

from controller.runtime.clock_watch import (
    ClockStep,
    ClockWatch,
    Direction,
    Reading,
    step_between,
)


def watch(clocks: Clocks, **tolerances: float) -> ClockWatch:
    watching = ClockWatch(wall=clocks.wall, monotonic=clocks.monotonic, **tolerances)
    assert watching.check() is None  # the first check only takes a reading
    return watching


def test_a_backward_step_is_reported_with_its_size_and_both_times(clocks: Clocks) -> None:
    watching = watch(clocks)
    clocks.elapse(10)
    clocks.step(-3600)
    step = watching.check()
    assert isinstance(step, ClockStep)
    assert step.direction is Direction.BACKWARD
    assert step.size_s == pytest.approx(3600)
    assert step.seconds == pytest.approx(-3600)
    assert step.describe() == (
        "the wall clock stepped back 3600.000 s: it reads 2026-11-29T14:00:10.000Z where "
        "2026-11-29T15:00:10.000Z was due; events keep their journal order (seq)"
    )


def test_a_backward_step_smaller_than_the_time_between_checks_is_still_a_step(
    clocks: Clocks,
) -> None:
    """The wall clock still moved forward between the checks, but by 0.5 s too little."""
    watching = watch(clocks)
    clocks.elapse(60)
    clocks.step(-0.5)
    step = watching.check()
    assert step is not None
    assert step.direction is Direction.BACKWARD
    assert step.size_s == pytest.approx(0.5)


def test_a_leap_second_repeated_by_the_kernel_is_a_backward_step(clocks: Clocks) -> None:
    watching = watch(clocks)
    clocks.elapse(1)
    clocks.step(-1)
    step = watching.check()
    assert step is not None
    assert (step.direction, round(step.size_s, 6)) == (Direction.BACKWARD, 1)


def test_a_forward_step_beyond_the_tolerance_is_reported(clocks: Clocks) -> None:
    watching = watch(clocks, forward_tolerance_s=2.0)
    clocks.elapse(5)
    clocks.step(2.5)
    step = watching.check()
    assert step is not None
    assert step.direction is Direction.FORWARD
    assert step.size_s == pytest.approx(2.5)
    assert "stepped forward 2.500 s" in step.describe()


def test_a_forward_step_within_the_tolerance_is_not_reported(clocks: Clocks) -> None:
    watching = watch(clocks, forward_tolerance_s=2.0)
    clocks.elapse(5)
    clocks.step(1.9)
    assert watching.check() is None
    assert watching.steps == {Direction.BACKWARD: 0, Direction.FORWARD: 0}


def test_each_step_is_reported_once(clocks: Clocks) -> None:
    watching = watch(clocks)
    clocks.elapse(1)
    clocks.step(-30)
    assert watching.check() is not None
    for _ in range(5):
        clocks.elapse(1)
        assert watching.check() is None
    clocks.step(3600)
    assert watching.check() is not None
    assert watching.check() is None
    assert watching.steps == {Direction.BACKWARD: 1, Direction.FORWARD: 1}


@pytest.mark.parametrize("ppm", [-500, -100, 100, 500])
def test_slow_drift_under_the_tolerance_is_never_a_step(clocks: Clocks, ppm: int) -> None:
    """Slewing at up to the kernel's 500 ppm, checked each second, for an hour: 1.8 s in all."""
    watching = watch(clocks)
    for _ in range(3600):
        clocks.elapse(1)
        clocks.step(ppm * 1e-6)
        assert watching.check() is None
    assert abs(clocks.wall_s - clocks.monotonic_s - (START_WALL - START_MONOTONIC)) > 0.3
    assert watching.steps == {Direction.BACKWARD: 0, Direction.FORWARD: 0}


def test_time_passing_without_a_step_is_never_a_step(clocks: Clocks) -> None:
    watching = watch(clocks, forward_tolerance_s=0.0, backward_tolerance_s=0.0)
    for seconds in (0.0, 0.001, 1.0, 86_400.0, 30 * 86_400.0):
        clocks.elapse(seconds)
        assert watching.check() is None


def test_clocks_read_far_apart_on_a_busy_host_are_not_a_step(clocks: Clocks) -> None:
    """Preempted between the reads, the offset is uncertain: only a certain step counts."""
    watching = watch(clocks)
    for check in range(10):
        clocks.elapse(1)
        # Every other check, each of its reads is preempted for 50 ms after the first clock.
        clocks.delays = [0.05, 0.0] * 3 if check % 2 else []
        assert watching.check() is None
    clocks.elapse(1)
    clocks.step(-0.5)  # far larger than the doubt: still seen
    step = watching.check()
    assert step is not None
    assert step.direction is Direction.BACKWARD


def test_the_doubt_of_both_readings_widens_the_tolerance() -> None:
    before = Reading(wall=100.0, monotonic_before=0.0, monotonic_after=0.0)
    tight = Reading(wall=109.99, monotonic_before=10.0, monotonic_after=10.0)
    loose = Reading(wall=109.99, monotonic_before=9.99, monotonic_after=10.01)
    step = step_between(before, tight)
    assert step is not None
    assert step.seconds == pytest.approx(-0.01)
    assert step_between(before, loose, backward_tolerance_s=0.001) is None


def test_negative_tolerances_are_refused() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        ClockWatch(backward_tolerance_s=-1)


def test_the_real_clocks_do_not_step_between_two_checks() -> None:
    watching = ClockWatch()
    assert watching.check() is None
    assert watching.check() is None
