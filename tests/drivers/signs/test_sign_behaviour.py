"""What a sign shows and when, on a fake clock: rate limits, JACKPOT, CLOSED, alternate mode.

:class:`Clocked` drives :class:`drivers.signs.behaviour.SignBehaviour` the way a sink does
(one timer, replaced by each step's ``wake_at``), but with simulated time, so nothing sleeps.
"""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.outputs import (
    AnyUpdate,
    ControllerUpdate,
    HitAnnouncement,
    MeterUpdate,
    PoolUpdate,
    TableUpdate,
    WagerRefusal,
)
from drivers.signs.behaviour import Show, SignBehaviour, Step
from drivers.signs.rules import SignRules, SignRulesError

POOL = "fortune"
AT = "2025-01-01T00:00:00.000000Z"
TOLERANCE = 1e-9


class Clocked:
    """A sign's state machine on simulated time, recording every text shown and when."""

    def __init__(self, rules: SignRules) -> None:
        self.sign = SignBehaviour(rules)
        self.now = 0.0
        self.wake_at: float | None = None
        self.shown: list[tuple[float, Show]] = []

    def _take(self, step: Step) -> None:
        for show in step.shows:
            self.shown.append((self.now, show))
        if step.wake_at is not None:
            assert step.wake_at > self.now - TOLERANCE, "a wake-up in the past"
        self.wake_at = step.wake_at

    def advance(self, until: float) -> None:
        """Let time pass to ``until``, firing the wake-ups due on the way."""
        for _ in range(100_000):
            if self.wake_at is None or self.wake_at > until:
                self.now = max(self.now, until)
                return
            self.now = max(self.now, self.wake_at)
            self._take(self.sign.wake(self.now))
        pytest.fail("the sign keeps asking to be woken up at once")

    def feed(self, at: float, update: AnyUpdate) -> None:
        """An update arrives at ``at``."""
        self.advance(at)
        self._take(self.sign.update(update, at))

    def texts(self) -> list[str]:
        """Every text shown, in order."""
        return [show.text for _at, show in self.shown]

    def last(self) -> tuple[float, Show]:
        """The newest text shown, and when."""
        return self.shown[-1]

    def shown_between(self, start: float, end: float) -> list[tuple[float, Show]]:
        """The texts shown from ``start`` to ``end`` inclusive."""
        return [(at, show) for at, show in self.shown if start <= at <= end + TOLERANCE]


def meter(cents: int, pool: str = POOL) -> MeterUpdate:
    return MeterUpdate(AT, 1, pool, cents, 0, 0, 100_000)


def hit(
    payout: str, table: str = "T3", seat: int = 2, cents: int = 500_000, pool: str | None = POOL
) -> HitAnnouncement:
    return HitAnnouncement(AT, 1, payout, pool, table, seat, "royal", cents, False, False)


def table(table_id: str, *, online: bool) -> TableUpdate:
    return TableUpdate(AT, 1, table_id, online, "heartbeat lost" if not online else "back")


def controller(*, online: bool) -> ControllerUpdate:
    return ControllerUpdate(AT, 0, online, "journal unavailable" if not online else "started")


def rules(**fields: object) -> SignRules:
    return SignRules(pool_id=POOL, **fields)  # type: ignore[arg-type]


# --- the meter and the rate limit -----------------------------------------------------------


def test_meter_is_shown_as_dollars_at_once_and_nothing_before_it() -> None:
    sign = Clocked(rules())
    sign.feed(0.0, controller(online=True))
    assert sign.shown == []
    assert sign.wake_at is None
    sign.feed(0.5, meter(1_234_567))
    assert sign.shown == [(0.5, Show("$12,345.67", "meter", 0.5))]
    assert sign.wake_at is None  # nothing more to do until the next update
    sign.feed(0.6, meter(1_234_567))  # the same value: nothing to write
    sign.feed(1.0, meter(5))
    assert sign.texts() == ["$12,345.67", "$0.05"]


