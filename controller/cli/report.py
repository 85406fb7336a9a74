"""``jackpotd report``: reconcile every pool over a period from the journal's effects.

For each pool, per account, exactly (fractions of a cent included)::

    meter:    opening + contributions + seeds + overflow released +/- adjustments - wins
              - refunded = closing
    reserve:  opening + contributions - reseeds funded from the reserve +/- adjustments
              - refunded = closing
    overflow: opening + contributions - released +/- adjustments - refunded = closing

with the seed funding split between the reserve and the house, and ``refunded`` what voids
took back off each account (docs/money.md "Voids"). A period that does not balance
is reported as such and the command exits 1.

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
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from controller.cli import report_meters, report_pdf, report_returns, site_report
from controller.cli.common import CommandError, add_db, command, open_reader
from controller.cli.meters import pool_state
from controller.cli.report_mystery import mystery_levels, print_mystery, unchecked
from controller.cli.report_provenance import print_provenance, provenance
from controller.cli.tables import Column, print_table
from controller.cli.times import gaming_day, local_time, moment
from controller.effects import (
    Adjusted,
    Balances,
    Contributed,
    ContributionRefunded,
    MeterPaid,
    PoolDisposed,
    PoolTransfer,
    decode_effects,
)
from controller.effects import fraction_text as text
from controller.events import FaultRecorded, decode_event
from controller.journal import JournalError
from controller.journal.checkpoints import KIND as CHECKPOINT_KIND
from controller.money import format_cents
from controller.reports.period import row_time, span
from controller.runtime.clock_watch import BACKWARD_TOLERANCE_S, CLOCK_STEP, FAULT_SOURCE

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

ACCOUNTS = ("meter", "reserve", "overflow")


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


@dataclass(slots=True)
class PoolPeriod:
    """One pool's balances and flows over the period."""

    opening: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    closing: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    opening_totals: Balances | None = None
    closing_totals: Balances | None = None
    contributions: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    adjustments: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ACCOUNTS, 0))
    refunded: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    transferred: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    """What transfers between pools brought (+) or took (-), per account."""
    retired: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    """What a retirement disposed of (-), per account: a final award's and the orphaned."""
    final_award_cents: int = 0
    orphaned: Fraction = Fraction(0)
    wins_cents: int = 0
    hits: int = 0
    released: Fraction = Fraction(0)

    def pool_life(self, effect: PoolTransfer | PoolDisposed) -> None:
        """A transfer's or a retirement's flows (docs/money.md, "A pool's life")."""
        flows = self.transferred if isinstance(effect, PoolTransfer) else self.retired
        for account in ACCOUNTS:
            flows[account] += Fraction(getattr(effect, account))
        if isinstance(effect, PoolDisposed):
            self.final_award_cents += effect.award_cents
            self.orphaned += Fraction(effect.orphaned)

    def funding(self, name: str) -> int:
        """Seed funding from ``house`` or ``reserve`` during the period."""
        attribute = f"{name}_funding_cents"
        closing = getattr(self.closing_totals, attribute) if self.closing_totals else 0
        opening = getattr(self.opening_totals, attribute) if self.opening_totals else 0
        return int(closing - opening)

    def expected(self) -> dict[str, Fraction]:
        """Each account's closing balance as the flows say it must be."""
        house, reserve = self.funding("house"), self.funding("reserve")
        refunded = self.refunded
        return {
            "meter": self.opening["meter"] + self.contributions["meter"] + house + reserve
            + self.released + self.adjustments["meter"] - self.wins_cents - refunded["meter"]
            + self.transferred["meter"] + self.retired["meter"],
            "reserve": self.opening["reserve"] + self.contributions["reserve"] - reserve
            + self.adjustments["reserve"] - refunded["reserve"] + self.transferred["reserve"]
            + self.retired["reserve"],
            "overflow": self.opening["overflow"] + self.contributions["overflow"] - self.released
            + self.adjustments["overflow"] - refunded["overflow"] + self.transferred["overflow"]
            + self.retired["overflow"],
        }  # fmt: skip

    def balanced(self) -> bool:
        """Whether every account reconciles exactly."""
        return self.expected() == self.closing


def _balances(effect: Balances) -> dict[str, Fraction]:
    return {name: Fraction(getattr(effect, name)) for name in ACCOUNTS}


