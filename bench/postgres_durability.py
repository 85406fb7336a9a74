"""Benchmark: the PostgreSQL journal's write path beside the SQLite file's, in the same run.

docs/ha.md, "The write path, measured".

Both journals take the same events (simulated tables' bets, locks, cards and deals,
interleaved across tables, as bench/durability.py makes them) on the same configuration,
each durable as production runs it: the file in WAL mode with ``synchronous=FULL``; the
database with ``fsync``, ``synchronous_commit`` and ``full_page_writes`` on (the journal
refuses a server without them). For several batch sizes (events per transaction) it measures
``append_many`` (group commit: the ledger applies each event, the rows and the changed
materialized state are written, one ``COMMIT`` per batch), then the sequencer itself with
every table submitting at once, which forms its own batches. The ratio database/file says
what moving the journal off the box's file costs on the write path; both run on the same
disk, interleaved, best of several runs.

PostgreSQL is started for the run and removed after it, as the tests start theirs
(tests/support/journal/postgres.py: ``initdb`` and ``pg_ctl`` on a free loopback port, as the
``postgres`` user when run as root), its data directory on the same disk as the file.
The server is local: a network between the controller and the database adds its round
trips (a few per batch) to every commit.

Writes bench/results/postgres_durability.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import config_text, machine, write_results
from durability import arguments, device_events, fresh_journal, run_journal, run_sequencer

from controller.clock import utc_now
from controller.config.changes import config_events
from controller.config.load import parse_config
from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import PostgresJournal

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.journal.postgres import PostgresServer, start_server, stop_server

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator, Sequence

SITE = "postgres-durability"


@contextlib.contextmanager
def fresh_database(
    server: PostgresServer, directory: Path, tables: Sequence[str], pools: int
) -> Iterator[PostgresJournal]:
    """A new database's journal with the pools and tables configured; dropped after."""
    name = server.create_database()
    url = DatabaseUrl(server.url(name))
    text = config_text(
        site=SITE, journal=directory / "unused.db", tables=tables, pools=pools,
        transport="simulator", web_port=1,
    )  # fmt: skip
    config = parse_config(text, "<postgres-durability>", directory)
    journal = PostgresJournal(url)
    try:
        receipts = journal.append_many(config_events(config, journal.state, utc_now()))
        if not all(receipt.applied for receipt in receipts):
            raise RuntimeError("the configuration was refused")
        yield journal
    finally:
        journal.close()
        server.drop_database(name)


def _settings(server: PostgresServer) -> dict[str, str]:
    """The server's durability settings, as the journal checks them."""
    import psycopg  # noqa: PLC0415 - only the benchmark reads them

    names = ("fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "server_version")
    with psycopg.connect(server.url(), autocommit=True) as connection:
        rows = connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)", [list(names)]
        ).fetchall()
    return {str(name): str(setting) for name, setting in rows}


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(__doc__).parse_args(argv)
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-pg-bench-", dir="/var/tmp"))
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = device_events(tables, args.events, args.seed)[: args.events]
    tempfile.tempdir = str(directory.parent)  # the cluster on the file's disk
    server = start_server()
    try:
        results = _measure(server, directory, tables, events, args)
    finally:
        stop_server(server)
        tempfile.tempdir = None
    path = write_results("postgres_durability", results)
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


def _measure(
    server: PostgresServer,
    directory: Path,
    tables: list[str],
    events: Sequence[Any],
    args: argparse.Namespace,
) -> dict[str, Any]:
    settings = _settings(server)
    print(
        f"{len(events):,} events of {args.tables} tables, best of {args.runs} runs; PostgreSQL "
        f"{settings.get('server_version')} on 127.0.0.1 (fsync={settings.get('fsync')}, "
        f"synchronous_commit={settings.get('synchronous_commit')})"
    )
    steps = []
    for batch in [int(item) for item in args.batches.split(",")]:
        file_s, database_s = [], []
        for _ in range(args.runs):  # interleaved: both see the same disk and load
            with fresh_journal(directory / "journal", tables, args.pools) as journal:
                file_s.append(run_journal(journal, events, batch))
            with fresh_database(server, directory, tables, args.pools) as database:
                database_s.append(run_journal(database, events, batch))
        file_rate, database_rate = len(events) / min(file_s), len(events) / min(database_s)
        steps.append({
            "events_per_commit": batch,
            "sqlite_events_per_s": round(file_rate, 1),
            "postgresql_events_per_s": round(database_rate, 1),
            "ratio_postgresql_vs_sqlite": round(database_rate / file_rate, 3),
            "sqlite_ms_per_event": round(1000 / file_rate, 4),
            "postgresql_ms_per_event": round(1000 / database_rate, 4),
        })  # fmt: skip
        print(
            f"batch {batch:4d}: SQLite {file_rate:9,.0f} events/s, PostgreSQL "
            f"{database_rate:9,.0f} events/s, ratio {database_rate / file_rate:5.2f}"
        )
    with fresh_journal(directory / "journal", tables, args.pools) as journal:
        file_through = asyncio.run(run_sequencer(journal, events))
    with fresh_database(server, directory, tables, args.pools) as database:
        database_through = asyncio.run(run_sequencer(database, events))
    ratio = database_through["events_per_s"] / file_through["events_per_s"]
    print(
        f"through the sequencer, {args.tables} tables at once: SQLite "
        f"{file_through['events_per_s']:,.0f} events/s ({file_through['events_per_commit']} per "
        f"commit), PostgreSQL {database_through['events_per_s']:,.0f} events/s "
        f"({database_through['events_per_commit']} per commit), ratio {ratio:.2f}"
    )
    return {
        "benchmark": "postgres_durability",
        "machine": machine(),
        "method": {
            "events": len(events),
            "tables": args.tables,
            "pools": args.pools,
            "runs": args.runs,
            "sqlite": "journal_mode=WAL, synchronous=FULL",
            "postgresql": settings,
            "server": "local, 127.0.0.1 (no network round trip beyond loopback)",
            "workdir": str(directory),
        },
        "summary": {
            "sqlite_sequencer_events_per_s": file_through["events_per_s"],
            "postgresql_sequencer_events_per_s": database_through["events_per_s"],
            "sequencer_ratio_postgresql_vs_sqlite": round(ratio, 3),
        },
        "steps": steps,
        "sequencer": {"sqlite": file_through, "postgresql": database_through},
    }


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"({time.perf_counter() - start:.0f} s)")
