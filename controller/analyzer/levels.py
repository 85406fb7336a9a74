"""A multi-level progressive paytable's return against every level's meter, exactly.

Each meter-paid row names its level (docs/paytables.md, "Levels"), and a hand is paid on its
highest-paying row *at each row's level's meter*, so the return per unit wagered is piecewise
linear in the meters ``M_1 .. M_n`` (in cents): ``R(M) = a + sum_i b_i * M_i`` on the piece in
force, and the piece changes only where some hands move to a row that pays more at those meters.
A one-level paytable is the case of its one unnamed level, and every figure here is then the
one :mod:`controller.analyzer.progressive` gives. A mystery level is won by no hand: its ``b``
is 0 and its cost is :mod:`controller.analyzer.mystery`'s. Every figure is an exact Fraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.analyzer.progressive import Crossover
from controller.rules.paytable import MAIN_LEVEL, meter_percent, pay_value

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.analyzer.progressive import PayClass
    from controller.rules.paytable import Meter, Paytable, PaytableLine, ProgressiveTerms


@dataclass(frozen=True, slots=True)
class Piece:
    """The linear piece of R in force at some meters: ``R = base + sum(share[level] * M)``."""

    base: Fraction
    """Return per unit wagered from odds, fixed pays and returned wagers (the ``a``)."""
    shares: dict[str, Fraction]
    """Each level's return per unit wagered per cent on its meter (the ``b_i``)."""

    def at(self, meters: Mapping[str, Fraction]) -> Fraction:
        """The piece's value at the given meters (each level named)."""
        return self.base + sum(
            (share * meters[level] for level, share in self.shares.items()), Fraction(0)
        )


@dataclass(frozen=True, slots=True)
class LevelledFigures:
    """Meter-dependent figures of a (possibly multi-level) progressive paytable.

    ``meters`` arguments give meters by level name; a level left out is at its seed, as in
    :meth:`controller.rules.paytable.Paytable.best_of`.
    """

    paytable: Paytable
    terms: ProgressiveTerms
    total: int
    classes: tuple[PayClass, ...]

    @property
    def level_names(self) -> tuple[str, ...]:
        """The levels in the file's order; a one-level paytable's one unnamed level."""
        return tuple(level.level for level in self.terms.levels) or (MAIN_LEVEL,)

    @property
    def seeds(self) -> dict[str, Fraction]:
        """Each level's meter seed, in cents."""
        return {name: Fraction(self.paytable.seed_of(name)) for name in self.level_names}

    def _meters(self, meters: Mapping[str, Meter] | None) -> dict[str, Fraction]:
        at = self.seeds
        for name, meter in (meters or {}).items():
            if name not in at:
                raise KeyError(f"{self.paytable.name} has no level {name!r}")
            at[name] = Fraction(meter)
        return at

    def piece(self, meters: Mapping[str, Meter] | None = None) -> Piece:
        """The piece of R in force at some meters (default: every level at its seed)."""
        at = self._meters(meters)
        base = Fraction(0)
        shares = dict.fromkeys(self.level_names, Fraction(0))
        returned = self.terms.wager_cents if self.terms.original_wager_returned else 0
        for pay_class in self.classes:
            row = self.paytable.best_of(pay_class.rows, at)
            if row is None:
                continue
            base += pay_class.count * (pay_value(row.pays, 0) + returned)
            if percent := meter_percent(row.pays):
                shares[row.level] += pay_class.count * percent
        scale = self.total * self.terms.wager_cents
        return Piece(base / scale, {name: share / scale for name, share in shares.items()})

    def return_at(self, meters: Mapping[str, Meter] | None = None) -> Fraction:
        """R(M_1 .. M_n): the return per unit wagered at the given meters."""
        at = self._meters(meters)
        return self.piece(at).at(at)

    @property
    def return_at_seeds(self) -> Fraction:
        """R with every level's meter at its seed."""
        return self.return_at()

    def _row_line(self, row: PaytableLine, level: str) -> tuple[Fraction, Fraction]:
        """A row's pay as ``c + s * M_level`` with every other level at its seed."""
        percent = meter_percent(row.pays)
        if row.level == level and percent:
            return pay_value(row.pays, 0), percent
        return pay_value(row.pays, self.paytable.seed_of(row.level)), Fraction(0)

    def _class_switches(self, rows: tuple[PaytableLine, ...], level: str) -> set[Fraction]:
        """Meters of ``level`` above its seed where two of the rows pay the same."""
        seed = self.seeds[level]
        points: set[Fraction] = set()
        lines = [self._row_line(row, level) for row in rows]
        for index, (first_fixed, first_slope) in enumerate(lines):
            for second_fixed, second_slope in lines[index + 1 :]:
                slope = first_slope - second_slope
                if slope:
                    meter = (second_fixed - first_fixed) / slope
                    if meter > seed:
                        points.add(meter)
        return points

    def switch_points(self, level: str) -> tuple[Fraction, ...]:
        """Meters of one level above its seed where two rows of a class pay the same.

        The other levels are at their seeds. Only there can the rows paid change as that
        level's meter rises, so R is linear in it between two of these points.
        """
        points: set[Fraction] = set()
        for pay_class in self.classes:
            points |= self._class_switches(pay_class.rows, level)
        return tuple(sorted(points))

    def crossovers(self, level: str) -> tuple[Crossover, ...]:
        """Meters of ``level`` from which hands are paid on another row, the others at seeds.

        Merged per pair of rows, from the seed up, as
        :attr:`ProgressiveFigures.crossovers` gives them for one meter; the rows may pay from
        different levels (a hand moving from the major's row to the mini's).
        """
        found: dict[tuple[Fraction, PaytableLine, PaytableLine], int] = {}
        for pay_class in self.classes:
            for meter in self._class_switches(pay_class.rows, level):
                below = self.paytable.best_of(pay_class.rows, self._meters({level: meter - 1}))
                above = self.paytable.best_of(pay_class.rows, self._meters({level: meter + 1}))
                if below is not None and above is not None and below != above:
                    key = (meter, below, above)
                    found[key] = found.get(key, 0) + pay_class.count
        return tuple(
            Crossover(meter, count, below, above)
            for (meter, below, above), count in sorted(found.items(), key=lambda item: item[0][0])
        )

    def break_even_meter_cents(self, level: str) -> Fraction | None:
        """The lowest meter of ``level`` at which R reaches 100 %, the others at their seeds.

        None if no hand is paid from that level at any of its meters (a mystery level, or one
        no row names). R never falls as a meter rises, so the pieces are searched from the seed
        up; if R is already 100 % at the seed, the seed's piece is extended down to where it
        crosses 100 % (as :attr:`ProgressiveFigures.break_even_meter_cents` does).
        """
        seeds = self.seeds
        starts = [seeds[level], *self.switch_points(level)]
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else None
            inside = start + 1 if end is None else (start + end) / 2
            piece = self.piece({level: inside})
            share = piece.shares[level]
            if not share:
                continue
            others = piece.at({**seeds, level: Fraction(0)})
            meter = (1 - others) / share
            if end is None or meter < end:
                return meter
        return None

    @property
    def break_even_meters(self) -> dict[str, Fraction | None]:
        """Each level's break-even meter (:meth:`break_even_meter_cents`), by name."""
        return {name: self.break_even_meter_cents(name) for name in self.level_names}