def test_other_pools_are_ignored() -> None:
    sign = Clocked(rules())
    sign.feed(0.0, meter(100, pool="emperor"))
    sign.feed(0.1, hit("p1", pool="emperor"))
    sign.feed(0.2, hit("p2", pool=None))
    assert sign.shown == []


def test_a_wager_refused_at_a_table_changes_nothing_on_the_sign() -> None:
    sign = Clocked(rules())
    sign.feed(0.0, meter(100))
    shown = list(sign.shown)
    refusal = WagerRefusal("2026-01-01T00:00:00.000Z", 9, "t1", "r1", 1, "bonus", 99, "too much")
    sign.feed(0.5, refusal)
    assert sign.shown == shown
    assert sign.wake_at is None


def test_a_moving_meter_is_rate_limited_and_its_latest_value_shown_within_250_ms() -> None:
    sign = Clocked(rules())  # min_interval_s = 0.25
    changes = [(i * 0.005, 100_000 + i) for i in range(200)]  # 200 updates in one second
    for at, cents in changes:
        sign.feed(at, meter(cents))
    sign.advance(5.0)

    times = [at for at, _show in sign.shown]
    assert all(b - a >= 0.25 - TOLERANCE for a, b in pairwise(times))
    assert len(sign.shown_between(0.0, 1.0)) <= 1 + 1 / 0.25
    last_at, last_cents = changes[-1]
    shown_at, show = sign.last()
    assert show.text == f"${last_cents // 100:,}.{last_cents % 100:02d}"
    assert shown_at - last_at <= 0.25 + TOLERANCE
    # While the meter moves, it is written at least every 250 ms.
    assert all(b - a <= 0.25 + TOLERANCE for a, b in pairwise(times))
    assert sign.wake_at is None


def test_a_slower_sign_gets_fewer_frames() -> None:
    sign = Clocked(rules(min_interval_s=0.5, alternate_s=1.0))
    for i in range(100):
        sign.feed(i * 0.01, meter(1000 + i))
    sign.advance(3.0)
    assert len(sign.shown_between(0.0, 1.0)) <= 1 + 1 / 0.5
    assert sign.texts()[-1] == "$10.99"


@given(
    interval=st.floats(min_value=0.02, max_value=1.0),
    gaps=st.lists(st.floats(min_value=0.0, max_value=0.6), min_size=1, max_size=60),
)
def test_property_never_faster_than_the_sign_and_every_change_shown_within_the_interval(
    interval: float, gaps: list[float]
) -> None:
    sign = Clocked(rules(min_interval_s=interval, alternate_s=1.0))
    at = 0.0
    arrivals: list[tuple[float, int]] = []
    for index, gap in enumerate(gaps):
        at += gap
        arrivals.append((at, index + 1))
        sign.feed(at, meter(index + 1))
    sign.advance(at + 10.0)

    times = [when for when, _show in sign.shown]
    assert all(b - a >= interval - 1e-6 for a, b in pairwise(times))
    # Every change is reflected (by itself or a newer value) within one interval.
    shown_values = [
        (when, int(show.text.replace("$", "").replace(".", ""))) for when, show in sign.shown
    ]
    for arrived, cents in arrivals:
        assert any(
            arrived - 1e-6 <= when <= arrived + interval + 1e-6 and value >= cents
            for when, value in shown_values
        ), (arrived, cents, shown_values)
    assert shown_values[-1][1] == len(gaps)


def test_latency_start_is_the_oldest_update_not_yet_shown() -> None:
    sign = Clocked(rules())
    sign.feed(0.0, meter(100))
    sign.feed(0.1, meter(200))
    sign.feed(0.2, meter(300))
    sign.advance(1.0)
    assert sign.shown == [(0.0, Show("$1.00", "meter", 0.0)), (0.25, Show("$3.00", "meter", 0.1))]


# --- JACKPOT ---------------------------------------------------------------------------------


