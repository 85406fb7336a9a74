"""Simulated players bet within each table's wager limits, so the demo and the lab refuse none."""

from __future__ import annotations

from controller.events import SpotLimits
from controller.ledger.settlement import Spot, TableRules
from controller.service.wiring import _chips_within_limits
from drivers.simulator import ODDS_CHIPS


def test_chips_below_the_minimum_or_above_the_maximum_are_never_bet() -> None:
    limits = {Spot.BONUS: SpotLimits(500, 50_000), Spot.ACE_HIGH: SpotLimits(500, 1_000)}
    rules = TableRules("t1", wager_limits=limits)
    assert _chips_within_limits(rules) == (500, 500, 1000)


def test_a_table_whose_limits_no_chip_fits_gets_its_minimum() -> None:
    rules = TableRules("t1", wager_limits={Spot.BONUS: SpotLimits(5_000, 10_000)})
    assert _chips_within_limits(rules) == (5_000,)


def test_a_table_without_limits_gets_every_chip() -> None:
    assert _chips_within_limits(TableRules("t1")) == ODDS_CHIPS
