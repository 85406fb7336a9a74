"""Each pool's meter over a period, point by point, and its hits: what the report's plot draws.

Every ``balances`` effect of the period is a point (the row's time and the meter it left,
exact); every ``meter-paid`` effect a hit (its time and amount). The rows' times come from the
controller's clock, which can step (docs/faults.md, "Clock steps"): the points are in journal
order, as the period is, and a plot draws them against their time as stated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.effects import Balances, MeterPaid, decode_effects
from controller.reports.period import row_time

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime


@dataclass(slots=True)
class MeterSeries:
    """One pool's meter and hits over the period."""

    points: list[tuple[datetime, Fraction]] = field(default_factory=list)
    hits: list[tuple[datetime, int]] = field(default_factory=list)


def meter_series(rows: Sequence[dict[str, Any]], begin: int, stop: int) -> dict[str, MeterSeries]:
    """Each pool's series over rows ``begin`` to ``stop`` (list indexes, journal order)."""
    found: dict[str, MeterSeries] = {}
    for row in rows[begin:stop]:
        if row["outcome"] != "applied":
            continue
        for effect in decode_effects(row["effects"]):
            if isinstance(effect, Balances):
                series = found.setdefault(effect.pool_id, MeterSeries())
                series.points.append((row_time(row), Fraction(effect.meter)))
            elif isinstance(effect, MeterPaid):
                series = found.setdefault(effect.pool_id, MeterSeries())
                series.hits.append((row_time(row), effect.paid_cents))
    return found