def test_a_hit_shows_jackpot_within_a_second_then_the_new_meter() -> None:
    sign = Clocked(rules(jackpot_hold_s=10.0))
    sign.feed(0.0, meter(2_500_000))
    sign.feed(0.1, meter(2_500_100))  # held back by the rate limit until 0.25 ...
    sign.feed(0.2, hit("p1", table="T3", seat=2, cents=2_500_100))  # ... and overtaken
    sign.feed(0.2, meter(100_000))  # the reset to the seed queues behind JACKPOT
    sign.feed(3.0, meter(100_450))
    sign.advance(20.0)

    assert sign.shown == [
        (0.0, Show("$25,000.00", "meter", 0.0)),
        (0.25, Show("JACKPOT T3 SEAT 2 $25,001.00", "jackpot", 0.1)),
        (10.2, Show("$1,004.50", "meter", None)),  # no update behind it: no latency
    ]
    jackpot_at, _show = sign.shown[1]
    assert jackpot_at - 0.2 <= 1.0
    assert sign.wake_at is None


def test_a_hit_on_an_idle_sign_shows_at_once_and_its_hold_is_configurable() -> None:
    sign = Clocked(rules(jackpot_hold_s=3.0))
    sign.feed(0.0, meter(100_000))
    sign.feed(5.0, hit("p1", table="T1", seat=6, cents=750_000))
    assert sign.last() == (5.0, Show("JACKPOT T1 SEAT 6 $7,500.00", "jackpot", 5.0))
    assert sign.wake_at == 8.0
    sign.feed(6.0, hit("p1", table="T1", seat=6, cents=750_000))  # the same payout again
    sign.advance(8.0)
    assert sign.texts() == ["$1,000.00", "JACKPOT T1 SEAT 6 $7,500.00", "$1,000.00"]


def test_a_second_hit_during_the_hold_shows_at_once_and_both_take_turns() -> None:
    sign = Clocked(rules(jackpot_hold_s=10.0, alternate_s=2.0))
    sign.feed(0.0, meter(100_000))
    sign.feed(1.0, hit("p1", table="T1", seat=1, cents=200_000))
    sign.feed(4.0, hit("p2", table="T2", seat=5, cents=100_000))
    sign.advance(30.0)

    first, second = "JACKPOT T1 SEAT 1 $2,000.00", "JACKPOT T2 SEAT 5 $1,000.00"
    assert [(at, show.text) for at, show in sign.shown] == [
        (0.0, "$1,000.00"),
        (1.0, first),
        (4.0, second),  # the newest at once, not after the first one's hold
        (6.0, first),
        (8.0, second),
        (10.0, first),
        (11.0, second),  # the first hold ended at 11.0
        (14.0, "$1,000.00"),  # the second at 14.0
    ]


def test_jackpot_format_is_configurable() -> None:
    sign = Clocked(rules(jackpot_format="{pool} WIN {amount} T{table}/{seat:02d}"))
    sign.feed(0.0, hit("p1", table="7", seat=3, cents=123_456_789))
    assert sign.texts() == ["fortune WIN $1,234,567.89 T7/03"]


# --- CLOSED ----------------------------------------------------------------------------------


def test_a_closed_table_shows_closed_then_the_meter_when_it_reopens() -> None:
    sign = Clocked(rules(tables=frozenset({"T1", "T2"})))
    sign.feed(0.0, meter(100_000))
    sign.feed(1.0, table("T9", online=False))  # not over this sign
    sign.feed(2.0, table("T2", online=False))
    sign.feed(2.1, meter(100_050))  # the meter moves underneath; CLOSED stays
    sign.feed(3.0, table("T1", online=False))
    sign.feed(4.0, table("T2", online=True))  # T1 is still closed
    sign.feed(5.0, table("T1", online=True))
    sign.advance(10.0)
    assert [(at, show.text, show.kind) for at, show in sign.shown] == [
        (0.0, "$1,000.00", "meter"),
        (2.0, "CLOSED", "closed"),
        (5.0, "$1,000.50", "meter"),
    ]
    assert sign.sign.closed_tables == {}


