"""``jackpotd report``: reconcile every pool over a period from the journal's effects.

For each pool, per account, exactly (fractions of a cent included), the opening balance and
the flows after it add up to the closing balance (controller/reports/reconciliation.py: the
contributions, the seeds, the overflow released, adjustments, wins, what voids refunded,
transfers and retirements, and what mystery hits moved past their triggers). A period that
does not balance is reported as such and the command exits 1.

**A period is a run of journal rows, in journal order (seq).** Times (``at``) come from the
controller's wall clock, which can step (docs/faults.md, "Clock steps"), so they are not
always in order. The times only choose where the run starts and ends: the period opens at
the first row dated ``--from`` or later, and closes before the first row dated after ``--to``.
Every row in between belongs to it whatever its time says, and no row belongs to two
periods: consecutive reports (one gaming day after another) cover every row exactly once.
The report names the rows it covers, the clock steps journaled among them, and how many rows
are dated earlier than the row before, so that a step is never silent; and who wrote the
period's rows and how much of each table's device input its table agent signed
(controller/cli/report_provenance.py); and each mystery level's draws, commitments and reveals,
each reveal checked (controller/cli/report_mystery.py), exiting 1 for one that does not check.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from controller.cli import report_meters, report_pdf, report_returns, site_report
from controller.cli.common import CommandError, add_db, command, open_reader
from controller.cli.meters import pool_state
from controller.cli.report_mystery import mystery_levels, print_mystery, unchecked
from controller.cli.report_provenance import print_provenance, provenance
from controller.cli.tables import Column, print_table
from controller.cli.times import gaming_day, local_time, moment
from controller.effects import fraction_text as text
from controller.money import format_cents
from controller.reports.coverage import Coverage, coverage
from controller.reports.period import span
from controller.reports.reconciliation import ACCOUNTS, PoolPeriod, reconcile

if TYPE_CHECKING:
    import argparse
    from datetime import datetime
    from fractions import Fraction


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report`` to the command line."""
    report = command(
        commands,
        "report",
        help="reconcile every pool over a period",
        examples=(
            "  jackpotd report --from 2026-12-01 --to 2026-12-01   # one gaming day\n"
            "  jackpotd report --from 2026-12-01T06:00-05:00 --to 2026-12-02T05:59:59-05:00\n"
            "  jackpotd report --json\n"
            "  jackpotd report sites   # at central: each linked property (docs/wide-area.md)\n"
            "  jackpotd report returns --from 2026-11-01 --to 2026-11-30  # against theoretical\n"
            "  jackpotd report meters --from 2026-11-01 --to 2026-11-30   # the regulators' meters"
        ),
    )
    add_db(report)
    report.add_argument(
        "--from",
        dest="start",
        metavar="WHEN",
        help="ISO time, UTC unless it carries an offset, or a date: from the start of that "
        "gaming day ([controller] gaming_day_start, time_zone) (default: the first row)",
    )
    report.add_argument(
        "--to",
        dest="end",
        metavar="WHEN",
        help="ISO time, UTC unless it carries an offset, or a date: to the end of that "
        "gaming day (default: the last row)",
    )
    report.set_defaults(run=run)
    what = report.add_subparsers(dest="report_of", metavar="WHAT")
    site_report.register(what)
    report_returns.register(what)
    report_meters.register(what)
    report_pdf.register(what)


def _document(pool_id: str, period: PoolPeriod) -> dict[str, Any]:
    return {
        "pool": pool_id,
        "opening": {name: text(value) for name, value in period.opening.items()},
        "closing": {name: text(value) for name, value in period.closing.items()},
        "contributions": {name: text(value) for name, value in period.contributions.items()},
        "refunded_by_voids": {name: text(value) for name, value in period.refunded.items()},
        "wins_cents": period.wins_cents,
        "hits": period.hits,
        "house_funding_cents": period.funding("house"),
        "reserve_funding_cents": period.funding("reserve"),
        "overflow_released": text(period.released),
        "adjustments_cents": period.adjustments,
        "transferred": {name: text(value) for name, value in period.transferred.items()},
        "retired": {name: text(value) for name, value in period.retired.items()},
        "past_triggers": {name: text(value) for name, value in period.passed.items()},
        "final_award_cents": period.final_award_cents,
        "orphaned": text(period.orphaned),
        "balanced": period.balanced(),
    }


def _print_coverage(covered: Coverage) -> None:
    if covered.first_seq is None:
        print("journal rows: none in this period")
    else:
        print(f"journal rows {covered.first_seq} to {covered.last_seq}")
    if covered.clock_steps or covered.dated_back:
        print(
            "the clock stepped: rows dated earlier than the row before them: "
            f"{covered.dated_back}; rows are taken in journal order"
        )
        for seq, at, detail in covered.clock_steps:
            print(f"  clock step, row {seq} at {local_time(at)}: {detail}")


