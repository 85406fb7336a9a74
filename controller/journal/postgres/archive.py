"""Archiving a PostgreSQL journal: the file's segments, recorded in the database (docs/ha.md).

``jackpotd archive --db postgresql://... --before DATE | --rows N --out DIR`` does what it does
to an SQLite file (:mod:`controller.journal.archive`, which cuts, replays and writes the
segments for both): the journal must verify first; the rows end at a row a checkpoint covers
when the journal holds checkpoints; each segment is written, synced and renamed into ``DIR``
before anything is removed; then **one** transaction records it in ``archives`` and removes
its rows, their snapshots and the payouts they made that were not pending at the cut. The same
history archived from a file and from a database gives the same segment files, byte for byte.

**The lock.** The record's transaction first takes the lock every group commit takes,
``LOCK TABLE journal IN EXCLUSIVE MODE``: it waits for a commit in progress (one waiting on
synchronous replication too) and a commit waits for it, so archiving never races the
sequencer. The removal is a few statements on indexed ranges, and the lock is held until the
record's ``COMMIT`` returns. It waits :data:`LOCK_WAIT_MS` at most for the lock, then gives up
with nothing removed (run it again). Under the lock it checks that no other archive was
recorded since it read, and that the cut row still holds the hash it sealed.

**A crash** after the segment is written and before the record commits leaves the journal as
it was (the rows are all there, nothing is recorded) and a segment file no record names, which
``verify`` never reads; the next run writes the same bytes and keeps that file. A ``COMMIT``
cut off is in doubt as any: the next run starts after the record if it committed, and writes
the same segment again if it did not.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import psycopg

from controller.journal.archive import (
    COLUMNS,
    ArchiveRecord,
    archive_from,
    not_recorded,
    not_verified,
    record_values,
    same_records,
)
from controller.journal.checkpoints import KIND
from controller.journal.errors import JournalError
from controller.journal.postgres.archive_records import archive_records
from controller.journal.postgres.checks import verify
from controller.journal.postgres.connection import connect, reason
from controller.journal.postgres.rows import last_row, provenances, read_rows, rows_of_kinds
from controller.journal.postgres.schema import migrate
from controller.journal.provenance import with_provenance

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.domain import Domain, State
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.connection import Connection
    from controller.journal.rows import Row

LOCK_WAIT_MS: Final = 30_000
"""How long the record's transaction waits for the journal's lock (a group commit holding it)."""
_INSERT: Final = (
    f"INSERT INTO archives ({', '.join(COLUMNS)}) "  # noqa: S608 - fixed column names
    f"VALUES ({', '.join('%s' for _ in COLUMNS)})"
)


def archive(  # noqa: PLR0913 - the command's options, all keywords
    url: DatabaseUrl,
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
    writer = connect(url)
    try:
        migrate(writer, str(url))  # the schema up to date, as the service would bring it
        report = verify(url, keys=keys, domain=domain)
        if not report.ok:
            raise not_verified(str(url), report.problems)
        reader = connect(url, writes=False)
        try:
            reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            source = _DatabaseSource(url, reader, writer)
            return archive_from(domain, source, directory, (before, rows), now)
        finally:
            reader.close()
    except psycopg.Error as error:
        raise JournalError(f"{url}: cannot archive the journal: {reason(error)}") from error
    finally:
        writer.close()


@dataclass(frozen=True, slots=True)
class _DatabaseSource:
    """The database read in one snapshot (``reader``), recorded on ``writer``."""

    url: DatabaseUrl
    reader: Connection
    writer: Connection

    @property
    def where(self) -> str:
        return str(self.url)

    def records(self) -> list[ArchiveRecord]:
        return archive_records(self.reader)

    def head(self) -> int:
        return last_row(self.reader)[0]

    def times(self, after: int) -> Iterable[tuple[int, str]]:
        query = "SELECT seq, at FROM journal WHERE seq > %s ORDER BY seq"
        with self.reader.cursor(name="journal_times") as cursor:
            cursor.itersize = 2000
            for seq, at in cursor.execute(query, [after]):
                yield int(seq), str(at)

    def checkpoint_rows(self) -> Iterable[Row]:
        return rows_of_kinds(self.reader, KIND)

    def rows(self, after: int) -> Generator[Row]:
        yield from with_provenance(read_rows(self.reader, after), provenances(self.reader, after))

    def record(
        self, records: list[ArchiveRecord], record: ArchiveRecord, pending: set[str]
    ) -> None:
        try:
            _store(self.writer, str(self.url), records, record, pending)
        except psycopg.Error as error:
            with contextlib.suppress(psycopg.Error):
                self.writer.rollback()
            raise not_recorded(str(self.url), record, reason(error)) from error


def _store(
    writer: Connection,
    where: str,
    records: list[ArchiveRecord],
    record: ArchiveRecord,
    pending: set[str],
) -> None:
    """Record the segment and remove its rows, in one transaction under the journal's lock."""
    cut = record.last_seq
    with writer.transaction():
        writer.execute(f"SET LOCAL lock_timeout = {LOCK_WAIT_MS}")
        writer.execute("LOCK TABLE journal IN EXCLUSIVE MODE")
        same_records(where, archive_records(writer), records)
        found = writer.execute("SELECT hash FROM journal WHERE seq = %s", [cut]).fetchone()
        if found is None or bytes(found[0]).hex() != record.last_hash:
            raise JournalError(
                f"{where}: row {cut} is not the row archived (changed since it was read); "
                "nothing removed"
            )
        writer.execute(_INSERT, record_values(record))
        writer.execute("DELETE FROM snapshots WHERE seq <= %s", [cut])
        writer.execute(
            "DELETE FROM payouts WHERE seq <= %s AND NOT (payout_id = ANY(%s))",
            [cut, sorted(pending)],
        )
        writer.execute("DELETE FROM journal WHERE seq <= %s", [cut])