def test_an_offline_controller_shows_closed_on_every_sign_and_back() -> None:
    sign = Clocked(rules())  # bound to no table
    sign.feed(0.0, meter(100_000))
    sign.feed(0.1, table("T1", online=False))  # tables not bound to it are ignored
    sign.feed(1.0, controller(online=False))
    assert sign.last() == (1.0, Show("CLOSED", "closed", 1.0))
    assert sign.sign.controller_down == "journal unavailable"
    sign.feed(1.1, controller(online=True))
    assert sign.wake_at == 1.25  # the rate limit holds the meter back a little
    sign.advance(2.0)
    assert sign.shown == [
        (0.0, Show("$1,000.00", "meter", 0.0)),
        (1.0, Show("CLOSED", "closed", 1.0)),
        (1.25, Show("$1,000.00", "meter", 1.1)),
    ]


def test_michigan_432_1841_a_wide_area_pool_closed_shows_why_then_the_meter_again() -> None:
    """docs/wide-area.md: the property's signs show why wide-area play is closed."""
    sign = Clocked(rules())
    sign.feed(0.0, meter(100_000))
    sign.feed(1.0, PoolUpdate(AT, 2, POOL, False, "central not heard for 60 s", epoch=0))
    sign.feed(1.1, PoolUpdate(AT, 2, "other", False, "another pool", epoch=0))  # not this sign's
    assert sign.last() == (1.0, Show("CLOSED central not heard for 60 s", "closed", 1.0))
    assert sign.sign.pool_closed == "central not heard for 60 s"
    sign.feed(2.0, PoolUpdate(AT, 3, POOL, True, "", epoch=0))
    sign.advance(3.0)
    assert sign.texts() == ["$1,000.00", "CLOSED central not heard for 60 s", "$1,000.00"]
    assert sign.sign.pool_closed is None


def test_closed_before_any_meter_and_a_custom_text() -> None:
    sign = Clocked(rules(closed_text="TABLE CLOSED"))
    sign.feed(0.0, controller(online=False))
    assert sign.texts() == ["TABLE CLOSED"]


def test_a_held_jackpot_is_finished_before_closed() -> None:
    sign = Clocked(rules(tables=frozenset({"T3"}), jackpot_hold_s=5.0))
    sign.feed(0.0, meter(100_000))
    sign.feed(1.0, hit("p1"))
    sign.feed(2.0, table("T3", online=False))
    sign.advance(10.0)
    assert [(at, show.text) for at, show in sign.shown] == [
        (0.0, "$1,000.00"),
        (1.0, "JACKPOT T3 SEAT 2 $5,000.00"),
        (6.0, "CLOSED"),
    ]


def test_alternate_mode_takes_turns_between_the_fault_and_the_meter() -> None:
    sign = Clocked(rules(tables=frozenset({"T1", "T2"}), closed_mode="alternate", alternate_s=2.0))
    sign.feed(0.0, meter(100_000))
    sign.feed(1.0, table("T2", online=False))
    sign.feed(2.0, meter(100_100))  # during the fault's turn: waits for the meter's turn
    sign.feed(3.5, meter(100_200))  # during the meter's turn: shown at once
    sign.feed(5.5, table("T1", online=False))  # the fault's text changes within its turn
    sign.feed(8.2, table("T1", online=True))
    sign.feed(9.5, table("T2", online=True))
    sign.advance(20.0)
    assert [(at, show.text, show.kind) for at, show in sign.shown] == [
        (0.0, "$1,000.00", "meter"),
        (1.0, "T2 CLOSED", "closed"),
        (3.0, "$1,001.00", "meter"),
        (3.5, "$1,002.00", "meter"),
        (5.0, "T2 CLOSED", "closed"),
        (5.5, "T1 T2 CLOSED", "closed"),
        (7.0, "$1,002.00", "meter"),
        (9.0, "T2 CLOSED", "closed"),
        (9.5, "$1,002.00", "meter"),
    ]
    assert sign.wake_at is None  # back to the plain meter: no more turns


