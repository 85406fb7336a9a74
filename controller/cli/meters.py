"""``jackpotd meters``: every pool's meters and counters, as the journal has them now.

In the words of docs/operations.md ("Words"): a pool's **hits** are the jackpots won (pays from
its meter); the other pays of its paytable (fixed amounts) move no meter and are not counted
here (``jackpotd hits --kind progressive`` lists them).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from controller.cli.common import add_db, command, open_reader
from controller.cli.tables import Column, print_table
from controller.effects import fraction_text
from controller.money import format_cents, format_percent

if TYPE_CHECKING:
    import argparse

    from controller.ledger.pool import Pool


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``meters`` to the command line."""
    meters = command(
        commands,
        "meters",
        help="every pool's meters and counters",
        examples=(
            "  jackpotd meters\n"
            "  jackpotd meters --json | jq '.pools[] | {pool, meter_cents, hits}'"
        ),
    )
    add_db(meters)
    meters.set_defaults(run=run)


def pool_summary(pool: Pool) -> dict[str, Any]:
    """A pool's meters and counters as JSON (cents; exact amounts as fraction text)."""
    terms = pool.terms
    return {
        "pool": pool.pool_id,
        "paytable": terms.paytable,
        "revision": pool.revision,
        "meter_cents": pool.meter_cents,
        "meter_exact": fraction_text(pool.meter),
        "reserve_cents": pool.reserve_cents,
        "reserve_exact": fraction_text(pool.reserve),
        "overflow_cents": pool.overflow_cents,
        "overflow_exact": fraction_text(pool.overflow),
        "seed_cents": terms.seed_cents,
        "limit_cents": terms.limit_cents,
        "rate_of_progression": format_percent(terms.rate_of_progression),
        "reserve_rate": format_percent(terms.reserve_rate),
        "pending_revision": pool.pending_revision,
        "wagers": pool.wagers_count,
        "wagers_cents": pool.wagers_cents,
        "contributions_exact": fraction_text(pool.contributions),
        "hits": pool.hits_count,
        "paid_cents": pool.paid_cents,
        "house_funding_cents": pool.house_funding_cents,
        "reserve_funding_cents": pool.reserve_funding_cents,
        "adjustments_cents": pool.adjustments_cents,
        "state": pool_state(pool),
        "orphaned_exact": fraction_text(pool.orphaned),
        "last_hits": [
            {
                "hit": hit.hit_id,
                "table": hit.table_id,
                "seat": hit.seat,
                "line": hit.line,
                "amount_cents": hit.amount_cents,
            }
            for hit in pool.last_hits
        ],
    }


def pool_state(pool: Pool) -> str:
    """``in play``, or ``suspended: REASON`` / ``retired: REASON`` (docs/operations.md)."""
    return f"{pool.status}: {pool.status_reason}" if pool.status else "in play"


def _rows(pool: dict[str, Any]) -> list[tuple[str, str]]:
    """One pool's figures, each with what it is."""
    limit = pool["limit_cents"]
    queued = pool["pending_revision"]
    return [
        ("paytable", pool["paytable"]),
        ("revision", str(pool["revision"]) + (f" ({queued} queued)" if queued else "")),
        ("meter", format_cents(pool["meter_cents"])),
        ("seed", format_cents(pool["seed_cents"])),
        ("limit", format_cents(limit) if limit is not None else "none"),
        ("reserve", format_cents(pool["reserve_cents"])),
        ("overflow", format_cents(pool["overflow_cents"])),
        ("wagers", f"{pool['wagers']:,}"),
        ("wagered", format_cents(pool["wagers_cents"])),
        ("rate of progression", pool["rate_of_progression"]),
        ("reserve rate", pool["reserve_rate"]),
        ("hits (jackpots won)", f"{pool['hits']:,}"),
        ("paid from the meter", format_cents(pool["paid_cents"])),
        ("seeds paid by the house", format_cents(pool["house_funding_cents"])),
        ("seeds paid from the reserve", format_cents(pool["reserve_funding_cents"])),
        ("adjustments", format_cents(pool["adjustments_cents"])),
        ("state", pool["state"]),
    ]


def run(args: argparse.Namespace) -> int:
    """Print every pool: one column each, one row per figure."""
    with open_reader(args) as journal:
        pools = [pool_summary(pool) for _, pool in sorted(journal.state.pools.items())]
    if args.json:
        print(json.dumps({"pools": pools}, indent=2))
        return 0
    if not pools:
        print("no pools")
        return 0
    figures = [_rows(pool) for pool in pools]
    columns = [Column("pool"), *(Column(pool["pool"], figures=True) for pool in pools)]
    rows = [
        (label, *(figures[index][number][1] for index in range(len(pools))))
        for number, (label, _) in enumerate(figures[0])
    ]
    print_table(columns, rows)
    return 0
