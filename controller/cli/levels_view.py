"""How ``jackpotd analyze`` and ``jackpotd paytables show`` print a multi-level paytable.

Each level's terms (seed, rates, limit, must-hit-by), the level beside each meter pay, the
return at the levels' seeds with its ``a`` and each level's ``b``, each level's break-even
meter and each mystery level's cost per wager (docs/analyzer.md, "Levels"). Exact figures go to
the JSON as ``numerator/denominator`` beside their floats, as the rest of the analysis does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.analyzer.mystery import MysteryCost
from controller.cli.tables import Column, print_table
from controller.money import format_cents, format_percent

if TYPE_CHECKING:
    from fractions import Fraction

    from controller.analyzer.levels import LevelledFigures
    from controller.rules.paytable import LevelTerms, PaytableLine, ProgressiveTerms


def pays_text(row: PaytableLine) -> str:
    """A row's pay, with the level it pays from when it names one."""
    return f"{row.pays} [{row.level}]" if row.level else str(row.pays)


def _cents(value: int | None) -> str:
    return "" if value is None else format_cents(value, always_cents=False)


def _past_trigger(level: LevelTerms) -> str:
    if not level.mystery:
        return ""
    return "next level" if level.spill_to_next else "overflow"


def print_level_terms(terms: ProgressiveTerms) -> None:
    """One row per level: its seed, rates, limit and (a mystery level) must-hit-by amount."""
    print_table(
        [Column("level"), Column("seed", figures=True), Column("progression", figures=True),
         Column("reserve", figures=True), Column("limit", figures=True),
         Column("must hit by", figures=True), Column("past trigger")],
        (
            (level.level, _cents(level.meter_seed_cents),
             format_percent(level.rate_of_progression), format_percent(level.reserve_rate),
             _cents(level.limit_cents), _cents(level.must_hit_by_cents), _past_trigger(level))
            for level in terms.levels
        ),
    )  # fmt: skip


def level_terms_json(terms: ProgressiveTerms) -> list[dict[str, Any]]:
    """Each level's terms: money in integer cents, rates as exact percent text."""
    return [
        {
            "level": level.level,
            "meter_seed_cents": level.meter_seed_cents,
            "rate_of_progression": format_percent(level.rate_of_progression),
            "reserve_rate": format_percent(level.reserve_rate),
            "limit_cents": level.limit_cents,
            "must_hit_by_cents": level.must_hit_by_cents,
            "mystery": level.mystery,
            "past_trigger": _past_trigger(level) or None,
        }
        for level in terms.levels
    ]


def mystery_costs(terms: ProgressiveTerms) -> list[MysteryCost]:
    """The cost figures of each mystery level, on the paytable's wager."""
    return [MysteryCost(level, terms.wager_cents) for level in terms.levels if level.mystery]


def _ratio(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _exact(value: Fraction | None) -> tuple[float | None, str | None]:
    return (None, None) if value is None else (float(value), _ratio(value))


def levels_json(figures: LevelledFigures) -> dict[str, Any]:
    """The ``levels`` object of ``jackpotd analyze --json`` on a multi-level paytable."""
    piece = figures.piece()
    breaks = figures.break_even_meters
    levels = []
    for terms in figures.terms.levels:
        name = terms.level
        meter, exact = _exact(breaks[name])
        entry: dict[str, Any] = {
            "level": name,
            "return_per_meter_dollar": float(piece.shares[name] * 100),
            "return_per_meter_cent_exact": _ratio(piece.shares[name]),
            "break_even_meter_cents": meter,
            "break_even_meter_exact_cents": exact,
            "crossovers": [
                {
                    "meter_cents": float(crossover.meter_cents),
                    "meter_exact_cents": _ratio(crossover.meter_cents),
                    "count": crossover.count,
                    "line_below": str(crossover.below.line),
                    "level_below": crossover.below.level or None,
                    "line_above": str(crossover.above.line),
                    "level_above": crossover.above.level or None,
                }
                for crossover in figures.crossovers(name)
            ],
        }
        levels.append(entry)
    for cost in mystery_costs(figures.terms):
        entry = next(item for item in levels if item["level"] == cost.level.level)
        entry["mystery"] = {
            "expected_trigger_cents": float(cost.expected_trigger_cents),
            "expected_trigger_exact_cents": _ratio(cost.expected_trigger_cents),
            "expected_wagers_per_cycle": float(cost.expected_wagers_per_cycle),
            "expected_wagers_per_cycle_exact": _ratio(cost.expected_wagers_per_cycle),
            "cost_rate": float(cost.cost_rate),
            "cost_rate_exact": _ratio(cost.cost_rate),
            "seed_cost_rate": float(cost.seed_cost_rate),
            "seed_cost_rate_exact": _ratio(cost.seed_cost_rate),
            "paid_rate": float(cost.paid_rate),
            "paid_rate_exact": _ratio(cost.paid_rate),
            "past_trigger_rate": float(cost.past_trigger_rate),
            "past_trigger_rate_exact": _ratio(cost.past_trigger_rate),
        }
    return {
        "wager_cents": figures.terms.wager_cents,
        "return_at_seeds": float(figures.return_at_seeds),
        "return_at_seeds_exact": _ratio(figures.return_at_seeds),
        "return_base": float(piece.base),
        "return_base_exact": _ratio(piece.base),
        "terms": level_terms_json(figures.terms),
        "levels": levels,
    }


def print_levels(figures: LevelledFigures) -> None:
    """The figures of a multi-level paytable after its rows (``jackpotd analyze``)."""
    piece = figures.piece()
    print()
    print_level_terms(figures.terms)
    print()
    terms = " + ".join(
        f"{float(piece.shares[name] * 100):.6e} M_{name}"
        for name in figures.level_names
        if piece.shares[name]
    )
    print(
        f"Return by each level's meter M ($), at the seeds: R = {float(piece.base):.6f} + {terms}"
    )
    for name in figures.level_names:
        for crossover in figures.crossovers(name):
            print(
                f"From a {name} meter of {format_cents(int(crossover.meter_cents))} the "
                f"{crossover.count:,} hands paid {crossover.below.outcome!r} "
                f"({pays_text(crossover.below)}) are paid {crossover.above.outcome!r} "
                f"({pays_text(crossover.above)}), which pays more"
            )
    for name, meter in figures.break_even_meters.items():
        if meter is None:
            print(f"Break-even meter of {name}: none (no hand is paid from it)")
        else:
            amount = format_cents(int(meter))
            limit = figures.terms.level(name)
            above = (
                limit is not None and limit.limit_cents is not None and meter > limit.limit_cents
            )
            never = ", above its limit: never shown" if above else ""
            print(
                f"Break-even meter of {name} (R = 100 %, the others at their seeds): "
                f"{amount}{never}"
            )
    costs = mystery_costs(figures.terms)
    if costs:
        hits = figures.return_at_seeds + sum(cost.paid_rate for cost in costs)
        print(f"Return at the levels' seeds with the mystery levels' hits: {float(hits):.6f}")
    for cost in costs:
        name = cost.level.level
        print(
            f"Mystery level {name}: pays {format_cents(int(cost.expected_trigger_cents))} on "
            f"average every {float(cost.expected_wagers_per_cycle):,.1f} wagers; costs "
            f"{float(cost.cost_rate):.6f} per unit wagered (progression "
            f"{format_percent(cost.level.rate_of_progression)} + seed "
            f"{float(cost.seed_cost_rate):.6f}), of which its hits pay "
            f"{float(cost.paid_rate):.6f} and {float(cost.past_trigger_rate):.6f} goes past "
            "the trigger"
        )
