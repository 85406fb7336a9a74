"""An SQLite journal file opened to read and never to write, for the commands that only read.

:class:`controller.journal.sqlite.Journal` is a writer: it sets the file's page size and WAL
mode and migrates the schema, so opening any SQLite file with it changes that file (an
unrelated database would gain the journal's tables). A command that only reads (``jackpotd
meters``, ``hits``, ``report``, ``verify``, ``operator list``, ``manifest check``) opens
the file here instead, through SQLite's ``mode=ro``: nothing is migrated, no pragma writes,
and a file that is not a journal is refused in one line before anything is read from it.

The file is opened by :func:`controller.journal.sqlite.read_only_file.open_read_only`: through
the ``-wal`` and ``-shm`` the writer keeps while rows are in its WAL, and otherwise
immutable, making nothing beside the file, so a copy in a folder nobody may write (a lab's, a
backup on read-only media) reads and verifies too. Nothing here writes the journal, a frame of
its WAL, or a file next to it. What every backend's reader offers is
:class:`controller.journal.readonly.JournalReader`.
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Self

import msgspec
import sqlite_utils

from controller.journal.domain import State
from controller.journal.errors import JournalError, NotAJournalError, SchemaError
from controller.journal.readonly import PayFilter, pay_query
from controller.journal.reads import PayoutRecord, payout_record
from controller.journal.sqlite.checkpoints import stored_snapshots
from controller.journal.sqlite.read_only_file import open_read_only
from controller.journal.sqlite.reads import FileReadSide
from controller.journal.sqlite.restore import load_state
from controller.journal.sqlite.rows import provenances, read_rows
from controller.journal.sqlite.schema import MIGRATIONS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain
    from controller.journal.rows import Row

LATEST: Final = len(MIGRATIONS)


JOURNAL_TABLES: Final = frozenset({"journal", "pools", "tables", "payouts", "meta"})
"""Tables every journal has had since its first schema version."""


def pays(database: sqlite_utils.Database, chosen: PayFilter) -> list[PayoutRecord]:
    """The pays ``chosen``, the newest round first and by seat within a round."""
    query, params = pay_query(chosen)
    return [payout_record(row) for row in database.query(query, params)]


def schema_version(connection: sqlite3.Connection, path: Path) -> int:
    """The journal's schema version; refuses a file that is not a journal."""
    try:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        tables = {
            str(name)
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    except sqlite3.DatabaseError as error:
        if error.sqlite_errorname == "SQLITE_NOTADB":  # "file is not a database"
            raise NotAJournalError(f"{path}: not a jackpotd journal ({error})") from error
        raise JournalError(f"{path}: cannot read the journal: {error}") from error
    if version == 0 or not tables >= JOURNAL_TABLES:
        raise NotAJournalError(f"{path}: not a jackpotd journal")
    if version > LATEST:
        raise SchemaError(
            f"{path}: the journal is at schema version {version}, this controller knows up to "
            f"{LATEST}: upgrade the controller"
        )
    return version


def check_journal(path: Path | str) -> int:
    """The schema version of the journal at ``path`` (read only); refuses anything else."""
    location = Path(path)
    opened = open_read_only(location)
    try:
        return schema_version(opened.connection, location)
    finally:
        opened.connection.close()


class ReadOnlyJournal(FileReadSide, Generic[State]):
    """A journal file opened read only: its state, its rows and the named reads."""

    def __init__(self, path: Path | str, domain: Domain[State]) -> None:
        self.path = Path(path)
        self.domain = domain
        self._opened = open_read_only(self.path)
        self._connection = self._opened.connection
        try:
            version = schema_version(self._connection, self.path)
        except JournalError:
            self._connection.close()
            raise
        if version < LATEST:
            self._connection.close()
            raise SchemaError(
                f"{self.path}: the journal is at schema version {version}, this controller reads "
                f"{LATEST}; the service brings it up to date when it starts"
            )
        self._database = sqlite_utils.Database(self._connection)

    @property
    def reader(self) -> sqlite_utils.Database:
        """The read-only connection every read runs on."""
        return self._database

    @functools.cached_property
    def state(self) -> State:
        """The domain's state as the journal has it materialized."""
        try:
            return load_state(self._database, self.domain)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError, sqlite3.Error) as error:
            raise JournalError(
                f"{self.path}: the materialized state cannot be read ({error}); run jackpotd verify"
            ) from error

    def pays(self, chosen: PayFilter) -> list[PayoutRecord]:
        """The pays ``chosen`` (:func:`pays`)."""
        return pays(self._database, chosen)

    def rows(self, after: int = 0) -> Iterator[dict[str, Any]]:
        """Every journal row after row ``after`` in order, canonical (whatever the layout).

        From its index on: a screen that reads only what is new reads only that.
        """
        for row in self.read(after):
            yield row.values

    def read(self, after: int = 0) -> Iterator[Row]:
        """Every journal row after row ``after`` in order, read back with its event and effects."""
        return read_rows(self._connection, after)

    def provenances(self) -> Iterator[tuple[int, str | None]]:
        """Each row's ``seq`` and provenance, in order (None: not recorded)."""
        return provenances(self._connection)

    def snapshots(self) -> list[StoredSnapshot]:
        """The checkpoints' snapshots the journal keeps, newest first."""
        return stored_snapshots(self._connection)

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            # A file changed under an immutable read explains a failed read too.
            if exc_info[0] is None or isinstance(exc_info[1], (JournalError, sqlite3.Error)):
                self.check_unchanged()
        finally:
            self.close()

    def check_unchanged(self) -> None:
        """Refuse what was read if the file changed under an immutable read (read_only_file)."""
        self._opened.check_unchanged()
