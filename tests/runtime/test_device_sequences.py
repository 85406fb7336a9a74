"""Lost events found end to end: a device's sequence numbers, watched for gaps (pure)."""

from __future__ import annotations

from controller.runtime.device_sequences import MAX_NEW_DEVICES, MAX_RANGES, DeviceSequences, Gap


def beat(watch: DeviceSequences, last: int | None = None) -> list[Gap]:
    return watch.heartbeat("t1", "shoe", last)


def test_numbers_in_order_leave_no_gap() -> None:
    watch = DeviceSequences()
    for seq in range(1, 11):
        watch.seen("t1", "shoe", seq)
    assert beat(watch, 10) == []
    assert beat(watch, 10) == []


def test_a_skipped_number_is_declared_lost_at_the_second_heartbeat_and_only_once() -> None:
    watch = DeviceSequences()
    for seq in (1, 2, 4):
        watch.seen("t1", "shoe", seq)
    assert watch.missing("t1", "shoe") == [(3, 3)]
    assert beat(watch, 4) == []  # first found missing: it may still come (a resend)
    assert beat(watch, 4) == [Gap("t1", "shoe", 3, 3)]
    assert beat(watch, 4) == []  # journaled once
    assert watch.missing("t1", "shoe") == []


def test_a_late_arrival_fills_the_hole_and_is_not_reported() -> None:
    watch = DeviceSequences()
    for seq in (1, 2, 5, 3):
        watch.seen("t1", "shoe", seq)
    assert beat(watch, 5) == []
    watch.seen("t1", "shoe", 4)
    assert beat(watch, 5) == []
    assert beat(watch, 5) == []


def test_events_lost_at_the_end_show_through_the_heartbeats_last() -> None:
    """A broker queue that overflowed dropped the last events: only ``last`` can tell."""
    watch = DeviceSequences()
    watch.seen("t1", "shoe", 1)
    assert beat(watch, 3) == []
    assert beat(watch, 3) == [Gap("t1", "shoe", 2, 3)]
    assert Gap("t1", "shoe", 2, 3).count == 2


def test_events_published_before_the_first_subscription_show_as_a_gap() -> None:
    """A device counts from 1: a first event numbered 4 means 1 to 3 reached nobody."""
    watch = DeviceSequences()
    watch.seen("t1", "shoe", 4)
    beat(watch, 4)
    assert beat(watch, 4) == [Gap("t1", "shoe", 1, 3)]


def test_after_a_restart_the_watch_resumes_from_the_journaled_high() -> None:
    watch = DeviceSequences({("t1", "shoe"): 40})
    watch.seen("t1", "shoe", 41)
    beat(watch, 41)
    assert beat(watch, 41) == []
    watch.seen("t1", "shoe", 43)
    beat(watch, 43)
    assert beat(watch, 43) == [Gap("t1", "shoe", 42, 42)]


def test_a_resend_below_the_high_is_not_a_gap() -> None:
    watch = DeviceSequences()
    for seq in (1, 2, 3, 2, 3):
        watch.seen("t1", "shoe", seq)
    beat(watch, 3)
    assert beat(watch, 3) == []


def test_a_hostile_device_cannot_make_the_watch_grow_without_bound() -> None:
    watch = DeviceSequences()
    for seq in range(2, 4 * MAX_RANGES, 2):  # every other number missing
        watch.seen("t1", "shoe", seq)
    assert len(watch.missing("t1", "shoe")) <= MAX_RANGES
    lost = beat(watch) + beat(watch)
    assert sum(gap.count for gap in lost) == 2 * MAX_RANGES - 1  # every hole, each once
    assert beat(watch) == []
    for number in range(MAX_NEW_DEVICES + 10):
        watch.seen("t2", f"fake-{number}", 1)
    assert watch.untracked["t2"] == 10


def test_a_jump_to_the_top_of_the_range_is_one_gap_not_four_billion_entries() -> None:
    watch = DeviceSequences()
    watch.seen("t1", "shoe", 1)
    watch.seen("t1", "shoe", 2**32 - 1)
    beat(watch)
    (gap,) = beat(watch)
    assert (gap.first, gap.last, gap.count) == (2, 2**32 - 2, 2**32 - 3)


def test_a_gap_is_journaled_under_an_id_that_makes_a_second_report_a_duplicate() -> None:
    fault = Gap("t1", "shoe", 3, 5).fault("2026-01-01T00:00:00.000Z")
    assert fault.event_id == "t1/shoe/gap/3-5"
    assert fault.reason == "sequence-gap"
    assert "3 to 5 (3 in all)" in fault.detail
