"""The journal opened to read and never to write: the supervisors' and auditors' commands.

:class:`controller.journal.sqlite.store.Journal` is a writer: it sets the file's page size and WAL
mode and migrates the schema, so opening any SQLite file with it changes that file (an
unrelated database would gain the journal's tables). A command that only reads (``jackpotd
meters``, ``hits``, ``report``, ``verify``, ``operator list``, ``manifest check``) opens
the file here instead, through SQLite's ``mode=ro``: nothing is migrated, no pragma writes,
and a file that is not a journal is refused in one line before anything is read from it.

The file is opened by :func:`controller.journal.sqlite.read_only_file.open_read_only`: through the
``-wal`` and ``-shm`` the writer keeps while rows are in its WAL, and otherwise immutable,
making nothing beside the file, so a copy in a folder nobody may write (a lab's, a backup on
read-only media) reads and verifies too. Nothing here writes the journal, a frame of its WAL,
or a file next to it.
"""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, Self

import msgspec
import sqlite_utils

from controller.journal.checkpoints import stored_snapshots
from controller.journal.errors import JournalError, SchemaError
from controller.journal.reads import PayoutRecord, ReadSide, payout_record
from controller.journal.restore import load_state
from controller.journal.rows import provenances, read_rows
from controller.journal.sqlite.read_only_file import open_read_only
from controller.journal.sqlite.schema import MIGRATIONS
from controller.rules.spots import spec_of, spots

if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime

    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.location import JournalLocation
    from controller.journal.rows import Row
    from controller.ledger.apply import LedgerState

LATEST: Final = len(MIGRATIONS)
JOURNAL_TABLES: Final = frozenset({"journal", "pools", "tables", "payouts", "meta"})
"""Tables every journal has had since its first schema version."""


def pay_kinds() -> dict[str, str]:
    """Which ``payouts`` rows each kind of pay is (docs/operations.md, "Words").

    A pay is an amount won on a wager (``win_cents`` above 0: a loss, a push or a void pays
    nothing); a jackpot is a progressive pay from a pool's meter; a progressive pay may instead
    be fixed (the $4 of a full house); odds pays are ``win`` on their spot, one kind for each
    odds spot the registry holds (controller/rules/spots.py: ``bonus``, ``ace-high``, ...);
    Envy bonuses their own.
    """
    odds = {
        str(spot): f"kind = 'win' AND spot = '{spot}'" for spot in spots() if spec_of(spot).odds
    }
    return {
        "jackpot": "kind = 'progressive' AND from_meter_cents > 0",
        "progressive": "kind = 'progressive'",
        **odds,
        "envy": "kind = 'envy'",
        "all": "kind IN ('win', 'progressive', 'envy')",
    }


@dataclass(frozen=True, slots=True)
class PayFilter:
    """Which pays to list: their kinds (keys of :func:`pay_kinds`) and bounds."""

    kinds: tuple[str, ...]
    pending_only: bool = False
    pool_id: str | None = None
    since: datetime | None = None
    """From the first pay dated then or later (pays are taken in journal order)."""
    limit: int | None = None


def pay_query(
    chosen: PayFilter,
    *,
    mark: str = "?",
    dated: str = "julianday(at) >= julianday(?)",
    by_id: str = "payout_id",
) -> tuple[str, list[object]]:
    """The query of the pays ``chosen`` and its parameters, in a backend's words.

    ``mark`` is its parameter marker, ``dated`` its test of a pay's time against one given,
    ``by_id`` its order of payout ids (SQLite compares text byte by byte).
    """
    known = pay_kinds()
    kinds = " OR ".join(f"({known[kind]})" for kind in chosen.kinds) or "1 = 0"
    where, params = [f"({kinds})", "win_cents > 0"], list[object]()
    if chosen.pending_only:
        where.append("status = 'pending'")
    if chosen.pool_id is not None:
        where.append(f"pool_id = {mark}")
        params.append(chosen.pool_id)
    if chosen.since is not None:
        # In journal order: from the first pay dated ``since`` or later (a clock step may date
        # a later row earlier; docs/faults.md, "Clock steps").
        first = f"SELECT min(seq) FROM payouts WHERE {dated}"  # noqa: S608 - fixed fragments
        where.append(f"seq >= coalesce(({first}), {1 << 62})")
        params.append(chosen.since.isoformat())
    query = (
        f"SELECT * FROM payouts WHERE {' AND '.join(where)} "  # noqa: S608 - fixed fragments
        f"ORDER BY seq DESC, seat, {by_id}"
    )
    if chosen.limit is not None:
        query += f" LIMIT {mark}"
        params.append(chosen.limit)
    return query, params


def pays(database: sqlite_utils.Database, chosen: PayFilter) -> list[PayoutRecord]:
    """The pays ``chosen``, the newest round first and by seat within a round."""
    query, params = pay_query(chosen)
    return [payout_record(row) for row in database.query(query, params)]


class NotAJournalError(JournalError):
    """The file is not a jackpotd journal (another SQLite database, or no database at all)."""


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


class JournalReader(Protocol):
    """A journal opened read only, whichever backend holds it: what the reading commands use.

    :class:`ReadOnlyJournal` reads an SQLite file;
    :class:`controller.journal.postgres.readonly.PostgresReader` a PostgreSQL database;
    :func:`controller.journal.backends.open_reader` opens the one a location names.
    """

    @property
    def path(self) -> JournalLocation:
        """Where the journal is: its file, or its database's URL (shown without a password)."""

    @property
    def state(self) -> LedgerState:
        """The ledger state as the journal has it materialized."""

    def pays(self, chosen: PayFilter) -> list[PayoutRecord]:
        """The pays ``chosen``, the newest round first and by seat within a round."""

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journal row in order, in its canonical form."""

    def provenances(self) -> Iterator[tuple[int, str | None]]:
        """Each row's ``seq`` and provenance, in order (None: not recorded)."""

    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...


class ReadOnlyJournal(ReadSide):
    """A journal file opened read only: its state, its rows and the named reads."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
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
    def state(self) -> LedgerState:
        """The ledger state as the journal has it materialized."""
        try:
            return load_state(self._database)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError, sqlite3.Error) as error:
            raise JournalError(
                f"{self.path}: the materialized state cannot be read ({error}); run jackpotd verify"
            ) from error

    def pays(self, chosen: PayFilter) -> list[PayoutRecord]:
        """The pays ``chosen`` (:func:`pays`)."""
        return pays(self._database, chosen)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journal row in order, in its canonical form (whatever the stored layout)."""
        for row in self.read():
            yield row.values

    def read(self) -> Iterator[Row]:
        """Every journal row in order, read back with its event and effects."""
        return read_rows(self._connection)

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
