"""Fairness evidence for the sealed trigger: uniform to the cent, and no table favoured.

docs/rules.md, "Mystery levels: the sealed trigger". The draws come from the operating
system's CSPRNG and are never seeded, so each run sees different triggers; the tests are still
deterministic in outcome because every threshold is a proven bound whose false-failure
probability is at most :data:`ALPHA` (one in a billion), however the draws fall:

* uniformity: the Kolmogorov-Smirnov distance between 100,000 triggers' empirical CDF and the
  uniform CDF of the cents of ``[floor, ceiling)``. The Dvoretzky-Kiefer-Wolfowitz inequality
  with Massart's constant, ``P(D_n > eps) <= 2 exp(-2 n eps^2)``, holds for every n and every
  distribution (conservatively for a discrete one), so ``eps = sqrt(ln(2 / ALPHA) / (2 n))``
  (about 0.0104 at n = 100,000) fails a correct draw at most once in a billion runs. The same
  test rejects a draw with modulo bias (``getrandbits(20) % span``) by a distance of 0.17;
* every cent of a small range, floor and last cent included, drawn at its share, never the
  ceiling: Hoeffding's inequality per cent with a union bound, at the same ALPHA overall;
* no table favoured: in a simulation of eight tables of different wagers contributing in turn
  at a rate of 1/30 (fractions of a cent carried), each table's share of 100,000 hits is its
  share of the cents its contributions cross (Hoeffding per table, union bound, ALPHA
  overall), and that share is its share of the wagers to within the cent's granularity
  (Mich. Admin. Code R 432.1841(2): an equal chance for each cent wagered).
"""

from __future__ import annotations

import bisect
import math
import secrets
from collections import Counter
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from controller.mystery.core import Meter, draw_trigger, first_reaching

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

ALPHA: Final = 1e-9
"""The false-failure probability each test allows (a proven bound, not an estimate)."""
DRAWS: Final = 100_000


def dkw_epsilon(n: int, alpha: float = ALPHA) -> float:
    """The KS distance a correct draw of ``n`` exceeds with probability at most ``alpha``."""
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def hoeffding_epsilon(n: int, cells: int, alpha: float = ALPHA) -> float:
    """The deviation of any of ``cells`` frequencies exceeded with probability <= ``alpha``."""
    return math.sqrt(math.log(2 * cells / alpha) / (2 * n))


def ks_distance(samples: Sequence[int], floor: int, ceiling: int) -> float:
    """The KS distance sup |F_n - F| to the uniform distribution on the cents of the range."""
    span, n = ceiling - floor, len(samples)
    ordered = sorted(samples)
    counts = Counter(ordered)
    distance, below = 0.0, 0
    for value in sorted(counts):
        # Just below ``value`` and at it: F_n is a step, F a step of 1/span at each cent.
        distance = max(distance, abs(below / n - (value - floor) / span))
        below += counts[value]
        distance = max(distance, abs(below / n - (value - floor + 1) / span))
    return distance


FLOOR, CEILING = 250_000, 1_000_000
"""$2,500.00 to $10,000.00: a span of 750,000 cents, not a power of two (where bias shows)."""


def test_triggers_are_uniform_to_the_cent_at_a_false_failure_rate_of_one_in_a_billion() -> None:
    triggers = [draw_trigger(FLOOR, CEILING) for _ in range(DRAWS)]
    assert all(FLOOR <= trigger < CEILING for trigger in triggers)
    assert ks_distance(triggers, FLOOR, CEILING) <= dkw_epsilon(DRAWS)


def test_the_same_test_rejects_a_draw_with_modulo_bias() -> None:
    def biased() -> int:  # what draw_trigger must never be
        return FLOOR + secrets.randbits(20) % (CEILING - FLOOR)

    triggers = [biased() for _ in range(DRAWS)]
    assert ks_distance(triggers, FLOOR, CEILING) > 10 * dkw_epsilon(DRAWS)


def test_every_cent_of_the_range_floor_and_last_cent_included_is_drawn_at_its_share() -> None:
    floor, span = 1_000, 10
    counts = Counter(draw_trigger(floor, floor + span) for _ in range(DRAWS))
    assert set(counts) == set(range(floor, floor + span))  # the floor in, the ceiling out
    epsilon = hoeffding_epsilon(DRAWS, span)
    assert all(abs(count / DRAWS - 1 / span) <= epsilon for count in counts.values())


WAGERS: Final = (500, 1_000, 2_500, 500, 10_000, 2_000, 700, 1_300)
"""Eight tables' wagers in cents, in the order they contribute each round."""
RATE: Final = Fraction(1, 30)
ROUNDS: Final = 600
LEVEL_FLOOR: Final = 100_000
LEVEL_CEILING: Final = LEVEL_FLOOR + int(sum(WAGERS) * RATE * ROUNDS)
"""The ceiling the 600 rounds reach exactly: every cent of the range is crossed by someone."""


def contributions() -> tuple[list[Meter], list[int]]:
    """The level's meter after each contribution of the rounds, and the table of each."""
    meters, tables, total = [], [], Fraction(LEVEL_FLOOR)
    for _ in range(ROUNDS):
        for table, wager in enumerate(WAGERS):
            total += wager * RATE
            cents = math.floor(total)
            fraction = total - cents
            meters.append(Meter(cents, fraction.numerator, fraction.denominator))
            tables.append(table)
    assert meters[-1] == Meter(LEVEL_CEILING)
    return meters, tables


def winners(draw: Callable[[], int], hits: int) -> tuple[Counter[int], list[int]]:
    """Each table's hits over ``hits`` fresh draws, and each table's cents of the range."""
    meters, tables = contributions()
    cents = [meter.cents for meter in meters]
    crossed = Counter(
        tables[bisect.bisect_left(cents, c)] for c in range(LEVEL_FLOOR, LEVEL_CEILING)
    )
    won: Counter[int] = Counter()
    for number in range(hits):
        trigger = draw()
        first = bisect.bisect_left(cents, trigger)  # the first meter at or past the trigger
        if number < 100:  # the rule the journal is checked by, on a sample
            assert first_reaching(meters, trigger) == first
        won[tables[first]] += 1
    return won, [crossed[table] for table in range(len(WAGERS))]


def test_no_table_is_favoured_each_wins_its_share_of_the_cents_wagered() -> None:
    won, crossed = winners(lambda: draw_trigger(LEVEL_FLOOR, LEVEL_CEILING), DRAWS)
    span, wagered = LEVEL_CEILING - LEVEL_FLOOR, sum(WAGERS)
    epsilon = hoeffding_epsilon(DRAWS, len(WAGERS))
    for table, wager in enumerate(WAGERS):
        share = crossed[table] / span
        # Its cents of the range are its wagers' share, but for the carried fractions: each of
        # its ROUNDS contributions crosses the whole cents below it, within one cent.
        assert abs(share - wager / wagered) <= ROUNDS / span
        assert abs(won[table] / DRAWS - share) <= epsilon, (table, won[table], share)
