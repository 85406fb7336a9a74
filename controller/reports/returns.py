"""Actual return against theoretical, per table and per pool, with the chance of the sample.

For each group of settled wagers (a table's spot, a table's every spot, a pool's progressive
wagers across its tables) the report gives, exactly:

* **actual return**: what the wagers paid back (win plus the wager returned, Envy apart)
  over what they staked;
* **theoretical return**: the exact analyzer's return of each wager's paytable (docs/analyzer.md)
  *at the meter the wager was played at*, weighted by the stake: sum(w_i R_i(M_i)) / sum(w_i).
  A progressive paytable's return R(M) rises with the meter, so a pool played mostly at high
  meters has a higher theoretical than its seed's: the return at one meter would mislead;
* **the margin of chance**: ``Z`` standard errors of the actual return under the paytables'
  exact distributions, sqrt(sum(w_i^2 var_i)) / sum(w_i), with var_i the variance per unit
  staked of wager i's paytable at its meter. A few thousand progressive wagers have a margin
  of tens of points: one top hit moves the actual return far, and that is chance, not a fault.

**The review flag.** Ohio reviews each table's actual against its theoretical payout percentage
and investigates a deviation over 4 % (Ohio Adm. Code 3772-10-08(A)). The report reads the 4 %
as percentage points of return (``--deviation``), and says, per group:

* ``ok``: the deviation is within the threshold;
* ``within chance``: it is over the threshold but inside the margin: the sample is too small
  to tell (the false alarm the margin is there to stop);
* ``REVIEW``: it is over the threshold and outside the margin: investigate.

The margin is a normal approximation (a sum of many independent wagers); at ``Z`` = 3 a group
that plays exactly to its paytables is flagged ``REVIEW`` about 3 times in 1,000 reviews. A
wager whose return is mostly one rare pay (a progressive's top hit, about 1 in 676,000 hands)
is far from normal over fewer wagers than its odds: one hit in such a group is rightly an
outlier (it happens to about n/676,000 of the groups of n wagers) and is flagged, so each
group counts its meter hits beside its verdict, for the review to see at once. Where
no exact analysis exists (a paytable the journal does not carry), the group says so and gets no
verdict. The cap of a maximum payout (58 Pa. Code § 688a.12(e)) is not modelled: a capped pay
makes the actual return lower than the theoretical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from controller.analyzer.report import Analyzer
from controller.rules.paytable import Odds, Push, pay_value
from controller.rules.paytable_files import PaytableError, parse_paytable

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from controller.analyzer.progressive import PayClass
    from controller.analyzer.report import Analysis
    from controller.reports.played import PlayedWager
    from controller.rules.paytable import ProgressiveTerms

Z: Final = 3
"""Standard errors in the margin of chance."""
DEVIATION_POINTS: Final = Fraction(4)
"""Ohio Adm. Code 3772-10-08(A)'s 4 %, read as points of return."""
OK, WITHIN_CHANCE, REVIEW, UNANALYZED = "ok", "within chance", "REVIEW", "no analysis"


@dataclass(frozen=True, slots=True)
class Moments:
    """A wager's expected return and its variance, per unit staked."""

    mean: Fraction
    variance: Fraction


class Theory:
    """The exact moments of each paytable the journal carries, analyzed once each."""

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        self._analyzer = analyzer or Analyzer()
        self._analyses: dict[str, Analysis | None] = {}
        self._moments: dict[
            tuple[str, Fraction | None, tuple[tuple[str, Fraction], ...]], Moments | None
        ] = {}

    def analysis(self, text: str, name: str) -> Analysis | None:
        """The paytable's exact analysis, or None if its text is not a paytable."""
        if text not in self._analyses:
            try:
                paytable = parse_paytable(text, name or "journal")
            except PaytableError:
                self._analyses[text] = None
            else:
                self._analyses[text] = self._analyzer.analyze(paytable)
        return self._analyses[text]

    def moments(self, wager: PlayedWager) -> Moments | None:
        """The wager's mean and variance per unit staked, at its meter for a progressive.

        On a multi-level pool, at every level's meter (docs/analyzer.md, "Levels").
        """
        if not wager.paytable_text:
            return None
        key = (wager.paytable_text, wager.meter, wager.level_meters)
        if key not in self._moments:
            analysis = self.analysis(wager.paytable_text, wager.paytable)
            self._moments[key] = (
                None if analysis is None else _moments(analysis, wager.meter, wager.level_meters)
            )
        return self._moments[key]


