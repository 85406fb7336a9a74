"""The agent keeps one fault of a kind per interval: a burst is one disk write, the rest counted."""

from __future__ import annotations

from controller.agent.faults import FaultThrottle


def test_a_burst_of_one_reason_is_kept_once_then_counted_in_the_next_kept() -> None:
    throttle = FaultThrottle(interval_s=10.0)
    assert throttle.admit("refused-table-closed", 100.0) == 0
    assert [throttle.admit("refused-table-closed", 100.0 + n) for n in range(1, 6)] == [None] * 5
    assert throttle.admit("refused-table-closed", 110.0) == 5  # kept, saying 5 were held back
    assert throttle.admit("refused-table-closed", 121.0) == 0


def test_reasons_are_throttled_apart() -> None:
    throttle = FaultThrottle(interval_s=10.0)
    assert throttle.admit("ack-other-table", 0.0) == 0
    assert throttle.admit("ack-other-boot", 1.0) == 0
    assert throttle.admit("ack-other-table", 2.0) is None
