"""``jackpotd analyze --plot``: a progressive paytable's return against its meters, drawn exactly.

Each point is the analyzer's exact return at that meter (docs/analyzer.md), not a fit. A
one-level progressive is one line, its meter from the seed to past its break-even meter. A
multi-level paytable (docs/paytables.md, "Levels") is a line per level that hands are paid
from: that level's meter from its seed to past its break-even, every other level at its seed,
the return being piecewise linear in every meter at once (controller/analyzer/levels.py). A
mystery level is won by no hand, so the return does not depend on its meter: it draws no line,
and its cost per wager is the analyzer's table (controller/analyzer/mystery.py).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.errors import JackpotError
from controller.files import RECORD, create_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.analyzer.levels import LevelledFigures
    from controller.analyzer.report import Analysis

POINTS: Final = 101
"""Meters drawn per line, the seed and the top included."""

Series = dict[str, list[tuple[int, Fraction]]]
"""Each line's label and its points: (meter in cents, return per unit wagered)."""


class PlotUnavailableError(JackpotError, RuntimeError):
    """``--plot`` without matplotlib installed, or with nothing to draw."""


def _line(
    seed: int, break_even: Fraction | None, at: Callable[[int], Fraction]
) -> list[tuple[int, Fraction]]:
    """The points from ``seed`` to twice it, or a quarter past the break-even if that is higher."""
    top = max(2 * seed, int((break_even or Fraction(seed)) * Fraction(5, 4)))
    meters = [seed + (top - seed) * step // (POINTS - 1) for step in range(POINTS)]
    return [(meter, at(meter)) for meter in meters]


def _levelled(name: str, figures: LevelledFigures) -> Series:
    """A line per level hands are paid from, the other levels at their seeds."""
    series: Series = {}
    for level, seed in figures.seeds.items():
        break_even = figures.break_even_meter_cents(level)
        top = figures.piece({level: max(2 * seed, (break_even or seed) * 2)}).shares[level]
        if not (figures.piece().shares[level] or top):
            continue  # no hand is paid from it: the return does not move with its meter

        def at(meter: int, level: str = level) -> Fraction:
            return figures.return_at({level: meter})

        series[f"{name}: {level} (others at their seeds)"] = _line(int(seed), break_even, at)
    return series


def plotted(analyses: list[Analysis]) -> Series:
    """Every line the plot draws, exactly, in the analyses' order."""
    series: Series = {}
    for analysis in analyses:
        name = analysis.paytable.name
        if analysis.levelled is not None:
            series |= _levelled(name, analysis.levelled)
        elif (figures := analysis.progressive) is not None:
            seed = figures.terms.meter_seed_cents
            series[name] = _line(seed, figures.break_even_meter_cents, figures.return_at)
    return series


def draw_return_plot(analyses: list[Analysis], path: str) -> Series:
    """Return against meter for each progressive paytable (each level), to a PNG file."""
    series = plotted(analyses)
    if not series:
        raise PlotUnavailableError("--plot draws progressive paytables; none was analysed")
    try:
        import matplotlib as mpl  # noqa: PLC0415 - optional extra, loaded only for --plot

        mpl.use("Agg")
        from matplotlib import pyplot as plt  # noqa: PLC0415
    except ImportError as error:
        raise PlotUnavailableError("--plot needs matplotlib: pip install '.[plot]'") from error
    figure, axes = plt.subplots(figsize=(9, 5.5))
    for label, points in series.items():
        axes.plot(
            [meter / 100 for meter, _ in points],
            [float(value) * 100 for _, value in points],
            label=label,
        )
    axes.axhline(100, color="grey", linewidth=0.8, linestyle="--")
    axes.set_xlabel("meter ($)")
    axes.set_ylabel("return (% of wager)")
    axes.set_title("Return against meter value")
    axes.legend()
    figure.tight_layout()
    with create_file(Path(path), RECORD) as file:  # 0640 whatever the umask
        figure.savefig(file, format="png", dpi=120)
    plt.close(figure)
    return series
