"""Benchmark: the cost of durability, the journal against a bare SQLite insert loop.

docs/benchmarks.md.

Both write to a file on disk in WAL mode with ``synchronous=FULL`` (every commit is fsync'd),
in the same run, for several batch sizes (events per transaction):

* **journal**: ``Journal.append_many(batch)``: for each event the ledger applies it, the row
  (event, outcome, effects, hash chain) and the changed materialized state are written; one
  ``BEGIN IMMEDIATE ... COMMIT`` per batch.
* **bare**: a loop of plain ``INSERT`` s of rows of the same size (the event's JSON, an id and
  a hash-sized text), one ``BEGIN IMMEDIATE ... COMMIT`` per batch. It is what any durable
  store pays: the floor.

The events are what simulated tables of 6 seats and a dealer send
(:class:`drivers.simulator.SimulatedTable`: bets, locks, cards, deal complete), interleaved
across tables, on tables configured as the daemon configures them. The ratio journal/bare says
how close the journal stays to the floor; group commit (the sequencer puts everything waiting
into one transaction) is how it gets there under load. A last line runs the same events
through the sequencer itself, every table submitting concurrently, to show the batches it
forms, and another the ledger alone (applying the events in memory, no SQLite): what is
left of the journal's time once that is taken away is what the store and SQLite cost.

The targets, each against the bare loop of the same run: the sequencer's group commit, with
:data:`TABLES` tables submitting at once, at least 3 times bare SQLite committing each event
(the same durability without group commit: :data:`GROUP_COMMIT`), and the journal at
:data:`BATCH` events per commit at least 0.25 of bare SQLite at that batch
(:data:`AT_BATCH`). A run of other ``--tables``, or whose ``--batches`` leave out 1 or
:data:`BATCH`, does not measure the one that needs them (a few tables make batches of a few).

Writes bench/results/durability.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import SEATS, CaptureLink, Target, config_text, machine, print_targets, write_results

from controller.clock import utc_now
from controller.config.changes import config_events
from controller.config.load import parse_config
from controller.events import encode_event
from controller.journal.sqlite.store import PAGE_SIZE
from controller.ledger.apply import LedgerError, apply
from controller.ledger_journal.sqlite import Journal
from controller.runtime.broadcast import Broadcast
from controller.runtime.sequencer import Sequencer
from drivers.simulator import SimulatedTable, TablePlan

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import AnyEvent, DeviceInput
    from controller.ledger_journal import LedgerJournal

SITE = "durability"
BATCH: Final = 128
TABLES: Final = 40
GROUP_COMMIT: Final = Target(
    f">= 3x bare SQLite committing each event (the sequencer, {TABLES} tables at once)",
    3.0,
    at_least=True,
)
AT_BATCH: Final = Target(
    f">= 0.25 of bare SQLite at {BATCH} events per commit", 0.25, at_least=True
)


def device_events(tables: Sequence[str], count: int, seed: int) -> list[DeviceInput]:
    """At least ``count`` events of whole rounds, the tables playing side by side."""
    events: list[DeviceInput] = []
    rng = random.Random(seed)

    async def play(table_id: str) -> None:
        plan = TablePlan(table_id, seats=SEATS, progressive_wager_cents=100)
        table = SimulatedTable(plan, CaptureLink(events), random.Random(rng.random()), "d")
        while len(events) < count:
            await table.play_round()

    async def all_tables() -> None:
        await asyncio.gather(*(play(table_id) for table_id in tables))

    asyncio.run(all_tables())
    return events


def fresh_journal(
    directory: Path, tables: Sequence[str], pools: int, *, keep: bool = False
) -> Journal:
    """A new journal with the pools and tables configured, as the daemon starts one.

    ``keep``: in the folder as it is (an empty file made there first keeps its page size).
    """
    if not keep:
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
    path = directory / "journal.db"
    text = config_text(
        site=SITE, journal=path, tables=tables, pools=pools, transport="simulator", web_port=1
    )
    config = parse_config(text, "<durability>", directory)
    journal = Journal(path)
    receipts = journal.append_many(config_events(config, journal.state, utc_now()))
    if not all(receipt.applied for receipt in receipts):
        raise RuntimeError("the configuration was refused")
    return journal


def run_journal(journal: LedgerJournal, events: Sequence[AnyEvent], batch: int) -> float:
    """Seconds to append the events in batches of ``batch``."""
    start = time.perf_counter()
    for first in range(0, len(events), batch):
        journal.append_many(events[first : first + batch])
    return time.perf_counter() - start


def run_ledger(journal: Journal, events: Sequence[AnyEvent]) -> float:
    """Seconds for the ledger alone to apply the events in memory (no SQLite at all)."""
    state = journal.state
    start = time.perf_counter()
    for event in events:
        with contextlib.suppress(LedgerError):
            state, _effects = apply(state, event)
    return time.perf_counter() - start


def run_bare(directory: Path, events: Sequence[AnyEvent], batch: int) -> float:
    """Seconds to insert rows of the same size, one fsync'd commit per batch."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    connection = sqlite3.connect(directory / "bare.db", isolation_level=None)
    connection.execute(f"PRAGMA page_size={PAGE_SIZE}")  # the journal's, as every pragma here
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute(
        "CREATE TABLE log (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, "
        "event TEXT NOT NULL, hash TEXT NOT NULL)"
    )
    rows = [
        (event.event_id, encode_event(event).decode(), f"{index:064x}")
        for index, event in enumerate(events)
    ]
    start = time.perf_counter()
    for first in range(0, len(rows), batch):
        connection.execute("BEGIN IMMEDIATE")
        for row in rows[first : first + batch]:
            connection.execute("INSERT INTO log (event_id, event, hash) VALUES (?, ?, ?)", row)
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