def reconcile(
    rows: list[dict[str, Any]], start: datetime | None, end: datetime | None
) -> dict[str, PoolPeriod]:
    """Every pool's period, from journal rows (taken in journal order, see :func:`span`)."""
    rows = sorted(rows, key=lambda row: int(row["seq"]))
    begin, stop = span(rows, start, end)
    periods: dict[str, PoolPeriod] = {}
    for index, row in enumerate(rows[:stop]):
        before = index < begin
        for effect in decode_effects(row["effects"]):
            pool_id = getattr(effect, "pool_id", None)
            if pool_id is None:
                continue
            period = periods.setdefault(pool_id, PoolPeriod())
            if isinstance(effect, Balances):
                if before:
                    period.opening, period.opening_totals = _balances(effect), effect
                period.closing, period.closing_totals = _balances(effect), effect
            elif before:
                continue
            elif isinstance(effect, Contributed):
                period.contributions["meter"] += Fraction(effect.to_meter)
                period.contributions["reserve"] += Fraction(effect.to_reserve)
                period.contributions["overflow"] += Fraction(effect.to_overflow)
            elif isinstance(effect, ContributionRefunded):
                period.refunded["meter"] += Fraction(effect.from_meter)
                period.refunded["reserve"] += Fraction(effect.from_reserve)
                period.refunded["overflow"] += Fraction(effect.from_overflow)
            elif isinstance(effect, MeterPaid):
                period.wins_cents += effect.paid_cents
                period.hits += 1
                period.released += Fraction(effect.from_overflow)
            elif isinstance(effect, Adjusted):
                period.adjustments[effect.account] += effect.amount_cents
            elif isinstance(effect, PoolTransfer | PoolDisposed):
                period.pool_life(effect)
    return periods


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which journal rows a period covers, and what the clock did among them."""

    first_seq: int | None
    last_seq: int | None
    clock_steps: list[tuple[int, str, str]]
    """Each clock-step fault journaled in the period: its row, time and detail."""
    dated_back: int
    """Rows dated more than 1 ms (the clock watch's tolerance) earlier than the row before
    them, a checkpoint aside (a clock step, journaled or not)."""

    def document(self) -> dict[str, Any]:
        """The coverage as the JSON report gives it."""
        return {
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "clock_steps": [f"row {seq} at {at}: {detail}" for seq, at, detail in self.clock_steps],
            "dated_back": self.dated_back,
        }


def coverage(rows: list[dict[str, Any]], start: datetime | None, end: datetime | None) -> Coverage:
    """The rows of the period (see :func:`span`) and the clock steps among them."""
    rows = sorted(rows, key=lambda row: int(row["seq"]))
    begin, stop = span(rows, start, end)
    inside = rows[begin:stop]
    steps = []
    for row in inside:
        if row["kind"] != "fault":
            continue
        try:
            event = decode_event(row["event"])
        except msgspec.MsgspecError as error:
            raise JournalError(f"row {row['seq']}: {error}") from error
        if isinstance(event, FaultRecorded) and (event.source, event.reason) == (
            FAULT_SOURCE,
            CLOCK_STEP,
        ):
            steps.append((int(row["seq"]), str(row["at"]), event.detail))
    back, before = 0, None
    for row in inside:
        at = row_time(row)
        if before is not None and (before - at).total_seconds() > BACKWARD_TOLERANCE_S:
            back += 1
        # A checkpoint is dated when it is signed, after the row it covers, so the rows dated
        # before it may be journaled after it: the next row is compared with the row before.
        if row["kind"] != CHECKPOINT_KIND:
            before = at
    first, last = (inside[0]["seq"], inside[-1]["seq"]) if inside else (None, None)
    return Coverage(first, last, steps, back)


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


def _account_rows(
    pool_id: str, period: PoolPeriod, *, transfers: bool = False, retirements: bool = False
) -> list[tuple[object, ...]]:
    """The pool's three accounts, each flow signed as it moves the account: they add up.

    ``transfers``, ``retirements``: with the column of transfers between pools, of what
    retirements disposed of (a period that had one).
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
            *((format_cents(int(period.transferred[account])),) if transfers else ()),
            *((format_cents(int(period.retired[account])),) if retirements else ()),
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
    transfers = any(any(period.transferred.values()) for period in periods.values())
    columns: tuple[Column, ...] = REPORT_COLUMNS
    if transfers:  # a column only for a period that had one: other reports read as they did
        at = [column.header for column in columns].index("adjustments") + 1
        columns = (*columns[:at], Column("transferred", figures=True), *columns[at:])
    retirements = any(any(period.retired.values()) for period in periods.values())
    if retirements:
        at = [column.header for column in columns].index("adjustments") + 1 + transfers
        columns = (*columns[:at], Column("retired", figures=True), *columns[at:])
    print_table(
        columns,
        [
            row
            for pool_id, period in sorted(periods.items())
            for row in _account_rows(pool_id, period, transfers=transfers, retirements=retirements)
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
