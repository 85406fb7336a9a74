"""``jackpotd paytables``: list the seed paytables and the samples, or show one in full."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from controller.cli.common import command
from controller.cli.levels_view import level_terms_json, pays_text, print_level_terms
from controller.cli.tables import Column, print_table
from controller.money import format_cents, format_percent
from controller.rules.paytable_files import find_paytable, sample_paytables, seed_paytables

if TYPE_CHECKING:
    import argparse

    from controller.rules.paytable import Paytable


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``paytables`` and ``paytables show`` to the command line."""
    parser = command(
        commands,
        "paytables",
        help="list the seed paytables and the samples, or show one",
        examples="  jackpotd paytables\n  jackpotd paytables show progressive-1",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_list)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    show = command(
        actions,
        "show",
        help="print one paytable",
        examples=(
            "  jackpotd paytables show fortune-1\n  jackpotd paytables show ./house-1.toml --json"
        ),
    )
    show.add_argument("name", help="a paytable name (e.g. fortune-1) or a .toml file path")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(run=run_show)


SAMPLE_NOTE = "SAMPLE: no regulation prints these pays; an operator files their own"


def run_list(args: argparse.Namespace) -> int:
    """Print one line per seed paytable, then one per sample, marked as a sample."""
    tables = [*seed_paytables().values(), *sample_paytables().values()]
    if args.json:
        print(json.dumps([as_json(table) for table in tables], indent=2))
        return 0
    print_table(
        [Column("paytable", whole=True), Column("wager"), Column("joker"), Column("kind"),
         Column("title")],
        (
            (table.name, table.wager, table.joker.value, "SAMPLE" if table.sample else "seed",
             table.title)
            for table in tables
        ),
    )  # fmt: skip
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print one paytable as the seed lays it out, plus the source of every value."""
    table = find_paytable(args.name)
    if args.json:
        print(json.dumps(as_json(table), indent=2))
        return 0
    print(f"{table.title}  [{table.name}]")
    print(f"Source: {table.source}")
    print(f"Wager: {table.wager}; joker: {table.joker.value}")
    if table.sample:
        print(SAMPLE_NOTE)
    if (terms := table.progressive) is not None:
        returned = "returned" if terms.original_wager_returned else "not returned"
        print(f"Wager amount: {format_cents(terms.wager_cents)}")
        if terms.levels:
            print(f"Original wager {returned} to player")
            print_level_terms(terms)
        else:
            print(f"Meter seed: {format_cents(terms.meter_seed_cents)}")
            print(f"Rate of progression: {format_percent(terms.rate_of_progression)}")
            print(f"Reserve rate: {format_percent(terms.reserve_rate)}")
            print(f"Original wager {returned} to player")
    print()
    print_table(
        [Column("outcome"), Column("pays"), Column("envy", figures=True), Column("line")],
        (
            (row.outcome, pays_text(row),
             format_cents(row.envy_cents, always_cents=False) if row.envy_cents else "", row.line)
            for row in table.lines
        ),
    )  # fmt: skip
    return 0


def as_json(table: Paytable) -> dict[str, Any]:
    """A paytable as plain JSON types; money in integer cents, rates as exact percent text."""
    document: dict[str, Any] = {
        "name": table.name,
        "title": table.title,
        "wager": str(table.wager),
        "source": table.source,
        "joker": table.joker.value,
        "sample": table.sample,
        "lines": [
            {
                "line": str(row.line),
                "outcome": row.outcome,
                "pays": str(row.pays),
                "envy_cents": row.envy_cents,
                **({"level": row.level} if row.level else {}),
            }
            for row in table.lines
        ],
    }
    if (terms := table.progressive) is not None:
        document["progressive"] = {
            "wager_cents": terms.wager_cents,
            "meter_seed_cents": terms.meter_seed_cents,
            "rate_of_progression": format_percent(terms.rate_of_progression),
            "reserve_rate": format_percent(terms.reserve_rate),
            "original_wager_returned": terms.original_wager_returned,
        }
        if terms.levels:
            document["progressive"]["levels"] = level_terms_json(terms)
    return document
