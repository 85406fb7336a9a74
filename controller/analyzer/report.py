"""A paytable's exact figures from the counts: per-line probabilities, return, house edge.

Every figure is an exact :class:`fractions.Fraction` of integer counts; floats appear only when
printing. "Return" is what comes back per unit wagered, the wager included: an ``N to 1`` win
returns ``N + 1``, a push returns 1, a loss 0. For a progressive paytable the return is a
linear function of the meter ``M`` (in cents): ``R(M) = a + b * M``; see docs/analyzer.md for
the long-run return including contributions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.analyzer.ace_high import AceHighCounts, ace_high_counts
from controller.analyzer.census import mask_census
from controller.analyzer.deck import FULL_DECK, Deck
from controller.lines import Line
from controller.paytable import FixedPay, Odds, Push, meter_percent, pay_value

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.cards import JokerMode
    from controller.paytable import Paytable, PaytableLine, ProgressiveTerms


@dataclass(frozen=True, slots=True)
class LineFigures:
    """One paytable row: how many hands (or dealer/player pairs) it pays, and what that returns."""

    row: PaytableLine
    count: int
    probability: Fraction
    meter_share: Fraction
    """Return per unit wagered from the meter part of the pay, per cent of meter (b of R(M))."""
    fixed_return: Fraction
    """Return per unit wagered from the rest: odds, fixed pays and the returned wager (a)."""

    @property
    def one_in(self) -> Fraction | None:
        """The line comes once in this many hands (or pairs)."""
        return 1 / self.probability if self.probability else None


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


@dataclass(frozen=True, slots=True)
class Analysis:
    """The exact analysis of one paytable."""

    paytable: Paytable
    total: int
    """Hands, or ordered (dealer, player) pairs for Ace High."""
    lines: tuple[LineFigures, ...]
    progressive: ProgressiveFigures | None
    ace_high: AceHighCounts | None

    @property
    def losing_count(self) -> int:
        """Hands (pairs) that win no line."""
        return self.total - sum(line.count for line in self.lines)

    @property
    def return_(self) -> Fraction:
        """Return per unit wagered (at the meter seed for a progressive paytable)."""
        if self.progressive is not None:
            return self.progressive.return_at_seed
        return sum((line.fixed_return for line in self.lines), Fraction(0))

    @property
    def house_edge(self) -> Fraction:
        """1 - return."""
        return 1 - self.return_

    @property
    def envy_per_other_hand_cents(self) -> Fraction | None:
        """Expected Envy paid to a qualifying player for each other hand at the table."""
        if not self.paytable.has_envy:
            return None
        return sum(
            (line.probability * (line.row.envy_cents or 0) for line in self.lines), Fraction(0)
        )


def _figures(
    row: PaytableLine, count: int, total: int, terms: ProgressiveTerms | None
) -> LineFigures:
    probability = Fraction(count, total)
    pays = row.pays
    if isinstance(pays, Odds):
        return LineFigures(row, count, probability, Fraction(0), probability * (pays.to_one + 1))
    if isinstance(pays, Push):
        return LineFigures(row, count, probability, Fraction(0), probability)
    if terms is None:  # the loader allows dollar pays on progressive paytables only
        raise ValueError(f"{row.outcome}: a dollar pay needs progressive terms")
    wager = terms.wager_cents
    returned = wager if terms.original_wager_returned else 0
    if isinstance(pays, FixedPay):
        return LineFigures(
            row, count, probability, Fraction(0), probability * (pays.cents + returned) / wager
        )
    share = probability * pays.percent / wager
    return LineFigures(
        row, count, probability, share, probability * (pays.fixed_cents + returned) / wager
    )


class Analyzer:
    """Analyses paytables over one deck, computing each joker mode's census only once."""

    def __init__(
        self, deck: Deck = FULL_DECK, progress: Callable[[str], None] | None = None
    ) -> None:
        self.deck = deck
        self._progress = progress
        self._census: dict[JokerMode, Counter[int]] = {}
        self._ace_high: AceHighCounts | None = None

    def census(self, mode: JokerMode) -> Counter[int]:
        """Qualifying mask -> hands, for one joker mode."""
        if mode not in self._census:
            if self._progress:
                self._progress(f"counting {self.deck.hands:,} hands, joker {mode.value}")
            self._census[mode] = mask_census(self.deck, mode)
        return self._census[mode]

    def ace_high(self) -> AceHighCounts:
        """The dealer/player ace-high counts."""
        if self._ace_high is None:
            if self._progress:
                self._progress("counting dealer/player ace-high pairs")
            self._ace_high = ace_high_counts(self.deck)
        return self._ace_high

    def pay_classes(self, paytable: Paytable) -> tuple[PayClass, ...]:
        """Hands grouped by the rows of the paytable they qualify for (not for Ace High)."""
        grouped: Counter[tuple[PaytableLine, ...]] = Counter()
        for mask, hands in self.census(paytable.joker).items():
            rows = paytable.qualifying_rows(mask)
            if rows:
                grouped[rows] += hands
        return tuple(PayClass(rows, count) for rows, count in grouped.items())

    def line_counts(
        self, paytable: Paytable, meter_cents: int | None = None
    ) -> tuple[int, dict[Line, int]]:
        """Total hands (or pairs) and how many each line pays (at a meter; default the seed)."""
        if paytable.dealer_and_player:
            counts = self.ace_high()
            return counts.pairs, {
                Line.BOTH_ACE_HIGH: counts.both,
                Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER: counts.dealer_only_with_joker,
                Line.DEALER_ONLY_ACE_HIGH_NO_JOKER: counts.dealer_only_no_joker,
            }
        by_line: Counter[Line] = Counter()
        for pay_class in self.pay_classes(paytable):
            row = paytable.best_of(pay_class.rows, meter_cents)
            if row is not None:
                by_line[row.line] += pay_class.count
        return self.deck.hands, dict(by_line)

    def analyze(self, paytable: Paytable) -> Analysis:
        """The exact analysis of one paytable."""
        total, by_line = self.line_counts(paytable)
        terms = paytable.progressive
        lines = [_figures(row, by_line.get(row.line, 0), total, terms) for row in paytable.lines]
        progressive = None
        if terms is not None:
            classes = self.pay_classes(paytable)
            progressive = ProgressiveFigures(paytable, terms, total, classes)
        ace_high = self.ace_high() if paytable.dealer_and_player else None
        return Analysis(paytable, total, tuple(lines), progressive, ace_high)
