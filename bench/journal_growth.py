"""Benchmark: how many bytes a round adds to the journal file, and where they go.

docs/operations.md, "Disk sizing"; docs/journal.md, "What a row stores".

Simulated tables of 6 seats and a dealer (:class:`drivers.simulator.SimulatedTable`: bets,
locks, cards, deal complete) play ``--rounds`` rounds each, side by side, through the
sequencer into a real journal file configured as the daemon configures it. The file's size is
read after the configuration and after the rounds, each time once the WAL has been
checkpointed into it (``PRAGMA wal_checkpoint(TRUNCATE)``): the difference, per round played,
is what a round costs on disk. SQLite's ``dbstat`` table then says which table or index holds
those bytes, and the journal's columns are summed to say what its rows are made of.

**The archived segment**: then the rows are archived as ``jackpotd archive --rows N``
archives them (:func:`controller.journal.sqlite.file_archive.archive`): first the
configuration's, then the rounds' into segments of their own, whose files' bytes per round
are what the rounds keep once archived (docs/journal.md, "Archives").

**The baseline**, in the same run: the same rows and materialized state written as schema 9
stored them (every row's canonical text, ``outcome`` and ``prev_hash``, the hash in hex, the
payouts' four indexes), by the copy the migration tests use
(``tests/support/journal/legacy_journal.py``), once after the configuration and once after the
rounds.

The targets: at most :data:`LIVE` bytes a round in the live journal and :data:`ARCHIVED` in an
archived segment.

Writes bench/results/journal_growth.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import REPO, SEATS, CaptureLink, Target, machine, print_targets, write_results
from durability import fresh_journal, run_sequencer

from controller.clock import utc_now
from controller.ledger_journal.sqlite import archive
from drivers.simulator import SimulatedTable, TablePlan

sys.path.insert(0, str(REPO / "tests"))  # the migration tests' copy in schema 9's layout
from support.journal.legacy_journal import legacy_copy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import DeviceInput

ROUNDS_PER_HOUR: Final = 30
"""The pace the sizing assumes: a Pai Gow Poker table deals about 30 rounds an hour."""
HOURS_PER_DAY: Final = 24
FLOOR_TABLES: Final = 1_000
LIVE: Final = Target("<= 6144 bytes a round in the live journal", 6144)
ARCHIVED: Final = Target("<= 1536 bytes a round in an archived segment", 1536)


def round_events(tables: Sequence[str], rounds: int, seed: int) -> list[DeviceInput]:
    """What ``rounds`` whole rounds of each table send, the tables playing side by side."""
    events: list[DeviceInput] = []
    rng = random.Random(seed)

    async def play(table_id: str) -> None:
        plan = TablePlan(table_id, seats=SEATS, progressive_wager_cents=100)
        table = SimulatedTable(plan, CaptureLink(events), random.Random(rng.random()), "d")
        for _ in range(rounds):
            await table.play_round()

    async def all_tables() -> None:
        await asyncio.gather(*(play(table_id) for table_id in tables))

    asyncio.run(all_tables())
    return events


def checkpointed_size(connection: sqlite3.Connection, path: Path) -> int:
    """The file's size once every committed page is in it (the WAL checkpointed, emptied)."""
    busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise RuntimeError("the WAL could not be checkpointed: a reader is still open")
    return path.stat().st_size


