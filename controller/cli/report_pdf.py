"""``jackpotd report pdf``: the period's meters and returns as a PDF, with their plots.

docs/operations.md, "The reports as a PDF". One file a regulator can be sent: a title page
(the period, the rows, the journal head the report was made from), the pools' meters and the
last hits (controller/cli/report_meters.py), the returns against the theoretical
(controller/cli/report_returns.py), each mystery level's draws and reveals, each checked
(controller/cli/report_mystery.py; none for a journal without one), each pool's meter over the
period with its hits marked, and each group's actual return against its theoretical with its
margin of chance. Every figure printed is the one the JSON of those reports gives, and the
PDF's subject and keywords name the journal head, so that the file can be held to the journal
(``jackpotd verify --report`` with the ``--json`` of the same period). matplotlib draws it (the
``plot`` extra, as for ``analyze --plot``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.cli.analyze_plot import PlotUnavailableError
from controller.cli.common import command
from controller.cli.report_meters import (
    HIT_COLUMNS,
    POOL_COLUMNS,
    TABLE_COLUMNS,
    adjustment_lines,
    hit_rows,
    meters_document,
    pool_rows,
)
from controller.cli.report_meters import table_rows as table_figure_rows
from controller.cli.report_mystery import (
    DRAW_COLUMNS,
    REVEAL_COLUMNS,
    draw_rows,
    mystery_levels,
    reveal_rows,
)
from controller.cli.report_period import Period, add_period, journal_rows, period_of
from controller.cli.report_returns import COLUMNS, returns_document, table_rows
from controller.files import RECORD, create_file
from controller.money import format_cents
from controller.reports.period import span
from controller.reports.series import meter_series

if TYPE_CHECKING:
    import argparse

    from matplotlib.figure import Figure

    from controller.cli.tables import Column
    from controller.reports.series import MeterSeries

LINES_A_PAGE = 52
"""Lines of text on an A4 page at the size drawn."""


def register(what: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report pdf`` under ``report``."""
    parser = command(
        what,
        "pdf",
        help="the period's meters and returns as a PDF with plots",
        examples="  jackpotd report pdf --from 2026-11-01 --to 2026-11-30 --out report-2026-11.pdf",
    )
    add_period(parser)
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.pdf", help="the PDF")
    parser.set_defaults(run=run)


def text_table(columns: tuple[Column, ...], rows: list[tuple[object, ...]]) -> list[str]:
    """A table as fixed-width lines: the header, a rule, a line a row, figures to the right."""
    cells = [[column.header for column in columns]]
    cells += [["" if value is None else str(value) for value in row] for row in rows]
    widths = [max(len(line[index]) for line in cells) for index in range(len(columns))]

    def line(values: list[str]) -> str:
        return "  ".join(
            value.rjust(width) if column.figures else value.ljust(width)
            for value, width, column in zip(values, widths, columns, strict=True)
        ).rstrip()

    return [line(cells[0]), "-" * len(line(cells[0])), *(line(values) for values in cells[1:])]


def _text_pages(plt: Any, title: str, lines: list[str]) -> list[Figure]:  # noqa: ANN401
    pages = []
    for first in range(0, max(len(lines), 1), LINES_A_PAGE):
        figure = plt.figure(figsize=(11.69, 8.27))  # A4, landscape
        # parse_math=False: amounts are written with "$", which would otherwise start TeX.
        figure.text(0.04, 0.95, title, fontsize=13, weight="bold", parse_math=False)
        chunk = "\n".join(lines[first : first + LINES_A_PAGE])
        figure.text(0.04, 0.91, chunk, fontsize=7.5, family="monospace", va="top", parse_math=False)
        pages.append(figure)
    return pages


def _meter_page(plt: Any, pool_id: str, series: MeterSeries) -> Figure:  # noqa: ANN401
    figure: Figure
    figure, axes = plt.subplots(figsize=(11.69, 8.27))
    times = [at for at, _ in series.points]
    axes.step(times, [float(meter) / 100 for _, meter in series.points], where="post")
    if series.hits:
        hit_times = [at for at, _ in series.hits]
        axes.scatter(hit_times, [cents / 100 for _, cents in series.hits], color="red", zorder=3)
    axes.set_title(f"{pool_id}: the meter over the period (red: each hit and its amount)")
    axes.set_xlabel("time (UTC, as journaled)")
    axes.set_ylabel("dollars")
    figure.autofmt_xdate()
    return figure


