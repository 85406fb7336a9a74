"""``jackpotd analyze``: the exact figures of a paytable over all 154,143,080 hands."""

from __future__ import annotations

import json
import sys
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TextIO

from controller.analyzer.report import QUALIFYING_WAGER_CENTS, Analysis, Analyzer
from controller.cli.analyze_plot import draw_return_plot
from controller.cli.common import command
from controller.cli.levels_view import levels_json, pays_text, print_levels
from controller.cli.progress import Steps, bar
from controller.cli.tables import Column, print_table
from controller.money import format_cents, format_percent
from controller.rules.paytable_files import find_paytable, seed_paytables

if TYPE_CHECKING:
    import argparse

    from controller.analyzer.progressive import ProgressiveFigures


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``analyze`` to the command line."""
    parser = command(
        commands,
        "analyze",
        help="exact probabilities, return and house edge of a paytable",
        description="Counts every seven-card hand of the 53-card deck exactly (docs/analyzer.md).",
        examples=(
            "  jackpotd analyze fortune-1\n"
            "  jackpotd analyze --all --json > analysis.json\n"
            "  jackpotd analyze progressive-1 --plot return.png"
        ),
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("name", nargs="?", help="a paytable name (e.g. fortune-1) or .toml path")
    target.add_argument("--all", action="store_true", help="every seed paytable, with a summary")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw return against meter (a progressive; a line per level of a multi-level one)",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress",
        action="store_true",
        help="show progress as lines on stderr when it is not a terminal (a bar when it is)",
    )
    shown.add_argument("--quiet", action="store_true", help="never show progress")
    parser.set_defaults(run=run)


class ProgressLog:
    """Progress as lines (``--progress`` into a file or a pipe): each step, each quarter counted.

    Each line starts with the time since the start; the last says how long it all took. On a
    terminal :class:`controller.cli.progress.Steps` draws bars instead.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.perf_counter()
        self.step = ""
        self.mark = 0
        """The last quarter shown in this step (no "0 %" line)."""

    def _line(self, text: str) -> None:
        print(f"[{time.perf_counter() - self.started:5.1f}s] {text}", file=self.stream, flush=True)

    def __call__(self, step: str) -> None:
        """A step begins."""
        self.step, self.mark = step, 0
        self._line(f"{step} ...")

    def counted(self, hands: int, total: int) -> None:
        """A line when the step's count reaches another quarter."""
        if not total:
            return
        quarter = hands * 100 // total // 25 * 25
        if quarter > self.mark:
            self.mark = quarter
            self._line(f"{self.step}: {quarter} %")

    def done(self) -> None:
        """Say how long it all took."""
        self._line(f"done in {time.perf_counter() - self.started:.1f}s")