OPTIONAL_FLOWS = ("transferred", "retired", "past trigger")
"""Flow columns shown only for a period that had one, so that other reports read as they did:
transfers between pools, what retirements disposed of, what mystery hits moved past their
triggers."""


def _optional_flow(period: PoolPeriod, column: str) -> dict[str, Fraction]:
    flows = {"transferred": period.transferred, "retired": period.retired}
    return flows.get(column, period.passed)


def _account_rows(
    pool_id: str, period: PoolPeriod, optional: tuple[str, ...] = ()
) -> list[tuple[object, ...]]:
    """The pool's three accounts, each flow signed as it moves the account: they add up.

    ``optional``: the flow columns of :data:`OPTIONAL_FLOWS` the report shows, in order.
    """
    cents = {name: format_cents(int(value)) for name, value in period.contributions.items()}
    house, reserve = period.funding("house"), period.funding("reserve")
    expected = period.expected()
    flows = {
        "meter": (house + reserve, int(period.released), -period.wins_cents),
        "reserve": (-reserve, None, None),
        "overflow": (None, -int(period.released), None),
    }
    rows: list[tuple[object, ...]] = []
    for account in ACCOUNTS:
        seeds, released, paid = flows[account]
        rows.append((
            pool_id, account, format_cents(int(period.opening[account])), cents[account],
            *("" if flow is None else format_cents(flow) for flow in (seeds, released)),
            format_cents(period.adjustments[account]),
            *(format_cents(int(_optional_flow(period, column)[account])) for column in optional),
            "" if paid is None else format_cents(paid),
            period.hits if account == "meter" else "",
            format_cents(-int(period.refunded[account])),
            format_cents(int(period.closing[account])),
            "yes" if expected[account] == period.closing[account] else "NO",
        ))  # fmt: skip
    return rows


REPORT_COLUMNS = (
    Column("pool", whole=True), Column("account"), Column("opening", figures=True),
    Column("contributions", figures=True), Column("seeds", figures=True),
    Column("released", figures=True), Column("adjustments", figures=True),
    Column("paid", figures=True), Column("hits", figures=True),
    Column("refunded by voids", figures=True), Column("closing", figures=True),
    Column("balanced"),
)  # fmt: skip


def _when(value: datetime | None, otherwise: str) -> str:
    return local_time(value.isoformat()) if value is not None else otherwise


def run(args: argparse.Namespace) -> int:
    """Print the reconciliation; exit 1 if any pool does not balance."""
    day = gaming_day(args)
    start = moment(args.start, option="--from", day=day)
    end = moment(args.end, option="--to", end=True, day=day)
    if start is not None and end is not None and start > end:
        raise CommandError(f"--from {args.start} is after --to {args.end}")
    with open_reader(args) as journal:
        rows = list(journal.rows())
        origins = dict(journal.provenances())
        states = {pool_id: pool_state(pool) for pool_id, pool in journal.state.pools.items()}
    periods = reconcile(rows, start, end)
    covered = coverage(rows, start, end)
    ordered = sorted(rows, key=lambda row: int(row["seq"]))
    begin, stop = span(ordered, start, end)
    found = provenance(ordered[begin:stop], origins)
    mystery = mystery_levels(ordered, begin, stop)  # none: a journal without a mystery level
    documents = [
        _document(pool_id, period) | {"state": states.get(pool_id, "in play")}
        for pool_id, period in sorted(periods.items())
    ]
    ok = all(document["balanced"] for document in documents)
    checked = not unchecked(mystery)
    if args.json:
        report = {"from": args.start, "to": args.end, "rows": covered.document()}
        report |= {"provenance": found.document(), "pools": documents}
        report |= {"mystery_levels": mystery} if mystery else {}
        print(json.dumps(report | {"balanced": ok}, indent=2))
        return 0 if ok and checked else 1
    print(f"Reconciliation from {_when(start, 'the start')} to {_when(end, 'now')}")
    _print_coverage(covered)
    print("Each account's row adds up: opening + the flows after it = closing (docs/money.md).")
    optional = tuple(
        column
        for column in OPTIONAL_FLOWS
        if any(any(_optional_flow(period, column).values()) for period in periods.values())
    )
    at = [column.header for column in REPORT_COLUMNS].index("adjustments") + 1
    extra = tuple(Column(column, figures=True) for column in optional)
    columns = (*REPORT_COLUMNS[:at], *extra, *REPORT_COLUMNS[at:])
    print_table(
        columns,
        [
            row
            for pool_id, period in sorted(periods.items())
            for row in _account_rows(pool_id, period, optional)
        ],
    )
    for pool_id, state in sorted(states.items()):
        if state != "in play":  # out of play now (docs/operations.md, "A pool's life")
            print(f"pool {pool_id} is {state}")
    print_mystery(mystery)
    print_provenance(found)
    if not ok:
        print("at least one pool does not balance", file=sys.stderr)
    if not checked:
        print("at least one mystery reveal does not check", file=sys.stderr)
    return 0 if ok and checked else 1