def test_alternate_mode_with_the_controller_offline_and_no_meter_yet() -> None:
    sign = Clocked(rules(closed_mode="alternate", alternate_s=1.0))
    sign.feed(0.0, controller(online=False))
    sign.advance(5.0)
    assert sign.texts() == ["CLOSED"]  # nothing to alternate with yet
    assert sign.wake_at is None
    sign.feed(5.2, meter(4200))  # in a meter's turn (turns count from the fault)
    sign.advance(8.0)
    assert [(at, show.text) for at, show in sign.shown] == [
        (0.0, "CLOSED"),
        (5.2, "$42.00"),
        (6.0, "CLOSED"),
        (7.0, "$42.00"),
        (8.0, "CLOSED"),
    ]


# --- settings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_interval_s": 0.0}, "min_interval_s"),
        ({"min_interval_s": 1.5}, "within one second"),
        ({"jackpot_hold_s": 0.0}, "jackpot_hold_s"),
        ({"alternate_s": 0.1}, "alternate_s"),
        ({"closed_mode": "blink"}, "closed_mode"),
        ({"closed_text": "  "}, "closed_text"),
        ({"jackpot_format": "JACKPOT {player}"}, "'player'"),
        ({"jackpot_format": "JACKPOT {}"}, "may name"),
        ({"jackpot_format": "JACKPOT {table.upper}"}, "may name"),
        ({"jackpot_format": "JACKPOT {amount:d}"}, "jackpot_format"),
        ({"jackpot_format": "JACKPOT {table"}, "jackpot_format"),
    ],
)
def test_rules_that_cannot_work_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(SignRulesError, match=message):
        rules(**fields)


def test_wake_ups_are_never_in_a_busy_loop() -> None:
    # Wake-ups a hair early (the loop's clock resolution) must not ask again for the same time.
    sign = SignBehaviour(rules())
    sign.update(meter(100), 0.0)
    step = sign.update(meter(200), 0.1)
    assert step.wake_at == 0.25
    early = sign.wake(0.25 - 1e-9)
    assert early.shows == (Show("$2.00", "meter", 0.1),)
    assert early.wake_at is None
    assert math.isclose(sign.last_shown_at or 0.0, 0.25, abs_tol=1e-6)


# --- order: a zombie leader cannot roll the sign back -------------------------------------


def test_an_older_meter_than_the_one_shown_is_dropped_and_counted() -> None:
    sign = Clocked(rules())
    sign.feed(0.0, MeterUpdate(AT, 4_990, POOL, 250_00, 0, 0, 100_000, epoch=2))
    # A paused former leader wakes and repeats its last meter: a higher row, an older epoch.
    sign.feed(1.0, MeterUpdate(AT, 5_000, POOL, 240_00, 0, 0, 100_000, epoch=1))
    sign.feed(2.0, MeterUpdate(AT, 4_980, POOL, 230_00, 0, 0, 100_000, epoch=2))
    sign.advance(5.0)
    assert sign.texts() == ["$250.00"]
    assert sign.sign.order.stale == 2
    sign.feed(6.0, MeterUpdate(AT, 4_991, POOL, 251_00, 0, 0, 100_000, epoch=2))
    sign.advance(7.0)
    assert sign.texts() == ["$250.00", "$251.00"]


def test_an_older_table_state_does_not_close_or_open_the_sign() -> None:
    sign = Clocked(rules(tables=frozenset({"T1"})))
    sign.feed(0.0, meter(100_00))
    sign.feed(0.5, TableUpdate(AT, 30, "T1", False, "heartbeat lost", epoch=3))
    sign.feed(1.0, TableUpdate(AT, 29, "T1", True, "back", epoch=3))
    sign.feed(1.5, TableUpdate(AT, 0, "T1", True, "controller recovered", epoch=2))
    sign.advance(3.0)
    assert sign.texts() == ["$100.00", "CLOSED"]
    assert sign.sign.order.stale == 2
