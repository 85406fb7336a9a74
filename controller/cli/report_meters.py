"""``jackpotd report meters``: each pool's and table's meters over a period, for regulators.

docs/operations.md, "The regulators' meters"; the figures are controller/reports/pool_meters.py's
(N.J.A.C. 13:69E-1.39A(b), 9 NYCRR 5320.8). The report names the journal head it was made
from, and its ``--json`` is checked by ``jackpotd verify --report`` like the returns report.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.cli.common import command
from controller.cli.report_period import (
    Period,
    add_period,
    document_of,
    journal_rows,
    period_of,
    print_opening,
)
from controller.cli.tables import Column, print_table
from controller.cli.times import local_time
from controller.effects import fraction_text
from controller.money import format_cents
from controller.reports.period import span
from controller.reports.pool_meters import meters

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

    from controller.effects import Balances
    from controller.reports.pool_meters import PoolMeters, TableFigures

KIND = "meters"
"""The ``report`` field of this report's JSON."""


def register(what: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report meters`` under ``report``."""
    parser = command(
        what,
        "meters",
        help="each pool's meters, hits, last 25 hits and adjustments, and each table's wagers",
        examples=(
            "  jackpotd report meters --from 2026-11-01 --to 2026-11-30\n"
            "  jackpotd report meters --json > meters-2026-11.json"
        ),
    )
    add_period(parser)
    parser.set_defaults(run=run)


def _balances(balances: Balances | None) -> dict[str, Any] | None:
    if balances is None:
        return None
    return {
        "meter": balances.meter,
        "reserve": balances.reserve,
        "overflow": balances.overflow,
        "contributions": balances.contributions,
        "paid_cents": balances.paid_cents,
        "house_funding_cents": balances.house_funding_cents,
        "reserve_funding_cents": balances.reserve_funding_cents,
        "adjustments_cents": balances.adjustments_cents,
    }


def _pool(pool_id: str, pool: PoolMeters) -> dict[str, Any]:
    return {
        "pool": pool_id,
        "qualifying_wagers": pool.wagers,
        "wagered_cents": pool.wagered_cents,
        "refunded_wagers": pool.refunded_wagers,
        "refunded_cents": pool.refunded_cents,
        "hits": pool.hits,
        "won_cents": pool.won_cents,
        "opening": _balances(pool.opening),
        "closing": _balances(pool.closing),
        "last_hits": [
            {
                "seq": hit.seq, "at": hit.at, "payout_id": hit.payout_id, "table": hit.table_id,
                "seat": hit.seat, "line": hit.line, "paid_cents": hit.paid_cents,
                "status": hit.status, "verified_by": hit.verified_by,
            }
            for hit in pool.last_hits
        ],
        "adjustments": [
            {
                "seq": adjusted.seq, "at": adjusted.at, "account": adjusted.account,
                "amount_cents": adjusted.amount_cents, "reason": adjusted.reason,
                "by": adjusted.by, "signed_by": list(adjusted.signed_by),
                "passkeys": adjusted.passkeys,
            }
            for adjusted in pool.adjustments
        ],
    }  # fmt: skip


def _table(table_id: str, table: TableFigures) -> dict[str, Any]:
    return {
        "table": table_id,
        "wagers": table.wagers,
        "wagered_cents": table.wagered_cents,
        "contributions": {
            pool: fraction_text(share) for pool, share in sorted(table.contributions.items())
        },
        "hits": table.hits,
        "won_from_meters_cents": table.won_from_meters_cents,
    }


def meters_document(
    rows: list[dict[str, Any]], start: datetime | None, end: datetime | None
) -> dict[str, Any]:
    """The report of the period of ``rows`` (in journal order), as its JSON gives it."""
    begin, stop = span(rows, start, end)
    found = meters(rows, begin, stop)
    return document_of(KIND, rows, (begin, stop), start, end) | {
        "pools": [_pool(pool_id, pool) for pool_id, pool in sorted(found.pools.items())],
        "tables": [_table(table_id, table) for table_id, table in sorted(found.tables.items())],
    }


def _cents(text: str) -> str:
    """An exact balance as whole cents shown (the fraction is carried, docs/money.md)."""
    return format_cents(int(Fraction(text)))


POOL_COLUMNS = (
    Column("pool", whole=True), Column("wagers", figures=True), Column("wagered", figures=True),
    Column("hits", figures=True), Column("won", figures=True), Column("meter", figures=True),
    Column("reserve", figures=True), Column("overflow", figures=True),
    Column("house seeds", figures=True),
)  # fmt: skip
HIT_COLUMNS = (
    Column("row", figures=True), Column("at"), Column("table", whole=True), Column("seat"),
    Column("line"), Column("paid", figures=True), Column("status"), Column("verified by"),
)  # fmt: skip
TABLE_COLUMNS = (
    Column("table", whole=True), Column("wagers", figures=True), Column("wagered", figures=True),
    Column("hits", figures=True), Column("won from meters", figures=True),
)  # fmt: skip


def pool_rows(report: dict[str, Any]) -> list[tuple[object, ...]]:
    """The report's pools as the rows of :data:`POOL_COLUMNS`."""
    return [
        (
            pool["pool"], pool["qualifying_wagers"], format_cents(pool["wagered_cents"]),
            pool["hits"], format_cents(pool["won_cents"]),
            *(
                _cents(pool["closing"][name]) if pool["closing"] else ""
                for name in ("meter", "reserve", "overflow")
            ),
            format_cents(pool["closing"]["house_funding_cents"]) if pool["closing"] else "",
        )
        for pool in report["pools"]
    ]  # fmt: skip


def hit_rows(pool: dict[str, Any]) -> list[tuple[object, ...]]:
    """A pool's last hits as the rows of :data:`HIT_COLUMNS`."""
    return [
        (
            hit["seq"], local_time(hit["at"]), hit["table"], hit["seat"], hit["line"] or "",
            format_cents(hit["paid_cents"]), hit["status"], hit["verified_by"] or "",
        )
        for hit in pool["last_hits"]
    ]  # fmt: skip


def adjustment_lines(pool: dict[str, Any]) -> list[str]:
    """A pool's adjustments, a line each, with who signed them."""
    lines = []
    for adjusted in pool["adjustments"]:
        signers = ", ".join(adjusted["signed_by"]) or "no signature (an unsigned journal)"
        lines.append(
            f"adjusted {pool['pool']} {adjusted['account']} by "
            f"{format_cents(adjusted['amount_cents'])} at row {adjusted['seq']} "
            f"({local_time(adjusted['at'])}): {adjusted['reason']}; signed by {signers}"
        )
    return lines


def table_rows(report: dict[str, Any]) -> list[tuple[object, ...]]:
    """The report's tables as the rows of :data:`TABLE_COLUMNS`."""
    return [
        (
            table["table"], table["wagers"], format_cents(table["wagered_cents"]),
            table["hits"], format_cents(table["won_from_meters_cents"]),
        )
        for table in report["tables"]
    ]  # fmt: skip


def _print(report: dict[str, Any], period: Period) -> None:
    print_opening("Meters", report, period)
    pools = report["pools"]
    print_table(POOL_COLUMNS, pool_rows(report))
    for pool in pools:
        print(f"\nThe last {len(pool['last_hits'])} hits of {pool['pool']}, newest first")
        print_table(HIT_COLUMNS, hit_rows(pool))
        for line in adjustment_lines(pool):
            print(line)
    print()
    print_table(TABLE_COLUMNS, table_rows(report))


def run(args: argparse.Namespace) -> int:
    """Print the period's meters."""
    period = period_of(args)
    report = meters_document(journal_rows(args), period.start, period.end)
    if getattr(args, "json", False):
        print(json.dumps({"from": period.since, "to": period.until} | report, indent=2))
        return 0
    _print(report, period)
    return 0