def _returns_page(plt: Any, report: dict[str, Any]) -> Figure:  # noqa: ANN401
    groups = [g for g in report["groups"] if g["theoretical"] is not None and g["actual"]]
    figure: Figure
    figure, axes = plt.subplots(figsize=(11.69, 8.27))
    names = [f"{g.get('table') or g.get('pool')} {g['spot']}" for g in groups]
    places = range(len(groups))
    actual = [float(g["actual_percent"].rstrip("%")) for g in groups]
    theoretical = [float(g["theoretical_percent"].rstrip("%")) for g in groups]
    margins = [float(g["margin_percent"].rstrip("%")) for g in groups]
    # The margin is where chance alone would put the actual return: drawn about the theoretical.
    axes.bar(
        [p - 0.2 for p in places], theoretical, width=0.4, yerr=margins,
        label="theoretical, ± the margin of chance",
    )  # fmt: skip
    axes.bar([p + 0.2 for p in places], actual, width=0.4, label="actual")
    axes.set_xticks(list(places), names, rotation=30, ha="right")
    axes.set_ylabel("return, % of the amount staked")
    axes.set_title("Actual return against theoretical at the meters played")
    axes.legend()
    figure.tight_layout()
    return figure


def pdf_pages(rows: list[dict[str, Any]], period: Period) -> tuple[list[str], dict[str, Any]]:
    """The text of the PDF's pages, and the two reports it is made of (for the plots)."""
    meters = meters_document(rows, period.start, period.end)
    returns = returns_document(rows, period.start, period.end)
    head = meters["journal_head"]
    first, last = meters["rows"]["first_seq"], meters["rows"]["last_seq"]
    lines = [
        f"Period {period.words()}",
        "journal rows: none" if first is None else f"journal rows {first} to {last}",
        "made from the journal's head: "
        + ("none" if head is None else f"row {head['seq']}, hash {head['hash']}"),
        "",
        "Pools (N.J.A.C. 13:69E-1.39A(b))",
        *text_table(POOL_COLUMNS, pool_rows(meters)),
    ]
    for pool in meters["pools"]:
        lines += ["", f"The last {len(pool['last_hits'])} hits of {pool['pool']}, newest first"]
        lines += text_table(HIT_COLUMNS, hit_rows(pool))
        lines += adjustment_lines(pool)
    lines += ["", "Tables", *text_table(TABLE_COLUMNS, table_figure_rows(meters))]
    lines += ["", "Returns against theoretical (Ohio Adm. Code 3772-10-08(A))"]
    lines += text_table(COLUMNS, table_rows(returns))
    lines += [
        f"Envy paid at {table}: {format_cents(cents)} (not part of any wager's return)"
        for table, cents in returns["envy_paid_cents"].items()
    ]
    begin, stop = span(rows, period.start, period.end)
    mystery = mystery_levels(rows, begin, stop)  # none: a journal without a mystery level
    if mystery:
        lines += ["", "Mystery levels (docs/rules.md § 10): draws, then reveals, each checked"]
        lines += text_table(DRAW_COLUMNS, draw_rows(mystery))
        reveals = reveal_rows(mystery)
        lines += ["", *text_table(REVEAL_COLUMNS, reveals)] if reveals else ["reveals: none"]
    return lines, {"meters": meters, "returns": returns, "mystery_levels": mystery}


def write_pdf(rows: list[dict[str, Any]], period: Period, out: Path) -> int:
    """Write the PDF; the number of its pages."""
    try:
        import matplotlib as mpl  # noqa: PLC0415 - optional extra, loaded only for a PDF

        mpl.use("Agg")
        from matplotlib import pyplot as plt  # noqa: PLC0415
        from matplotlib.backends.backend_pdf import PdfPages  # noqa: PLC0415
    except ImportError as error:
        raise PlotUnavailableError("report pdf needs matplotlib: pip install '.[plot]'") from error
    lines, reports = pdf_pages(rows, period)
    head = reports["meters"]["journal_head"]
    named = "none" if head is None else f"row {head['seq']} hash {head['hash']}"
    figures = _text_pages(plt, "Progressive jackpot report", lines)
    begin, stop = span(rows, period.start, period.end)
    for pool_id, series in sorted(meter_series(rows, begin, stop).items()):
        figures.append(_meter_page(plt, pool_id, series))
    figures.append(_returns_page(plt, reports["returns"]))
    metadata = {
        "Title": f"Progressive jackpot report {period.words()}",
        "Subject": f"made from the journal's head: {named}",
        "Keywords": named,
        "Creator": "jackpotd report pdf",
    }
    with create_file(out, RECORD) as file, PdfPages(file, metadata=metadata) as pdf:
        for figure in figures:
            pdf.savefig(figure)
            plt.close(figure)
    return len(figures)


def run(args: argparse.Namespace) -> int:
    """Write the period's PDF."""
    period = period_of(args)
    pages = write_pdf(journal_rows(args), period, args.out)
    print(f"wrote {args.out}: {pages} pages")
    return 0