async def every_table_at_once(sequencer: Sequencer, events: Sequence[DeviceInput]) -> None:
    """Every table submits its own events in order, all tables at once (as sources do)."""
    by_table: dict[str, list[DeviceInput]] = {}
    for event in events:
        by_table.setdefault(event.table_id, []).append(event)

    async def table(stream: list[DeviceInput]) -> None:
        for event in stream:
            await sequencer.submit(event)

    await asyncio.gather(*(table(stream) for stream in by_table.values()))


async def run_sequencer(journal: LedgerJournal, events: Sequence[DeviceInput]) -> dict[str, Any]:
    """The events through the sequencer, every table at once; its rate and batches."""
    sequencer = Sequencer(journal, Broadcast())
    runner = asyncio.create_task(sequencer.run())
    start = time.perf_counter()
    await every_table_at_once(sequencer, events)
    elapsed = time.perf_counter() - start
    runner.cancel()
    return {
        "events": len(events),
        "events_per_s": round(len(events) / elapsed, 1),
        "commits": sequencer.stats.commits,
        "events_per_commit": round(len(events) / sequencer.stats.commits, 1),
    }


def arguments(doc: str) -> argparse.ArgumentParser:
    """The options of a write-path benchmark (this one's and bench/postgres_durability.py's)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--events", type=int, default=6000)
    parser.add_argument("--batches", default="1,8,32,128,512", help="events per transaction")
    parser.add_argument("--tables", type=int, default=TABLES)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(__doc__).parse_args(argv)
    directory = args.workdir or Path(
        tempfile.mkdtemp(prefix="jackpotd-durability-", dir="/var/tmp")
    )
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = device_events(tables, args.events, args.seed)[: args.events]
    kinds: dict[str, int] = {}
    for event in events:
        kind = type(event).__struct_config__.tag
        kinds[str(kind)] = kinds.get(str(kind), 0) + 1
    print(f"{len(events):,} events of {args.tables} tables ({kinds}), best of {args.runs} runs")
    steps = []
    for batch in [int(item) for item in args.batches.split(",")]:
        journal_s, bare_s = [], []
        for _ in range(args.runs):  # interleaved, so that both see the same disk and load
            with fresh_journal(directory / "journal", tables, args.pools) as journal:
                synchronous = journal.db.execute("PRAGMA synchronous").fetchone()[0]
                if synchronous != 2:  # FULL
                    raise RuntimeError(f"the journal runs synchronous={synchronous}, not FULL")
                journal_s.append(run_journal(journal, events, batch))
            bare_s.append(run_bare(directory / "bare", events, batch))
        journal_rate = len(events) / min(journal_s)
        bare_rate = len(events) / min(bare_s)
        step = {
            "events_per_commit": batch,
            "events_per_s": round(journal_rate, 1),
            "bare_events_per_s": round(bare_rate, 1),
            "ratio_vs_bare": round(journal_rate / bare_rate, 3),
            "journal_ms_per_event": round(1000 / journal_rate, 4),
            "bare_ms_per_event": round(1000 / bare_rate, 4),
        }
        steps.append(step)
        print(
            f"batch {batch:4d}: journal {journal_rate:9,.0f} events/s, bare SQLite "
            f"{bare_rate:9,.0f} events/s, ratio {journal_rate / bare_rate:5.2f}"
        )
    with fresh_journal(directory / "journal", tables, args.pools) as journal:
        ledger_rate = len(events) / min(run_ledger(journal, events) for _ in range(args.runs))
    print(f"the ledger alone (in memory, no SQLite): {ledger_rate:,.0f} events/s")
    with fresh_journal(directory / "journal", tables, args.pools) as journal:
        through = asyncio.run(run_sequencer(journal, events))
    print(
        f"through the sequencer, {args.tables} tables at once: {through['events_per_s']:,.0f} "
        f"events/s, {through['events_per_commit']} events per commit"
    )
    # The same durability (every event on disk before it is acknowledged) is the bare loop
    # committing each insert on its own: what a store without group commit pays.
    floor = next((s for s in steps if s["events_per_commit"] == 1), None)
    summary = {
        "bare_one_commit_per_event_events_per_s": floor["bare_events_per_s"] if floor else None,
        "sequencer_events_per_s": through["events_per_s"],
        "sequencer_ratio_vs_bare_one_commit_per_event": (
            round(through["events_per_s"] / floor["bare_events_per_s"], 3) if floor else None
        ),
    }
    if floor:
        print(
            f"the sequencer's group commit against bare SQLite committing each event: "
            f"{summary['sequencer_ratio_vs_bare_one_commit_per_event']:.2f}x"
        )
    at_batch = next((s for s in steps if s["events_per_commit"] == BATCH), None)
    targets = {
        "sequencer_ratio_vs_bare_one_commit_per_event": GROUP_COMMIT.judge(
            summary["sequencer_ratio_vs_bare_one_commit_per_event"],
            reached=floor is not None and args.tables == TABLES,
        ),
        f"ratio_vs_bare_at_{BATCH}": AT_BATCH.judge(
            at_batch["ratio_vs_bare"] if at_batch else None, reached=at_batch is not None
        ),
    }
    print_targets(targets)
    results = {
        "benchmark": "durability",
        "machine": machine(),
        "method": {
            "events": len(events),
            "kinds": kinds,
            "tables": args.tables,
            "pools": args.pools,
            "runs": args.runs,
            "pragmas": "journal_mode=WAL, synchronous=FULL (both)",
            "workdir": str(directory),
        },
        "summary": summary,
        "targets": targets,
        "steps": steps,
        "ledger_only_events_per_s": round(ledger_rate, 1),
        "sequencer": through,
    }
    path = write_results("durability", results)
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
