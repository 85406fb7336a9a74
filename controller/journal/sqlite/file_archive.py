"""Archiving an SQLite journal file: verify it, then cut its rows to segments and record them.

The cutting, the segments and the records are every backend's (controller/journal/archive.py,
whose docstring says what archiving does); this is the file's side: the journal brought to the
current schema and verified first (nothing broken is archived), one read transaction for
everything read, and the record of each segment and the removal of its rows in one write
transaction on a connection of its own (controller/journal/postgres/archive.py is the
database's side).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.journal.archive import (
    COLUMNS,
    archive_from,
    not_recorded,
    not_verified,
    record_values,
    same_records,
)
from controller.journal.chain import GENESIS
from controller.journal.checkpoints import KIND
from controller.journal.errors import JournalError
from controller.journal.provenance import with_provenance
from controller.journal.sqlite.archive_records import archive_records
from controller.journal.sqlite.devices import flush_through
from controller.journal.sqlite.rows import last_row, provenances, read_rows, rows_of_kinds, times
from controller.journal.sqlite.store import Journal
from controller.journal.sqlite.verify import verify

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain, State
    from controller.journal.rows import Row


def _open(path: Path, *, read_only: bool) -> sqlite3.Connection:
    where = f"{path.resolve().as_uri()}?mode=ro" if read_only else str(path)
    try:
        connection = sqlite3.connect(where, uri=read_only, isolation_level=None)
        connection.execute("PRAGMA busy_timeout=30000")
    except sqlite3.Error as error:
        raise JournalError(f"{path}: cannot open the journal: {error}") from error
    return connection


def archive(  # noqa: PLR0913 - the command's options, all keywords
    path: Path,
    directory: Path,
    *,
    before: datetime | None = None,
    rows: int | None = None,
    keys: Sequence[str] = (),
    now: str,
    domain: Domain[State],
) -> list[ArchiveRecord]:
    """Archive the rows the criterion names (see the module docstring); the segments written.

    ``domain``: what the rows are verified and replayed with.
    """
    Journal(path, domain).close()  # the schema up to date, as the service would bring it
    report = verify(path, keys=keys, domain=domain)
    if not report.ok:
        raise not_verified(str(path), report.problems)
    reader = _open(path, read_only=True)
    try:
        reader.execute("BEGIN")  # one snapshot of the file for everything read
        return archive_from(domain, _FileSource(path, reader), directory, (before, rows), now)
    finally:
        reader.close()


@dataclass(frozen=True, slots=True)
class _FileSource:
    """An SQLite journal file read in one read transaction, written on a connection of its own."""

    path: Path
    reader: sqlite3.Connection

    @property
    def where(self) -> str:
        return str(self.path)

    def records(self) -> list[ArchiveRecord]:
        return archive_records(self.reader)

    def head(self) -> int:
        return (last_row(self.reader) or (0, GENESIS))[0]

    def times(self, after: int) -> Iterable[tuple[int, str]]:
        return times(self.reader, after)

    def checkpoint_rows(self) -> Iterable[Row]:
        return rows_of_kinds(self.reader, KIND)

    def rows(self, after: int) -> Generator[Row]:
        yield from with_provenance(read_rows(self.reader, after), provenances(self.reader, after))

    def record(
        self, records: list[ArchiveRecord], record: ArchiveRecord, pending: set[str]
    ) -> None:
        _record(self.path, records, record, pending)


def _record(
    path: Path, records: list[ArchiveRecord], record: ArchiveRecord, pending: set[str]
) -> None:
    """Record the segment and remove its rows, in one transaction (see the module docstring).

    Foreign keys stay off on this connection: a pool, a table or a pending payout keeps the
    number of the row that last changed it, archived or not.
    """
    writer = _open(path, read_only=False)
    try:
        _store(path, writer, records, record, pending)
    except sqlite3.Error as error:
        raise not_recorded(str(path), record, error) from error
    finally:
        writer.close()


def _store(
    path: Path,
    writer: sqlite3.Connection,
    records: list[ArchiveRecord],
    record: ArchiveRecord,
    pending: set[str],
) -> None:
    """:func:`_record`'s transaction."""
    writer.execute("CREATE TEMP TABLE kept_payouts (payout_id TEXT PRIMARY KEY)")
    writer.executemany("INSERT INTO kept_payouts VALUES (?)", [(p,) for p in pending])
    writer.execute("BEGIN IMMEDIATE")
    try:
        same_records(str(path), archive_records(writer), records)
        marks = ", ".join("?" for _ in COLUMNS)
        writer.execute(f"INSERT INTO archives VALUES ({marks})", record_values(record))  # noqa: S608
        writer.execute("DELETE FROM snapshots WHERE seq <= ?", [record.last_seq])
        writer.execute(
            "DELETE FROM payouts WHERE seq <= ? "
            "AND payout_id NOT IN (SELECT payout_id FROM temp.kept_payouts)",
            [record.last_seq],
        )
        # The removed rows' device highs, not yet in device_seqs, go there first (.devices).
        flush_through(writer, record.last_seq)
        writer.execute("DELETE FROM journal WHERE seq <= ?", [record.last_seq])
        writer.execute("COMMIT")
    except BaseException:
        writer.execute("ROLLBACK")
        raise
