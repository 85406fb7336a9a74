"""A progressive paytable's figures against the meter: the return, crossovers, break-even.

A hand is paid on its highest-paying line *at the meter* (docs/rules.md § 4.2), so the return
per unit wagered is piecewise linear in the meter ``M`` (in cents), ``R(M) = a + b * M``, and
changes slope only where hands move to a line with more of the meter (a :class:`Crossover`).
Every figure is an exact :class:`fractions.Fraction`; docs/analyzer.md says what each means.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.rules.paytable import meter_percent, pay_value

if TYPE_CHECKING:
    from controller.rules.paytable import Paytable, PaytableLine, ProgressiveTerms


@dataclass(frozen=True, slots=True)
class PayClass:
    """Hands that qualify for the same rows of a paytable, and how many there are."""

    rows: tuple[PaytableLine, ...]
    count: int


@dataclass(frozen=True, slots=True)
class Crossover:
    """A meter above which some hands are paid on another, meter-paid, line."""

    meter_cents: Fraction
    count: int
    below: PaytableLine
    above: PaytableLine


@dataclass(frozen=True, slots=True)
class ProgressiveFigures:
    """Meter-dependent figures of a progressive paytable (money in cents, rates per unit).

    A hand is paid on its highest-paying line at the meter, so the return is piecewise linear
    in the meter; it changes slope only at a :class:`Crossover`. Figures named "at seed" take
    the lines as they are paid at the meter seed.
    """

    paytable: Paytable
    terms: ProgressiveTerms
    total: int
    classes: tuple[PayClass, ...]

    def _coefficients(self, meter_cents: Fraction | int) -> tuple[Fraction, Fraction]:
        """(a, b) of the linear piece of R(M) = a + b * M in force at a meter."""
        base = share = Fraction(0)
        returned = self.terms.wager_cents if self.terms.original_wager_returned else 0
        for pay_class in self.classes:
            row = self.paytable.best_of(pay_class.rows, meter_cents)
            if row is None:
                continue
            base += pay_class.count * (pay_value(row.pays, 0) + returned)
            share += pay_class.count * meter_percent(row.pays)
        scale = self.total * self.terms.wager_cents
        return base / scale, share / scale

    def return_at(self, meter_cents: Fraction | int) -> Fraction:
        """R(M): the return per unit wagered when the meter shows ``meter_cents``."""
        base, share = self._coefficients(meter_cents)
        return base + share * meter_cents

    @property
    def return_at_seed(self) -> Fraction:
        """R at the meter seed."""
        return self.return_at(self.terms.meter_seed_cents)

    @property
    def return_base(self) -> Fraction:
        """The a of R(M) = a + b * M at the seed: odds, fixed pays and returned wagers."""
        return self._coefficients(self.terms.meter_seed_cents)[0]

    @property
    def return_per_meter_cent(self) -> Fraction:
        """The b of R(M) = a + b * M at the seed: the return added by each cent on the meter."""
        return self._coefficients(self.terms.meter_seed_cents)[1]

    @property
    def crossovers(self) -> tuple[Crossover, ...]:
        """Meters at which hands change line, from the seed up, merged per pair of lines."""
        found: dict[tuple[Fraction, PaytableLine, PaytableLine], int] = {}
        for pay_class in self.classes:
            for meter in self._switch_points(pay_class.rows):
                below = self.paytable.best_of(pay_class.rows, meter - 1)
                above = self.paytable.best_of(pay_class.rows, meter + 1)
                if below is not None and above is not None and below != above:
                    key = (meter, below, above)
                    found[key] = found.get(key, 0) + pay_class.count
        return tuple(
            Crossover(meter, count, below, above)
            for (meter, below, above), count in sorted(found.items(), key=lambda item: item[0][0])
        )

    def _switch_points(self, rows: tuple[PaytableLine, ...]) -> list[Fraction]:
        """Meters above the seed where two of the rows pay the same and their order flips."""
        seed = self.terms.meter_seed_cents
        points = []
        for index, first in enumerate(rows):
            for second in rows[index + 1 :]:
                slope = meter_percent(first.pays) - meter_percent(second.pays)
                if slope:
                    meter = (pay_value(second.pays, 0) - pay_value(first.pays, 0)) / slope
                    if meter > seed:
                        points.append(meter)
        return points

    @property
    def break_even_meter_cents(self) -> Fraction | None:
        """The lowest meter at which the wager returns 100 %, if the meter pays anything.

        R never falls as the meter rises, so the pieces are searched from the seed up; if R is
        already 100 % at the seed, the seed's piece is extended down to where it crosses 100 %.
        """
        starts = [Fraction(self.terms.meter_seed_cents)]
        starts += sorted({crossover.meter_cents for crossover in self.crossovers})
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else None
            inside = start + 1 if end is None else (start + end) / 2
            base, share = self._coefficients(inside)
            if not share:
                continue
            meter = (1 - base) / share
            if end is None or meter < end:
                return meter
        return None

    def _meter_lines_at(self, meter_cents: Fraction | int) -> tuple[Fraction, Fraction]:
        """(probability of a 100 % hit, return per meter cent from partial hits) at a meter."""
        top = partial = Fraction(0)
        for pay_class in self.classes:
            row = self.paytable.best_of(pay_class.rows, meter_cents)
            percent = meter_percent(row.pays) if row is not None else Fraction(0)
            if percent == 1:
                top += pay_class.count
            elif percent:
                partial += pay_class.count * percent
        return top / self.total, partial / (self.total * self.terms.wager_cents)

    @property
    def _beyond_crossovers(self) -> Fraction:
        """A meter above every crossover, where the lines paid no longer change."""
        crossovers = self.crossovers
        last = crossovers[-1].meter_cents if crossovers else Fraction(self.terms.meter_seed_cents)
        return last + 1

    @property
    def top_hit_probability(self) -> Fraction:
        """Probability that a hand is paid 100 % of the meter (lines as paid at the seed)."""
        return self._meter_lines_at(self.terms.meter_seed_cents)[0]

    @property
    def wagers_per_top_hit(self) -> Fraction | None:
        """Expected wagers between hits that pay 100 % of the meter."""
        top = self.top_hit_probability
        return 1 / top if top else None

    @property
    def contribution_rate(self) -> Fraction:
        """Rate of progression plus reserve rate: the part of each wager set aside."""
        return self.terms.rate_of_progression + self.terms.reserve_rate

    @property
    def seed_cost_rate(self) -> Fraction:
        """Reseeding after 100 % hits, per unit wagered: seed x P(top hit) / wager."""
        seed = self.terms.meter_seed_cents
        return self.top_hit_probability * seed / self.terms.wager_cents

    @property
    def long_run_return(self) -> tuple[Fraction, Fraction]:
        """Bounds of the long-run return with every contribution paid out (docs/analyzer.md).

        Over a long run the meters pay out all progression plus every seed put up, and the
        house pays the rest: long-run return = fixed part + rate of progression + reseeding
        per unit wagered. Reseeding costs the seed after each 100 % hit, and after a partial
        hit at most what the hit took below the seed (at most percent x seed). As the meter
        rises, hands only move to lines with a larger share of the meter (see
        :attr:`crossovers`), so the fixed part is largest at the seed and smallest beyond the
        last crossover, and the meter lines the other way round; the bounds take the extremes.
        With no partial-meter lines and no crossover the two coincide.
        """
        seed = self.terms.meter_seed_cents
        per_wager = Fraction(seed, self.terms.wager_cents)
        progression = self.terms.rate_of_progression
        low_meter, high_meter = Fraction(seed), self._beyond_crossovers
        fixed = [self._coefficients(meter)[0] for meter in (low_meter, high_meter)]
        lines = [self._meter_lines_at(meter) for meter in (low_meter, high_meter)]
        least_top = min(top for top, _ in lines)
        most_top = max(top for top, _ in lines)
        most_partial = max(partial for _, partial in lines)
        low = min(fixed) + progression + least_top * per_wager
        high = max(fixed) + progression + most_top * per_wager + most_partial * seed
        return low, high