def _paid_moments(
    analysis: Analysis,
    classes: tuple[PayClass, ...],
    terms: ProgressiveTerms,
    meters: Fraction | Mapping[str, Fraction],
) -> Moments:
    """A progressive paytable's moments, each hand paid on its best row at its level's meter.

    ``meters``: the one meter of a one-level paytable, or each level's of a multi-level one. A
    mystery level is won by no hand: it is in no row, and its hits are not a wager's return
    (controller/reports/played.py).
    """
    paytable = analysis.paytable
    returned = terms.wager_cents if terms.original_wager_returned else 0
    mean = second = Fraction(0)
    for pay_class in classes:
        row = paytable.best_of(pay_class.rows, meters)
        if row is None:
            continue
        value = (pay_value(row.pays, paytable.meter_of(row, meters)) + returned) / terms.wager_cents
        mean += pay_class.count * value
        second += pay_class.count * value * value
    mean, second = mean / analysis.total, second / analysis.total
    return Moments(mean, second - mean * mean)


def _moments(
    analysis: Analysis, meter: Fraction | None, levels: tuple[tuple[str, Fraction], ...] = ()
) -> Moments | None:
    if (figures := analysis.levelled) is not None:
        return (
            _paid_moments(analysis, figures.classes, figures.terms, dict(levels))
            if levels
            else None
        )
    progressive = analysis.progressive
    if progressive is not None:
        if meter is None:
            return None
        return _paid_moments(analysis, progressive.classes, progressive.terms, meter)
    mean = second = Fraction(0)
    for line in analysis.lines:
        pays = line.row.pays
        if isinstance(pays, Odds):
            value = Fraction(pays.to_one + 1)
        elif isinstance(pays, Push):
            value = Fraction(1)
        else:  # a dollar pay is a progressive paytable's only
            return None
        mean += line.probability * value
        second += line.probability * value * value
    return Moments(mean, second - mean * mean)


@dataclass(slots=True)
class ReturnGroup:
    """One group's wagers, summed exactly."""

    wagers: int = 0
    staked_cents: int = 0
    paid_back_cents: int = 0
    expected: Fraction = Fraction(0)
    """sum(w_i * mean_i), in cents."""
    variance: Fraction = Fraction(0)
    """sum(w_i^2 * var_i), in cents squared."""
    meter_hits: int = 0
    """Wagers paid from a meter: a group's deviation is mostly theirs (docs/operations.md)."""
    unanalyzed: int = 0
    """Wagers with no exact analysis (their paytable's text is not in the journal)."""
    paytables: set[str] = field(default_factory=set)

    def add(self, wager: PlayedWager, moments: Moments | None) -> None:
        """Count one settled wager."""
        self.wagers += 1
        self.staked_cents += wager.wager_cents
        self.paid_back_cents += wager.paid_back_cents
        self.meter_hits += wager.from_meter_cents > 0
        if wager.paytable:
            self.paytables.add(wager.paytable)
        if moments is None:
            self.unanalyzed += 1
            return
        self.expected += wager.wager_cents * moments.mean
        self.variance += wager.wager_cents * wager.wager_cents * moments.variance

    @property
    def actual(self) -> Fraction | None:
        """Paid back over staked."""
        return Fraction(self.paid_back_cents, self.staked_cents) if self.staked_cents else None

    @property
    def theoretical(self) -> Fraction | None:
        """The stake-weighted exact return at the meters played."""
        if not self.staked_cents or self.unanalyzed:
            return None
        return self.expected / self.staked_cents

    @property
    def standard_error(self) -> float | None:
        """One standard error of the actual return (a fraction of the stake)."""
        if not self.staked_cents or self.unanalyzed:
            return None
        return math.sqrt(self.variance) / self.staked_cents

    def verdict(self, deviation_points: Fraction = DEVIATION_POINTS, z: float = Z) -> str:
        """``ok``, ``within chance`` or ``REVIEW`` (see the module's docstring)."""
        actual, theoretical, error = self.actual, self.theoretical, self.standard_error
        if actual is None or theoretical is None or error is None:
            return UNANALYZED
        deviation = abs(actual - theoretical)
        if deviation * 100 <= deviation_points:
            return OK
        return REVIEW if deviation > z * error else WITHIN_CHANCE


@dataclass(frozen=True, slots=True)
class Returns:
    """Every group of a period."""

    by_table_spot: dict[tuple[str, str], ReturnGroup]
    by_table: dict[str, ReturnGroup]
    by_pool: dict[str, ReturnGroup]


def returns(wagers: Iterable[PlayedWager], theory: Theory | None = None) -> Returns:
    """Group the period's wagers by table and spot, by table, and by pool."""
    theory = theory or Theory()
    by_table_spot: dict[tuple[str, str], ReturnGroup] = {}
    by_table: dict[str, ReturnGroup] = {}
    by_pool: dict[str, ReturnGroup] = {}
    for wager in wagers:
        moments = theory.moments(wager)
        by_table_spot.setdefault((wager.table_id, wager.spot), ReturnGroup()).add(wager, moments)
        by_table.setdefault(wager.table_id, ReturnGroup()).add(wager, moments)
        if wager.pool_id is not None:
            by_pool.setdefault(wager.pool_id, ReturnGroup()).add(wager, moments)
    return Returns(by_table_spot, by_table, by_pool)
