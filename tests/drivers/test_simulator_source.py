"""The simulator as a registered source: simulated players bet what their table takes.

The demo and a lab's soak run refuse no simulated bet: each table's offer (seats, spots, wager
limits; docs/rules.md § 8) comes from its configuration through the service
(:func:`controller.service.drivers.offer_of`), and the players' odds chips stay within every
odds spot's limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.config_files import edited, load

from controller.plugins import TableOffer
from controller.rules.spots import Spot
from controller.service.drivers import offer_of
from drivers.simulator import ODDS_CHIPS
from drivers.simulator_source import SimulatorSettings, chips_within, plan_for

if TYPE_CHECKING:
    from pathlib import Path


def offer(limits: tuple[int, int] | None) -> TableOffer:
    return TableOffer("t1", 6, frozenset({Spot.BONUS}), 10.0, odds_limits_cents=limits)


def test_chips_below_the_minimum_or_above_the_maximum_are_never_bet() -> None:
    assert chips_within(offer((500, 1_000))) == (500, 500, 1000)


def test_a_table_whose_limits_no_chip_fits_gets_its_minimum() -> None:
    assert chips_within(offer((5_000, 10_000))) == (5_000,)


def test_a_table_without_limits_gets_every_chip() -> None:
    assert chips_within(offer(None)) == ODDS_CHIPS


def test_the_offer_takes_the_narrowest_limits_of_the_odds_spots(tmp_path: Path) -> None:
    text = edited(
        'bonus = "fortune-1"\n',
        'bonus = "fortune-1"\nace_high = "ace-high-1"\nseats = 5\n'
        'wager_limits = { bonus = { minimum = "$10" }, ace_high = { maximum = "$200" } }\n',
    )
    table = load(tmp_path, text).tables[0]
    found = offer_of(table)
    assert found.odds_limits_cents == (1_000, 20_000)
    assert found.spots == {Spot.BONUS, Spot.ACE_HIGH, Spot.PROGRESSIVE}
    assert (found.seats, found.progressive_wager_cents) == (5, 100)


def test_the_plan_bets_only_the_spots_the_table_offers() -> None:
    settings = SimulatorSettings(occupancy=0.5, bet_probability=0.25)
    plan = plan_for(offer((500, 1_000)), settings)
    assert (plan.bonus, plan.ace_high, plan.insurance, plan.dynasty) == (True, False, False, False)
    assert plan.progressive_wager_cents is None
    assert (plan.occupancy, plan.bet_probability) == (0.5, 0.25)
    assert plan.bonus_amounts == (500, 500, 1000)
