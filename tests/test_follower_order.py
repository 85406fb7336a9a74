"""Followers apply only increasing (epoch, seq): controller/outputs.py FollowerOrder.

A sign or display hears the controller through brokers and proxies; an old leader that lost its
fence (a zombie) or a late copy must never roll a meter back (docs/ha.md, "Brokers and
followers").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from controller.outputs import FollowerOrder, MeterUpdate

if TYPE_CHECKING:
    import pytest


def test_a_newer_row_applies_and_an_older_one_is_dropped_and_counted() -> None:
    order = FollowerOrder("sign")
    assert order.admits("meter/main", 0, 10)
    assert order.admits("meter/main", 0, 11)
    assert not order.admits("meter/main", 0, 9)
    assert order.stale == 1
    assert order.highest["meter/main"] == (0, 11)


def test_a_new_epoch_wins_over_any_row_of_the_old_one() -> None:
    order = FollowerOrder()
    assert order.admits("meter/main", 1, 5_000)
    # The new leader's first row is numbered lower than the zombie's last: its epoch wins.
    assert order.admits("meter/main", 2, 4_990)
    assert not order.admits("meter/main", 1, 5_001), "the zombie's newer row of the old epoch"
    assert order.stale == 1


def test_the_same_row_again_applies_without_counting() -> None:
    order = FollowerOrder()
    assert order.admits("meter/main", 3, 7)
    assert order.admits("meter/main", 3, 7)  # a broker's retained copy at each subscription
    assert order.stale == 0


def test_keys_are_ordered_apart() -> None:
    order = FollowerOrder()
    assert order.admits("meter/a", 0, 100)
    assert order.admits("meter/b", 0, 1)
    assert order.admits("table/t1", 0, 2)


def test_an_update_of_no_row_is_ordered_by_epoch_alone() -> None:
    order = FollowerOrder()
    assert order.admits("table/t1", 2, 40)
    # Failing closed (no journal row) after row 40 of the same epoch applies ...
    assert order.admits("table/t1", 2, 0)
    # ... and does not lower the row already seen.
    assert not order.admits("table/t1", 2, 39)
    # A former leader's failing closed does not apply.
    assert not order.admits("table/t1", 1, 0)
    assert order.stale == 2


def test_a_stale_update_is_logged_once_per_key(caplog: pytest.LogCaptureFixture) -> None:
    order = FollowerOrder("sign-1")
    order.admits("meter/main", 2, 10)
    with caplog.at_level(logging.WARNING):
        for seq in range(5):
            order.admits("meter/main", 1, seq)
    warnings = [r for r in caplog.records if "dropped an update for meter/main" in r.message]
    assert len(warnings) == 1
    assert "sign-1" in warnings[0].message
    assert order.stale == 5


def test_updates_carry_epoch_0_unless_given() -> None:
    update = MeterUpdate("2025-01-01T00:00:00Z", 1, "main", 1, 0, 0, 1)
    assert update.epoch == 0
    assert MeterUpdate("2025-01-01T00:00:00Z", 1, "main", 1, 0, 0, 1, epoch=4).epoch == 4


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 50)), max_size=60))
def test_what_is_applied_never_goes_backwards(stamps: list[tuple[int, int]]) -> None:
    order = FollowerOrder()
    applied = [stamp for stamp in stamps if order.admits("meter/main", *stamp)]
    assert applied == sorted(applied)
    assert order.stale == len(stamps) - len(applied)
    if stamps:
        assert applied[-1] == max(stamps)
