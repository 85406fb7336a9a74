"""Floods of bad input are journaled one by one only up to a rate (pure, with a fake clock)."""

from __future__ import annotations

from controller.runtime.rejection_limit import MAX_SOURCES, OTHER_SOURCES, RejectionLimit, limit_key

TOPIC = "mqtt:site/jackpot/v1/table/t1/event/bet"


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        """The time now."""
        return self.now


def test_a_topic_counts_against_its_table_whatever_the_event_type() -> None:
    assert limit_key(TOPIC) == "mqtt:site/jackpot/v1/table/t1"
    assert limit_key("mqtt:site/jackpot/v1/table/t1/event/zz") == limit_key(TOPIC)
    assert limit_key("mqtt:site/jackpot/v1/table/t1/status") == limit_key(TOPIC)
    assert limit_key("serial:line-1") == "serial:line-1"


def test_beyond_the_threshold_rejections_are_counted_into_one_row_per_interval() -> None:
    clock = Clock()
    limit = RejectionLimit(threshold=5, interval_s=10.0, monotonic=clock)
    admitted = [limit.admit(TOPIC, "bad-json") for _ in range(10_000)]
    assert admitted.count(True) == 5
    assert limit.due() == []  # not before the interval ends
    assert limit.next_deadline() == 110.0
    clock.now = 110.0
    (row,) = limit.due()
    assert row.count == 10_000 - 5
    assert row.source == "mqtt:site/jackpot/v1/table/t1"
    assert "9995 more rejections" in row.detail()
    assert "bad-json x9995" in row.detail()
    assert limit.due() == []
    assert limit.admit(TOPIC, "bad-json")  # a new interval, a new allowance


def test_each_table_has_its_own_allowance() -> None:
    limit = RejectionLimit(threshold=1, monotonic=Clock())
    assert limit.admit(TOPIC, "bad-json")
    assert not limit.admit(TOPIC, "bad-json")
    assert limit.admit("mqtt:site/jackpot/v1/table/t2/event/bet", "bad-json")


def test_made_up_sources_share_one_allowance_past_the_bound() -> None:
    limit = RejectionLimit(threshold=1, monotonic=Clock())
    for number in range(MAX_SOURCES):
        assert limit.admit(f"mqtt:x/table/t{number}/event/bet", "unknown-table")
    assert limit.admit("mqtt:x/table/new-1/event/bet", "unknown-table")
    assert not limit.admit("mqtt:x/table/new-2/event/bet", "unknown-table")
    (row,) = limit.due(everything=True)[-1:]
    assert row.source == OTHER_SOURCES


def test_stopping_journals_what_was_left_out_at_once() -> None:
    limit = RejectionLimit(threshold=0, monotonic=Clock())
    limit.admit(TOPIC, "bad-json")
    (row,) = limit.due(everything=True)
    assert row.count == 1
