"""The table's gate: closed until heard, closed again after closed_after_s of silence."""

from __future__ import annotations

from controller.agent.gate import (
    TABLE_CLOSED,
    TableGate,
    chips_after,
    lock_refusal,
    wager_refusal,
)
from controller.agent.resend import ResendDelay
from controller.events import BetSensed, BetsLocked


def bet(spot: str, *, present: bool = True) -> BetSensed:
    return BetSensed("t1/bs/1", "2026-01-01T00:00:00Z", "t1", "bs", 1, 3, spot, present, 100)


def test_the_table_starts_closed_and_opens_when_the_controller_is_heard() -> None:
    gate = TableGate(closed_after_s=10.0)
    assert not gate.is_open(100.0)
    assert "yet" in gate.why_closed(100.0)
    gate.heard(100.0)
    assert gate.is_open(100.0)
    assert gate.is_open(109.9)
    assert gate.closes_at() == 110.0


def test_silence_for_closed_after_s_closes_the_table_until_heard_again() -> None:
    gate = TableGate(closed_after_s=10.0)
    gate.heard(100.0)
    assert not gate.is_open(110.0)
    assert "10.0 s" in gate.why_closed(110.0)
    gate.heard(111.0)
    assert gate.is_open(111.0)


def test_no_progressive_wager_is_taken_while_closed() -> None:
    assert wager_refusal(bet("progressive"), table_open=False) == TABLE_CLOSED
    assert wager_refusal(bet("progressive"), table_open=True) is None


def test_a_chip_leaving_and_the_odds_spots_go_on_while_closed() -> None:
    assert wager_refusal(bet("progressive", present=False), table_open=False) is None
    assert wager_refusal(bet("bonus"), table_open=False) is None


def test_resends_back_off_to_the_cap_and_start_again_on_progress() -> None:
    delay = ResendDelay(initial_s=0.5, cap_s=2.0)
    assert [delay.resent() for _ in range(4)] == [0.5, 1.0, 2.0, 2.0]
    delay.progressed()
    assert delay.current_s == 0.5


def lock() -> BetsLocked:
    return BetsLocked("t1/dealer/1", "2026-01-01T00:00:00Z", "t1", "dealer", 1, "r1")


def test_the_progressive_chips_on_the_spots_are_kept_until_the_lock() -> None:
    chips = chips_after(frozenset(), bet("progressive"))
    assert chips == {3}
    assert chips_after(chips, bet("bonus")) == {3}  # the odds spots are not kept
    assert chips_after(chips, bet("progressive", present=False)) == frozenset()
    assert chips_after(chips, lock()) == frozenset()  # locked: the ledger starts again too


def test_a_lock_while_closed_waits_until_the_progressive_chips_are_down() -> None:
    # A chip placed while open would otherwise become a wager at a lock made while closed.
    assert lock_refusal(frozenset({3}), table_open=False) == TABLE_CLOSED
    assert lock_refusal(frozenset(), table_open=False) is None
    assert lock_refusal(frozenset({3}), table_open=True) is None
