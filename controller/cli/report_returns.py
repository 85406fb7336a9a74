"""``jackpotd report returns``: each table's and pool's actual return against the theoretical.

docs/operations.md, "Actual against theoretical return"; the figures and the review flag are
controller/reports/returns.py's. The period is chosen as ``jackpotd report`` chooses it (a run
of journal rows, controller/cli/report.py), and the report names the journal head it was made
from (the last row's number and hash), so that anyone holding the journal can make it again
and compare. ``--json`` gives every figure exactly (fractions as ``n/d``) beside its decimal;
``--csv`` one line per group. It exits 1 when a group is flagged ``REVIEW``.
"""

from __future__ import annotations

import csv
import json
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.cli.common import checked, command
from controller.cli.report_period import (
    Period,
    add_period,
    document_of,
    journal_rows,
    period_of,
    print_opening,
)
from controller.cli.tables import Column, print_table
from controller.effects import fraction_text
from controller.money import format_cents
from controller.reports.period import span
from controller.reports.played import played
from controller.reports.returns import DEVIATION_POINTS, REVIEW, ReturnGroup, Z, returns

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

    from controller.reports.played import EnvyPaid


def register(what: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report returns`` under ``report``."""
    parser = command(
        what,
        "returns",
        help="each table's and pool's actual return against the theoretical at the meters played",
        examples=(
            "  jackpotd report returns --from 2026-11-01 --to 2026-11-30   # a month\n"
            "  jackpotd report returns --csv > returns.csv\n"
            "  jackpotd report returns --deviation 4 --json"
        ),
    )
    add_period(parser)
    parser.add_argument(
        "--deviation",
        type=checked(float, minimum=0, above=True),
        default=float(DEVIATION_POINTS),
        metavar="POINTS",
        help="flag a group whose actual return is further than this many points of return from "
        "the theoretical and outside the margin of chance (Ohio Adm. Code 3772-10-08(A))",
    )
    parser.add_argument("--csv", action="store_true", help="print CSV, a line per group")
    parser.set_defaults(run=run)


def percent(value: Fraction | float | None, places: int = 3) -> str:
    """A return as a percentage, rounded half up at ``places`` decimals; blank if none."""
    if value is None:
        return ""
    exact = Fraction(value) * 100
    scaled = round(abs(exact) * 10**places + Fraction(1, 10**9))
    sign = "-" if exact < 0 and scaled else ""
    whole, part = divmod(int(scaled), 10**places)
    return f"{sign}{whole}.{part:0{places}d}%"


def _groups(found: Any) -> list[tuple[str, str, str, ReturnGroup]]:  # noqa: ANN401
    """(kind, name, spot, group) in the order the report prints them."""
    rows: list[tuple[str, str, str, ReturnGroup]] = []
    for table_id in sorted(found.by_table):
        spots = sorted(spot for table, spot in found.by_table_spot if table == table_id)
        rows += [("table", table_id, spot, found.by_table_spot[table_id, spot]) for spot in spots]
        if len(spots) > 1:
            rows.append(("table", table_id, "all", found.by_table[table_id]))
    rows += [("pool", pool, "progressive", found.by_pool[pool]) for pool in sorted(found.by_pool)]
    return rows


def _document(
    kind: str, name: str, spot: str, group: ReturnGroup, deviation: Fraction
) -> dict[str, Any]:
    actual, theoretical, error = group.actual, group.theoretical, group.standard_error
    difference = None if actual is None or theoretical is None else actual - theoretical
    return {
        kind: name,
        "spot": spot,
        "paytables": sorted(group.paytables),
        "wagers": group.wagers,
        "staked_cents": group.staked_cents,
        "paid_back_cents": group.paid_back_cents,
        "actual": None if actual is None else fraction_text(actual),
        "actual_percent": percent(actual),
        "theoretical": None if theoretical is None else fraction_text(theoretical),
        "theoretical_percent": percent(theoretical),
        "deviation_percent": percent(difference),
        "margin_percent": percent(None if error is None else Z * error),
        "meter_hits": group.meter_hits,
        "unanalyzed_wagers": group.unanalyzed,
        "verdict": group.verdict(deviation),
    }


def _envy(envy: list[EnvyPaid]) -> dict[str, int]:
    paid: dict[str, int] = {}
    for bonus in envy:
        paid[bonus.table_id] = paid.get(bonus.table_id, 0) + bonus.win_cents
    return dict(sorted(paid.items()))


CSV_FIELDS = (
    "spot", "paytables", "wagers", "staked_cents", "paid_back_cents", "actual", "actual_percent",
    "theoretical", "theoretical_percent", "deviation_percent", "margin_percent",
    "meter_hits", "unanalyzed_wagers", "verdict",
)  # fmt: skip
COLUMNS = (
    Column("table or pool", whole=True), Column("spot"), Column("wagers", figures=True),
    Column("staked", figures=True), Column("paid back", figures=True),
    Column("actual", figures=True), Column("theoretical", figures=True),
    Column("deviation", figures=True), Column("margin", figures=True),
    Column("meter hits", figures=True), Column("verdict"),
)  # fmt: skip


KIND = "returns"
"""The ``report`` field of this report's JSON, by which ``jackpotd verify --report`` knows it."""


def returns_document(
    rows: list[dict[str, Any]],
    start: datetime | None,
    end: datetime | None,
    deviation: Fraction = DEVIATION_POINTS,
) -> dict[str, Any]:
    """The report of the period of ``rows`` (in journal order) as its JSON gives it.

    Everything in it is made from the rows and the three arguments, which it records (the
    period as the exact times a bare date stood for), so the same rows make the same document:
    ``jackpotd verify --report`` makes it again to check a saved one.
    """
    begin, stop = span(rows, start, end)
    wagers, envy = played(rows, begin, stop)
    found = returns(wagers)
    return document_of(KIND, rows, (begin, stop), start, end) | {
        "z": Z,
        "deviation_points": str(deviation),
        "groups": [_document(*group, deviation) for group in _groups(found)],
        "envy_paid_cents": _envy(envy),
    }


def run(args: argparse.Namespace) -> int:
    """Print the period's returns; exit 1 if any group is flagged for review."""
    period = period_of(args)
    rows = journal_rows(args)
    deviation = Fraction(args.deviation).limit_denominator(1000)
    report = returns_document(rows, period.start, period.end, deviation)
    documents: list[dict[str, Any]] = report["groups"]
    flagged = any(document["verdict"] == REVIEW for document in documents)
    if getattr(args, "json", False):
        print(json.dumps({"from": period.since, "to": period.until} | report, indent=2))
        return 1 if flagged else 0
    if args.csv:
        writer = csv.writer(sys.stdout)
        names = ["table", "pool", *CSV_FIELDS]
        writer.writerow(names)
        for document in documents:
            writer.writerow(
                [";".join(value) if isinstance(value, list) else value
                 for value in (document.get(name, "") for name in names)]
            )  # fmt: skip
        return 1 if flagged else 0
    _print(report, period, deviation)
    if flagged:
        print("at least one table or pool is flagged for review", file=sys.stderr)
    return 1 if flagged else 0


def table_rows(report: dict[str, Any]) -> list[tuple[object, ...]]:
    """The report's groups as the rows of :data:`COLUMNS`."""
    return [
        (
            document.get("table") or document.get("pool"), document["spot"],
            document["wagers"], format_cents(document["staked_cents"]),
            format_cents(document["paid_back_cents"]), document["actual_percent"],
            document["theoretical_percent"], document["deviation_percent"],
            document["margin_percent"] and f"±{document['margin_percent']}",
            document["meter_hits"], document["verdict"],
        )
        for document in report["groups"]
    ]  # fmt: skip


def _print(report: dict[str, Any], period: Period, deviation: Fraction) -> None:
    print_opening("Returns", report, period)
    print(
        f"actual against the exact theoretical at the meters played; margin = {Z} standard "
        f"errors; flagged beyond {deviation} points and the margin (docs/operations.md)"
    )
    print_table(COLUMNS, table_rows(report))
    for table_id, cents in report["envy_paid_cents"].items():
        print(f"Envy paid at {table_id}: {format_cents(cents)} (not part of any wager's return)")
