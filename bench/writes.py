"""Benchmark: bytes written to storage per event, and which b-trees each commit writes.

docs/benchmarks.md, "Writes per event".

A table controller keeps its journal on an SD card or eMMC, which wears with every block
written; at the loads tables make (tens of events a second) the sequencer commits about one
event at a time, so what counts is what one commit writes. Each line here appends events to a
file on disk in WAL mode with ``synchronous=FULL``, as the daemon does, and reads the bytes
the process caused to be written (``write_bytes`` of ``/proc/self/io``, the figure
bench/throughput.py gives for the daemon), split into:

* **WAL**: the commits (their frames, and the ``fsync`` of each);
* **checkpoint**: the write-back of the WAL into the database file, run as SQLite's
  ``wal_autocheckpoint`` runs it (a ``PASSIVE`` checkpoint once the WAL holds that many
  frames), but measured apart.

The lines, in the same run:

* **bare**: a plain ``INSERT`` of one small row per commit, no index but the rowid: the floor
  of any durable commit. The file system writes whole blocks (4 KiB) and a WAL frame (a
  24-byte header and a page) is never aligned to one, so even this commit dirties one or two
  blocks, and ``write_bytes`` counts what the storage receives: blocks;
* **bare + unique id**: the same with the event's id ``UNIQUE``, rows of the journal's size:
  the floor of a store that refuses a replayed id from its own file;
* **journal**: ``Journal.append_many`` of one event per commit (``--batches`` adds lines of
  several: what a group commit's window would save). The WAL's frame headers name the page
  each commit wrote, and ``dbstat`` which b-tree each page belongs to: the frames per commit
  of each table and index.

Every page size of ``--page-sizes`` gets its lines (a new file takes the journal's
:data:`~controller.journal.sqlite.store.PAGE_SIZE`; an existing one keeps its own). The events are
what simulated tables send (bench/durability.py), interleaved across ``--tables`` tables.

Writes bench/results/writes.json.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sqlite3
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import Target, machine, print_targets, write_results
from durability import device_events, fresh_journal

from controller.events import encode_event
from controller.journal.sqlite.store import PAGE_SIZE

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent

WAL_HEADER: Final = 32
FRAME_HEADER: Final = 24
AUTOCHECKPOINT: Final = 1000
"""SQLite's default ``wal_autocheckpoint`` (frames), which the journal keeps."""
TARGET: Final = Target("<= 2048 bytes per event at one event per commit", 2048)
"""The daemon's target at the loads tables make (bench/throughput.py judges it there), on
the journal's own commits in process (docs/benchmarks.md, "Writes per event")."""
WARM: Final = 300
"""Events appended before measuring, so that the b-trees have their working shape."""


def written() -> int:
    """Bytes this process has caused to be written to storage so far."""
    for line in Path("/proc/self/io").read_text().splitlines():
        key, _, value = line.partition(":")
        if key == "write_bytes":
            return int(value)
    raise RuntimeError("no write_bytes in /proc/self/io")


class WalFrames:
    """The page numbers of the frames appended to a WAL since the last call (headers only)."""

    def __init__(self, wal: Path, page_size: int) -> None:
        self.wal, self.page_size = wal, page_size
        self.salts = b""
        self.next = 0

    def new(self) -> list[int]:
        """The frames written since the last call, from the current generation of the WAL."""
        with self.wal.open("rb") as file:
            header = file.read(WAL_HEADER)
            if len(header) < WAL_HEADER:
                return []
            if header[16:24] != self.salts:  # restarted after a checkpoint
                self.salts, self.next = header[16:24], 0
            pages = []
            while True:
                file.seek(WAL_HEADER + self.next * (FRAME_HEADER + self.page_size))
                frame = file.read(FRAME_HEADER)
                if len(frame) < FRAME_HEADER or frame[8:16] != self.salts:
                    return pages
                pages.append(struct.unpack(">I", frame[:4])[0])
                self.next += 1


@dataclass
class Measured:
    """What a run of commits wrote."""

    events: int = 0
    commits: int = 0
    wal_bytes: int = 0
    checkpoint_bytes: int = 0
    checkpoints: int = 0
    frames: collections.Counter[int] = field(default_factory=collections.Counter)

    def figures(self, names: dict[int, str]) -> dict[str, Any]:
        """Per event and per commit, and the frames of each b-tree per commit."""
        total = self.wal_bytes + self.checkpoint_bytes
        by_tree: collections.Counter[str] = collections.Counter()
        for page, count in self.frames.items():
            by_tree[names.get(page, "(freed)")] += count
        return {
            "events": self.events,
            "commits": self.commits,
            "bytes_per_event": round(total / self.events),
            "wal_bytes_per_event": round(self.wal_bytes / self.events),
            "checkpoint_bytes_per_event": round(self.checkpoint_bytes / self.events),
            "checkpoints": self.checkpoints,
            "frames_per_commit": round(sum(self.frames.values()) / self.commits, 2),
            "frames_per_commit_by_btree": {
                name: round(count / self.commits, 2) for name, count in by_tree.most_common()
            },
        }


