"""``jackpotd hits``: the jackpots won, and on request every other kind of pay.

The words are those of docs/operations.md, "Words": a **pay** is any amount won on a wager; a
**jackpot** is a pay from a pool's meter; a **hit** is a jackpot won (what a pool's hit counter
counts); **pending** is a pay awaiting a supervisor's verification. So ``jackpotd hits`` lists
jackpots; ``--kind`` lists other pays (the fixed pays of a progressive paytable, odds pays,
Envy); ``--pending`` lists every pay awaiting verification, whatever its kind, unless
``--kind`` narrows it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from controller.cli.common import CommandError, add_db, checked, command, open_reader
from controller.cli.tables import Column, print_table
from controller.cli.times import gaming_day, local_time, moment
from controller.journal.readonly import PayFilter, pay_kinds
from controller.money import format_cents

if TYPE_CHECKING:
    import argparse

    from controller.journal.reads import PayoutRecord

COLUMNS: Final = (
    Column("pay", whole=True), Column("time"), Column("table", whole=True),
    Column("seat", figures=True), Column("what"), Column("line"), Column("amount", figures=True),
    Column("status"), Column("pool", whole=True), Column("tax"),
)  # fmt: skip
NOUNS: Final = {"jackpot": "jackpots", "all": "pays"}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hits`` to the command line."""
    hits = command(
        commands,
        "hits",
        help="the jackpots won; other pays with --kind, those awaiting verification with --pending",
        description=(
            "Lists jackpots (pays from a pool's meter), the newest first. A pay is any amount "
            "won on a wager; a jackpot is a pay from a pool's meter; a hit is a jackpot won; "
            "pending is a pay awaiting a supervisor's verification (docs/operations.md, Words)."
        ),
        examples=(
            "  jackpotd hits                          # the jackpots won\n"
            "  jackpotd hits --pending                # every pay awaiting verification\n"
            "  jackpotd hits --kind all --since 2026-12-01 --limit 50\n"
            "  jackpotd hits --kind envy --json"
        ),
    )
    add_db(hits)
    hits.add_argument(
        "--kind",
        choices=list(pay_kinds()),
        help="which pays: jackpot (from a meter), progressive (fixed or from a meter), the odds "
        "pays of a wager, envy, or all (default: jackpot; with --pending, all)",
    )
    hits.add_argument(
        "--pending", action="store_true", help="only pays awaiting a supervisor's verification"
    )
    hits.add_argument("--pool", help="only this pool's pays")
    hits.add_argument(
        "--since",
        metavar="WHEN",
        help="from this ISO date or time on (UTC unless it carries an offset)",
    )
    hits.add_argument(
        "--limit", type=checked(int, minimum=1), metavar="N", help="at most N, the newest"
    )
    hits.set_defaults(run=run)


def what(record: PayoutRecord) -> str:
    """The pay's kind in the words of the command: jackpot, envy, or its wager's spot."""
    payout = record.payout
    if payout.kind == "envy":
        return "envy"
    if payout.kind == "progressive" and payout.from_meter_cents > 0:
        return "jackpot"
    return payout.spot


def status(record: PayoutRecord) -> str:
    """``PENDING``, ``PAID``, or ``PAID by`` whoever verified it."""
    if record.payout.status == "pending":
        return "PENDING"
    return f"PAID by {record.verified_by}" if record.verified_by else "PAID"


def run(args: argparse.Namespace) -> int:
    """Print the pays chosen, newest first."""
    kind = args.kind or ("all" if args.pending else "jackpot")
    chosen = PayFilter(
        kinds=(kind,),
        pending_only=args.pending,
        pool_id=args.pool,
        since=moment(args.since, option="--since", day=gaming_day(args)),
        limit=args.limit,
    )
    with open_reader(args) as journal:
        records = journal.pays(chosen)
        pools = sorted(journal.state.pools)
    if args.pool is not None and not records and args.pool not in pools:
        raise CommandError(
            f"--pool: no pool {args.pool!r} in this journal; its pools: "
            + (", ".join(pools) or "none")
        )
    if args.json:
        document: dict[str, Any] = {"kind": kind, "pending": args.pending}
        rows = [record.row() | {"what": what(record)} for record in records]
        print(json.dumps(document | {"pays": rows}, indent=2))
        return 0
    if not records:
        pending = " pending" if args.pending else ""
        print(f"no{pending} {NOUNS.get(kind, f'{kind} pays')}")
        return 0
    print_table(
        COLUMNS,
        (
            (
                record.payout.payout_id,
                local_time(record.at),
                record.payout.table_id,
                record.payout.seat,
                what(record),
                record.payout.line,
                format_cents(record.payout.win_cents),
                status(record),
                record.payout.pool_id or "",
                "report" if record.payout.tax_report else "",
            )
            for record in records
        ),
    )
    return 0