def pages_by_object(connection: sqlite3.Connection) -> dict[str, int]:
    """Pages each table and index takes (SQLite's ``dbstat``); empty if it is not built in."""
    try:
        rows = connection.execute("SELECT name, count(*) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {str(name): int(pages) for name, pages in rows}


def column_bytes(connection: sqlite3.Connection) -> dict[str, int]:
    """Bytes each column of the journal table holds, summed over its rows.

    SQLite's ``length()``: the bytes of a text or a blob, the digits of a number (an integer is
    stored in one to eight bytes).
    """
    columns = [str(row[1]) for row in connection.execute("PRAGMA table_info(journal)")]
    sums = ", ".join(f"coalesce(sum(length({name})), 0)" for name in columns)
    totals = connection.execute(f"SELECT {sums} FROM journal").fetchone()  # noqa: S608
    return dict(zip(columns, (int(total) for total in totals), strict=True))


def measure(path: Path) -> dict[str, Any]:
    """The file's checkpointed size, its pages by table and index, its journal columns."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        page_size = int(connection.execute("PRAGMA page_size").fetchone()[0])
        return {
            "bytes": checkpointed_size(connection, path),
            "page_size": page_size,
            "pages": pages_by_object(connection),
            "columns": column_bytes(connection),
        }
    finally:
        connection.close()


def growth(before: dict[str, Any], after: dict[str, Any], rounds: int) -> dict[str, Any]:
    """What the rounds added, per round: in all, by table or index, by journal column."""
    page_size = after["page_size"]
    by_object = {
        name: round((pages - before["pages"].get(name, 0)) * page_size / rounds)
        for name, pages in sorted(after["pages"].items(), key=lambda item: -item[1])
    }
    by_column = {
        name: round((total - before["columns"].get(name, 0)) / rounds)
        for name, total in after["columns"].items()
    }
    return {
        "bytes_per_round": round((after["bytes"] - before["bytes"]) / rounds),
        "by_table_or_index": {name: size for name, size in by_object.items() if size},
        "journal_columns": by_column,
    }


def sizing(bytes_per_round: float) -> dict[str, float]:
    """What a table and a floor write a day at the stated pace."""
    per_table_day = bytes_per_round * ROUNDS_PER_HOUR * HOURS_PER_DAY
    return {
        "rounds_per_table_per_day": ROUNDS_PER_HOUR * HOURS_PER_DAY,
        "mb_per_table_per_day": round(per_table_day / 1e6, 2),
        "gb_per_day_for_1000_tables": round(per_table_day * FLOOR_TABLES / 1e9, 1),
        "tb_per_year_for_1000_tables": round(per_table_day * FLOOR_TABLES * 365 / 1e12, 2),
    }


def play(
    directory: Path, tables: Sequence[str], pools: int, events: Sequence[DeviceInput]
) -> dict[str, dict[str, Any]]:
    """This version's and schema 9's figures, after the configuration and after the rounds.

    And the rounds' rows archived (``archived``: the segments' rows and bytes).
    """
    measured: dict[str, dict[str, Any]] = {}
    with fresh_journal(directory, tables, pools) as journal:
        path = journal.path
        configured = journal.head[0]
        measured["before"] = measure(path)
        measured["baseline_before"] = baseline(path, directory / "baseline-before.db")
        asyncio.run(run_sequencer(journal, events))
        played = journal.head[0]
    measured["after"] = measure(path)
    measured["baseline_after"] = baseline(path, directory / "baseline-after.db")
    measured["archived"] = archived(path, directory / "archive", configured, played)
    return measured


def archived(path: Path, folder: Path, configured: int, played: int) -> dict[str, Any]:
    """The rounds' rows archived: the segments' rows and bytes (the configuration's apart).

    The last row is never archived, so the configuration's segment ends one row before its
    last and the rounds' one row before theirs: the same number of rows as the rounds made.
    """
    folder.mkdir(parents=True, exist_ok=True)
    archive(path, folder, rows=configured - 1, now=utc_now())
    segments = archive(path, folder, rows=played - configured, now=utc_now())
    return {
        "segments": len(segments),
        "rows": sum(segment.rows for segment in segments),
        "bytes": sum((folder / segment.segment).stat().st_size for segment in segments),
    }


def baseline(path: Path, copy: Path) -> dict[str, Any]:
    """The figures of the journal at ``path`` copied into schema 9's layout."""
    copy.unlink(missing_ok=True)
    legacy_copy(path, copy, 9)
    return measure(copy)


def report(label: str, result: dict[str, Any]) -> None:
    """Print one layout's figures."""
    print(f"{label}: {result['bytes_per_round']:,} bytes per round")
    for name, size in result["by_table_or_index"].items():
        print(f"  {name:32s} {size:8,} bytes per round")
    columns = ", ".join(f"{name} {size:,}" for name, size in result["journal_columns"].items())
    print(f"  journal columns per round: {columns}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=25, help="rounds each table plays")
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    args = parser.parse_args(argv)
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-growth-", dir="/var/tmp"))
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = round_events(tables, args.rounds, args.seed)
    rounds = args.tables * args.rounds
    print(f"{rounds:,} rounds ({len(events):,} events) of {args.tables} tables, {SEATS} seats")
    measured = play(directory / "journal", tables, args.pools, events)
    old = growth(measured["baseline_before"], measured["baseline_after"], rounds)
    report("schema 9's layout (the baseline)", old)
    result = growth(measured["before"], measured["after"], rounds)
    report("this version", result)
    segments = measured["archived"] | {
        "bytes_per_round": round(measured["archived"]["bytes"] / rounds)
    }
    print(
        f"archived: {segments['bytes_per_round']:,} bytes per round in "
        f"{segments['segments']} segment(s) of {segments['rows']:,} rows"
    )
    daily, old_daily = sizing(result["bytes_per_round"]), sizing(old["bytes_per_round"])
    print(
        f"this version: {result['bytes_per_round']:,} bytes per round, "
        f"{result['bytes_per_round'] / old['bytes_per_round']:.0%} of schema 9's "
        f"{old['bytes_per_round']:,}"
    )
    print(
        f"at {ROUNDS_PER_HOUR} rounds an hour, {HOURS_PER_DAY} hours a day: "
        f"{daily['mb_per_table_per_day']} MB per table per day, "
        f"{daily['gb_per_day_for_1000_tables']} GB a day for {FLOOR_TABLES:,} tables "
        f"(schema 9: {old_daily['gb_per_day_for_1000_tables']} GB)"
    )
    results = {
        "benchmark": "journal_growth",
        "machine": machine(),
        "method": {
            "tables": args.tables,
            "rounds_per_table": args.rounds,
            "rounds": rounds,
            "events": len(events),
            "pools": args.pools,
            "seats": SEATS,
            "seed": args.seed,
            "measured": "file size after PRAGMA wal_checkpoint(TRUNCATE), after the "
            "configuration and after the rounds; the difference per round",
        },
        "this_version": result | {"sizing": daily},
        "baseline_schema_9": old | {"sizing": old_daily},
        "archived_segment": segments | {"sizing": sizing(segments["bytes_per_round"])},
        "targets": {
            "bytes_per_round": LIVE.judge(result["bytes_per_round"]),
            "archived_bytes_per_round": ARCHIVED.judge(segments["bytes_per_round"]),
        },
    }
    print_targets(results["targets"])
    written = write_results("journal_growth", results)
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {written}")


if __name__ == "__main__":
    main()