def measure(
    connection: sqlite3.Connection,
    database: Path,
    page_size: int,
    commits: Sequence[Callable[[], int]],
) -> dict[str, Any]:
    """Run each commit (it returns its events), the WAL and the checkpoints measured apart."""
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("PRAGMA wal_autocheckpoint=0")  # run below, as SQLite would, measured
    wal = WalFrames(Path(f"{database}-wal"), page_size)
    measured = Measured()
    for commit in commits:
        before = written()
        measured.events += commit()
        measured.wal_bytes += written() - before
        measured.commits += 1
        measured.frames.update(wal.new())
        if wal.next >= AUTOCHECKPOINT:
            before = written()
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            measured.checkpoint_bytes += written() - before
            measured.checkpoints += 1
    connection.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT}")
    names = {int(page): str(name) for name, page in connection.execute(DBSTAT)}
    return measured.figures(names)


DBSTAT: Final = "SELECT name, pageno FROM dbstat"


def new_file(path: Path, page_size: int) -> None:
    """An empty WAL file of ``page_size`` bytes a page (the journal then keeps that size)."""
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA page_size={page_size}")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.close()


def run_bare(
    directory: Path, page_size: int, events: Sequence[AnyEvent], *, unique: bool
) -> dict[str, Any]:
    """One row per commit: small and unindexed, or the event's size with its id unique."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    path = directory / "bare.db"
    new_file(path, page_size)
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous=FULL")
    if unique:
        connection.execute(
            "CREATE TABLE log (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, "
            "event TEXT NOT NULL, hash BLOB NOT NULL)"
        )
        rows = [
            (event.event_id, encode_event(event).decode(), index.to_bytes(32))
            for index, event in enumerate(events)
        ]
    else:
        connection.execute("CREATE TABLE log (seq INTEGER PRIMARY KEY, event_id, event, hash)")
        rows = [(str(index), "", b"") for index in range(len(events))]
    insert = "INSERT INTO log (event_id, event, hash) VALUES (?, ?, ?)"
    connection.executemany(insert, rows[:WARM])

    def one(row: tuple[str, str, bytes]) -> Callable[[], int]:
        def commit() -> int:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(insert, row)
            connection.execute("COMMIT")
            return 1

        return commit

    try:
        return measure(connection, path, page_size, [one(row) for row in rows[WARM:]])
    finally:
        connection.close()


def run_journal(
    directory: Path,
    page_size: int,
    tables: Sequence[str],
    events: Sequence[AnyEvent],
    batch: int,
) -> dict[str, Any]:
    """``Journal.append_many`` of ``batch`` events per commit, on a new journal file."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    new_file(directory / "journal.db", page_size)
    journal = fresh_journal(directory, tables, 4, keep=True)
    journal.append_many(events[:WARM])
    rest = events[WARM:]

    def one(chunk: Sequence[AnyEvent]) -> Callable[[], int]:
        def commit() -> int:
            journal.append_many(chunk)
            return len(chunk)

        return commit

    commits = [one(rest[first : first + batch]) for first in range(0, len(rest), batch)]
    try:
        return measure(journal.db.conn, journal.path, page_size, commits)
    finally:
        journal.close()


def _line(name: str, figures: dict[str, Any]) -> str:
    trees = ", ".join(
        f"{tree} {count}" for tree, count in figures["frames_per_commit_by_btree"].items()
    )
    return (
        f"  {name:26s} {figures['bytes_per_event']:>7,} B/event (WAL "
        f"{figures['wal_bytes_per_event']:,}, checkpoint {figures['checkpoint_bytes_per_event']:,})"
        f"; {figures['frames_per_commit']} frames/commit: {trees}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--commits", type=int, default=1500, help="commits measured per line")
    parser.add_argument(
        "--page-sizes", default=f"1024,{PAGE_SIZE},4096", help="bytes a page, comma-separated"
    )
    parser.add_argument(
        "--batches", default="1,2,4", help="events per journal commit, comma-separated, 1 first"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    parser.add_argument("--output", default="writes", help="bench/results/<name>.json")
    args = parser.parse_args(argv)
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-writes-", dir="/var/tmp"))
    tables = [f"T{number}" for number in range(1, args.tables + 1)]
    batches = [int(item) for item in args.batches.split(",")]
    events = device_events(tables, WARM + args.commits * max(batches), args.seed)
    lines: list[dict[str, Any]] = []
    for page_size in [int(item) for item in args.page_sizes.split(",")]:
        print(f"page size {page_size}:", flush=True)
        runs: list[tuple[str, dict[str, Any]]] = [
            ("bare", run_bare(directory / "bare", page_size, events, unique=False)),
            (
                "bare + unique id",
                run_bare(directory / "unique", page_size, events, unique=True),
            ),
        ]
        for batch in batches:
            used = events[: WARM + args.commits * batch]
            figures = run_journal(directory / "journal", page_size, tables, used, batch)
            runs.append((f"journal, {batch} event(s)/commit", figures))
        for name, figures in runs:
            print(_line(name, figures), flush=True)
            lines.append({"page_size": page_size, "line": name} | figures)
    ones = [line for line in lines if line["line"] == "journal, 1 event(s)/commit"]
    # The target is judged on the journal's page size, or the first measured without it.
    journal = next((line for line in ones if line["page_size"] == PAGE_SIZE), ones[0])
    results = {
        "benchmark": "writes",
        "machine": machine(),
        "method": {
            "tables": args.tables,
            "commits_per_line": args.commits,
            "measured": "write_bytes of /proc/self/io, WAL commits and checkpoints apart",
            "autocheckpoint_frames": AUTOCHECKPOINT,
            "journal_page_size": PAGE_SIZE,
        },
        "lines": lines,
        "targets": {"bytes_per_event": TARGET.judge(journal["bytes_per_event"])},
    }
    path = write_results(args.output, results)
    print_targets(results["targets"])
    if args.workdir is None:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
