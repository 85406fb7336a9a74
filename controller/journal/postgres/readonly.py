"""A PostgreSQL journal opened to read and never to write: the supervisors' and auditors' commands.

As :mod:`controller.journal.readonly` is for the SQLite file: ``jackpotd meters``, ``hits``,
``report``, ``operator list`` and ``manifest check`` open the database here. The connection
is never checked for durability (it commits nothing) and reads in **one** ``REPEATABLE READ,
READ ONLY`` transaction: the server refuses any write on it, the schema is never created or
migrated, and every read of the command sees the same snapshot while the service goes on
committing. A database that is not a journal (other tables and no ``journal_schema``), an
empty one, and a journal at a schema version other than this controller's are refused in one
line before anything is read.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Generic, Self

import msgspec
import psycopg

from controller.journal.domain import State
from controller.journal.errors import JournalError, NotAJournalError, SchemaError
from controller.journal.postgres import reads, schema
from controller.journal.postgres.connection import connect, reason
from controller.journal.postgres.rows import provenances, read_rows
from controller.journal.readonly import pay_query

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.connection import Connection
    from controller.journal.readonly import PayFilter
    from controller.journal.reads import PayoutRecord
    from controller.journal.rows import Row


def journal_version(connection: Connection, url: DatabaseUrl) -> int | None:
    """The journal's schema version; None for an empty database; refuses any other database."""
    found = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    ).fetchall()
    names = {str(name) for (name,) in found}
    if "journal_schema" in names:
        row = connection.execute("SELECT max(version) FROM journal_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
    if names:
        shown = ", ".join(sorted(names)[:5])
        raise NotAJournalError(f"{url}: not a jackpotd journal (the database holds {shown})")
    return None


def database_version(url: DatabaseUrl, *, writes: bool = False) -> int | None:
    """:func:`journal_version` on a connection of its own (durability checked if it ``writes``)."""
    connection = connect(url, writes=writes)
    try:
        return journal_version(connection, url)
    except psycopg.Error as error:
        raise JournalError(f"{url}: cannot read the journal: {reason(error)}") from error
    finally:
        connection.close()


def no_journal(url: DatabaseUrl) -> JournalError:
    """What a command that needs a journal says of an empty database."""
    return JournalError(f"{url}: no such journal (the database holds no journal tables)")


def _current(version: int | None, url: DatabaseUrl) -> None:
    """Refuse a database without a journal, or with one this controller does not read as is."""
    if version is None:
        raise no_journal(url)
    if version > schema.VERSION:
        raise SchemaError(
            f"{url}: the journal is at schema version {version}, this controller knows up to "
            f"{schema.VERSION}: upgrade the controller"
        )
    if version < schema.VERSION:
        raise SchemaError(
            f"{url}: the journal is at schema version {version}, this controller reads "
            f"{schema.VERSION}; the service brings it up to date when it starts"
        )


class PostgresReader(Generic[State]):
    """A PostgreSQL journal opened read only, in one snapshot: its state, rows and pays."""

    def __init__(self, url: DatabaseUrl, domain: Domain[State]) -> None:
        self.url = url
        self.domain = domain
        self._connection = connect(url, writes=False)
        try:
            self._connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            _current(journal_version(self._connection, url), url)
        except psycopg.Error as error:
            self._connection.close()
            raise JournalError(f"{url}: cannot read the journal: {reason(error)}") from error
        except BaseException:
            self._connection.close()
            raise

    @property
    def path(self) -> DatabaseUrl:
        """What names the journal in messages: its URL (the password hidden when shown)."""
        return self.url

    @functools.cached_property
    def state(self) -> State:
        """The ledger state as the database has it materialized."""
        try:
            return reads.load_state(self._connection, self.domain)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError, psycopg.Error) as error:
            raise JournalError(
                f"{self.url}: the materialized state cannot be read ({reason(error)}); run "
                "jackpotd verify"
            ) from error

    def pays(self, chosen: PayFilter) -> list[PayoutRecord]:
        """The pays ``chosen``, the newest round first and by seat within a round."""
        query, params = pay_query(
            chosen,
            mark="%s",
            dated="at::timestamptz >= %s::timestamptz",
            by_id='payout_id COLLATE "C"',  # byte order, as SQLite compares text
        )
        try:
            return reads.payout_records(self._connection, query, params)
        except psycopg.Error as error:
            raise JournalError(f"{self.url}: cannot read the journal: {reason(error)}") from error

    def rows(self, after: int = 0) -> Iterator[dict[str, Any]]:
        """Every journal row after row ``after``, in order, in its canonical form."""
        for row in read_rows(self._connection, after):
            yield row.values

    def provenances(self) -> Iterator[tuple[int, str | None]]:
        """Each row's ``seq`` and provenance, in order (None: not recorded)."""
        return provenances(self._connection)

    def read(self, after: int = 0) -> Iterator[Row]:
        """Every journal row after row ``after``, in order, with its event read back."""
        return read_rows(self._connection, after)

    def snapshots(self) -> list[StoredSnapshot]:
        """The snapshots of signed checkpoints the database keeps, newest first."""
        return reads.stored_snapshots(self._connection)

    def close(self) -> None:
        """End the read transaction and close the connection."""
        self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