def _analyses(args: argparse.Namespace) -> list[Analysis]:
    """Each paytable asked for, analysed, with progress on stderr as the options say."""
    tables = list(seed_paytables().values()) if args.all else [find_paytable(args.name)]
    if sys.stderr.isatty() and not args.quiet:
        started = time.perf_counter()
        with bar(sys.stderr) as shown:
            steps = Steps(shown)
            analyzer = Analyzer(progress=steps)  # one analyzer: it counts each joker mode once
            analyses = [analyzer.analyze(table) for table in tables]
            steps.done()
        print(f"done in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        return analyses
    if args.progress:
        log = ProgressLog(sys.stderr)
        analyzer = Analyzer(progress=log)
        analyses = [analyzer.analyze(table) for table in tables]
        log.done()
        return analyses
    analyzer = Analyzer()
    return [analyzer.analyze(table) for table in tables]


def run(args: argparse.Namespace) -> int:
    """Analyse one paytable or all of them and print the result."""
    analyses = _analyses(args)
    if args.plot:
        draw_return_plot(analyses, args.plot)
    if args.json:
        documents = [as_json(analysis) for analysis in analyses]
        print(json.dumps({"paytables": documents} if args.all else documents[0], indent=2))
    elif args.all:
        print_summary(analyses)
    else:
        print_analysis(analyses[0])
    return 0


def _ratio(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _one_in(value: Fraction | None) -> float | None:
    return float(value) if value is not None else None


def _crossovers_json(figures: ProgressiveFigures) -> list[dict[str, Any]]:
    """Each meter above the seed from which hands move to a line with more of the meter."""
    return [
        {
            "meter_cents": float(crossover.meter_cents),
            "meter_exact_cents": _ratio(crossover.meter_cents),
            "count": crossover.count,
            "line_below": str(crossover.below.line),
            "outcome_below": crossover.below.outcome,
            "line_above": str(crossover.above.line),
            "outcome_above": crossover.above.outcome,
        }
        for crossover in figures.crossovers
    ]


def as_json(analysis: Analysis) -> dict[str, Any]:
    """The JSON contract of docs/analyzer.md: counts exact, derived figures as floats and ratios."""
    table = analysis.paytable
    document: dict[str, Any] = {
        "paytable": table.name,
        "title": table.title,
        "wager": str(table.wager),
        "joker": table.joker.value,
        "total_hands": analysis.ace_high.hands if analysis.ace_high else analysis.total,
        "lines": [
            {
                "line": str(line.row.line),
                "outcome": line.row.outcome,
                "count": line.count,
                "count_natural": line.natural,
                "count_with_joker": line.with_joker,
                "probability": float(line.probability),
                "one_in": _one_in(line.one_in),
                "pays": str(line.row.pays),
                "envy_cents": line.row.envy_cents,
                "return_contribution": float(line.fixed_return),
            }
            for line in analysis.lines
        ],
        "losing_count": analysis.losing_count,
        "return": float(analysis.return_),
        "return_exact": _ratio(analysis.return_),
        "house_edge_percent": float(analysis.house_edge * 100),
        "house_edge_exact": _ratio(analysis.house_edge),
    }
    if (counts := analysis.ace_high) is not None:
        document["total_pairs"] = counts.pairs
        document["dealer_ace_high_probability"] = float(
            Fraction(counts.natural_hands + counts.joker_hands, counts.hands)
        )
    if (envy := analysis.envy_per_other_hand_cents) is not None:
        document["envy_per_other_hand_cents"] = float(envy)
        document["envy_per_other_hand_exact_cents"] = _ratio(envy)
        at_minimum = envy / QUALIFYING_WAGER_CENTS
        document["envy_percent_of_5_dollars_per_other_hand"] = float(at_minimum * 100)
    if (levelled := analysis.levelled) is not None:
        for line, data in zip(analysis.lines, document["lines"], strict=True):
            data["return_contribution"] = float(analysis.line_return_at_seed(line))
            data["level"] = line.row.level or None
        document["levels"] = levels_json(levelled)
    if (figures := analysis.progressive) is not None:
        terms = figures.terms
        low, high = figures.long_run_return
        break_even = figures.break_even_meter_cents
        for line, data in zip(analysis.lines, document["lines"], strict=True):
            at_seed = line.fixed_return + line.meter_share * terms.meter_seed_cents
            data["return_contribution"] = float(at_seed)
        document["progressive"] = {
            "wager_cents": terms.wager_cents,
            "meter_seed_cents": terms.meter_seed_cents,
            "return_at_seed": float(figures.return_at_seed),
            "return_base": float(figures.return_base),
            "return_per_meter_dollar": float(figures.return_per_meter_cent * 100),
            "break_even_meter_cents": float(break_even) if break_even is not None else None,
            "break_even_meter_exact_cents": _ratio(break_even) if break_even is not None else None,
            "crossovers": _crossovers_json(figures),
            "wagers_per_top_hit": _one_in(figures.wagers_per_top_hit),
            "rate_of_progression": format_percent(terms.rate_of_progression),
            "reserve_rate": format_percent(terms.reserve_rate),
            "contribution_rate": format_percent(figures.contribution_rate),
            "seed_cost_rate": float(figures.seed_cost_rate),
            "long_run_return_low": float(low),
            "long_run_return_high": float(high),
        }
    return document


def _amount(cents: Fraction | int) -> str:
    return format_cents(int(cents))


def print_analysis(analysis: Analysis) -> None:
    """The readable table of one paytable."""
    table = analysis.paytable
    unit = "dealer/player pairs" if analysis.ace_high else "seven-card hands"
    print(f"{table.title}  [{table.name}], joker {table.joker.value}")
    print(f"{analysis.total:,} {unit} of the 53-card deck, counted exactly")
    print()
    split = analysis.ace_high is None  # Ace High outcomes name the joker themselves
    columns = [
        Column("Outcome"), Column("Count", figures=True),
        *((Column("Natural", figures=True), Column("With joker", figures=True)) if split else ()),
        Column("Probability", figures=True), Column("1 in", figures=True),
        Column("Pays", figures=True), Column("Return", figures=True),
    ]  # fmt: skip
    rows: list[tuple[object, ...]] = [
        (
            line.row.outcome, f"{line.count:,}",
            *((f"{line.natural or 0:,}", f"{line.with_joker or 0:,}") if split else ()),
            f"{float(line.probability):.4e}",
            f"{float(line.one_in):,.2f}" if line.one_in else "never",
            pays_text(line.row), f"{float(analysis.line_return_at_seed(line)):.6f}",
        )
        for line in analysis.lines
    ]  # fmt: skip
    blank = ("", "") if split else ()
    losing = analysis.losing_count
    rows.append(("No win", f"{losing:,}", *blank, f"{losing / analysis.total:.4e}", "", "", ""))
    rows.append(("Total", f"{analysis.total:,}", *blank, "", "", "", ""))
    print_table(columns, rows)
    print()
    where = " at the meter seed" if analysis.progressive else ""
    where = " at the levels' seeds" if analysis.levelled else where
    print(f"Return{where}: {float(analysis.return_):.6f} ({_ratio(analysis.return_)})")
    print(f"House edge{where}: {float(analysis.house_edge * 100):.4f} %")
    if analysis.ace_high:
        counts = analysis.ace_high
        dealer = Fraction(counts.natural_hands + counts.joker_hands, counts.hands)
        print(f"Dealer ace high: {float(dealer):.6f} of hands")
    if (envy := analysis.envy_per_other_hand_cents) is not None:
        at_minimum = float(envy / QUALIFYING_WAGER_CENTS * 100)
        print(
            f"Envy per other player's hand at the table (never the dealer's): "
            f"{float(envy) / 100:.6f} dollars, {at_minimum:.4f} % of a $5 Qualifying Wager"
        )
    if analysis.progressive is not None:
        print_progressive(analysis.progressive)
    if analysis.levelled is not None:
        print_levels(analysis.levelled)


def print_progressive(figures: ProgressiveFigures) -> None:
    """The meter-dependent figures of a progressive paytable."""
    terms = figures.terms
    low, high = figures.long_run_return
    base, slope = float(figures.return_base), float(figures.return_per_meter_cent * 100)
    print(f"Return by meter M ($), at the seed: R(M) = {base:.6f} + {slope:.6e} M")
    for crossover in figures.crossovers:
        print(
            f"From a meter of {_amount(crossover.meter_cents)} the {crossover.count:,} hands paid "
            f"{crossover.below.outcome!r} are paid {crossover.above.outcome!r}, which pays more"
        )
    if (break_even := figures.break_even_meter_cents) is not None:
        print(f"Break-even meter (R = 100 %): {_amount(break_even)}")
    if (wagers := figures.wagers_per_top_hit) is not None:
        print(f"Wagers between 100 %-of-meter hits: {float(wagers):,.0f}")
    print(
        f"Contributions: progression {format_percent(terms.rate_of_progression)} + reserve "
        f"{format_percent(terms.reserve_rate)} = "
        f"{format_percent(figures.contribution_rate)} of each wager"
    )
    print(f"Reseeding after 100 % hits costs {float(figures.seed_cost_rate):.6f} per unit wagered")
    span = f"{float(low):.6f}" if low == high else f"{float(low):.6f} to {float(high):.6f}"
    print(f"Long-run return with contributions paid out: {span}")


def print_summary(analyses: list[Analysis]) -> None:
    """One row per paytable."""
    print_table(
        [
            Column("Paytable", whole=True), Column("Wager"), Column("Joker"),
            Column("Return", figures=True), Column("House edge", figures=True), Column("Notes"),
        ],
        (
            (
                analysis.paytable.name, analysis.paytable.wager, analysis.paytable.joker.value,
                f"{float(analysis.return_):.6f}", f"{float(analysis.house_edge * 100):.4f}%",
                _notes(analysis),
            )
            for analysis in analyses
        ),
    )  # fmt: skip


def _notes(analysis: Analysis) -> str:
    """A progressive paytable's figures at the seed and in the long run."""
    if (figures := analysis.progressive) is None:
        return ""
    break_even = figures.break_even_meter_cents
    low, high = figures.long_run_return
    notes = f"at seed {_amount(figures.terms.meter_seed_cents)}; long run {float(low):.4f}"
    notes += f"-{float(high):.4f}" if high != low else ""
    notes += f"; break-even meter {_amount(break_even)}" if break_even is not None else ""
    return notes
