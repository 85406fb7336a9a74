"""A mystery level's expected cost per wager, against cycles played out one wager at a time.

Each trigger of a small range is played out by stepping the meter a contribution at a time (the
hit is the first contribution whose meter reaches the trigger, docs/rules.md § 10); the mean over
the equally likely triggers of what each cycle pays, spills and lasts is the exact expectation,
computed without the closed forms of controller/analyzer/mystery.py.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.analyzer.mystery import MysteryCost, NotMysteryError, floor_sum
from controller.rules.paytable import LevelTerms


def played_out(seed: int, ceiling: int, contribution: Fraction) -> tuple[Fraction, ...]:
    """(E[trigger], E[wagers], E[past the trigger]) over every trigger in [seed, ceiling)."""
    paid = wagers = spilt = Fraction(0)
    for trigger in range(seed, ceiling):
        meter, count = Fraction(seed), 0
        while True:
            meter += contribution
            count += 1
            if meter >= trigger:
                break
        paid += trigger
        wagers += count
        spilt += meter - trigger
    triggers = ceiling - seed
    return paid / triggers, wagers / triggers, spilt / triggers


@pytest.mark.parametrize(
    ("seed", "ceiling", "rate", "wager"),
    [
        (100, 160, Fraction(1, 30), 500),  # 16 2/3 cents a wager, as docs/rules.md § 10
        (1_000, 1_037, Fraction(3, 100), 500),  # 15 cents: whole cents
        (50, 51, Fraction(1, 100), 2_500),  # one trigger, at the seed
        (250, 400, Fraction(7, 1000), 100),  # 0.7 cents: many wagers a cent
    ],
)
def test_the_cost_of_a_mystery_level_equals_its_cycles_played_out(
    seed: int, ceiling: int, rate: Fraction, wager: int
) -> None:
    level = LevelTerms("grand", seed, rate, must_hit_by_cents=ceiling)
    cost = MysteryCost(level, wager)
    trigger, wagers, spilt = played_out(seed, ceiling, rate * wager)
    assert cost.expected_trigger_cents == trigger == Fraction(seed + ceiling - 1, 2)
    assert cost.expected_wagers_per_cycle == wagers
    assert cost.paid_rate == trigger / (wagers * wager)
    assert cost.past_trigger_rate == spilt / (wagers * wager)
    # Every contributed cent and every seed is paid: at the hit or past the trigger.
    assert cost.cost_rate == rate + Fraction(seed) / (wagers * wager)
    assert cost.cost_rate == cost.paid_rate + cost.past_trigger_rate
    approximate = cost.approximate_wagers_per_cycle
    assert approximate <= cost.expected_wagers_per_cycle <= approximate + 1


def test_floor_sum_counts_the_lattice_points() -> None:
    for count in range(30):
        for modulus in range(1, 9):
            for step in range(12):
                for offset in range(12):
                    expected = sum((step * i + offset) // modulus for i in range(count))
                    assert floor_sum(count, modulus, step, offset) == expected


def test_a_level_hands_win_has_no_mystery_cost() -> None:
    with pytest.raises(NotMysteryError, match="'major' has no must-hit-by amount"):
        MysteryCost(LevelTerms("major", 100_000, Fraction(3, 100)), 500)
