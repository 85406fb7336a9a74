"""A prepared append of the SQLite journal, committed apart (in the sequencer's commit thread).

:meth:`controller.journal.sqlite.Journal.prepare` writes a batch's rows under
``BEGIN IMMEDIATE`` and hands back a :class:`Transaction`; its :meth:`~Transaction.commit`
runs the ``COMMIT`` alone, so that it may run in another thread (docs/architecture.md, "The
commit thread"). Failures become :class:`JournalError` with SQLite's reason, and the file
system's when it is read-only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from controller.journal.errors import JournalError

if TYPE_CHECKING:
    from pathlib import Path

    from controller.ports import Receipt

_State = TypeVar("_State")


def why(path: Path, error: sqlite3.Error) -> str:
    """SQLite's reason, and the file system's when it is read-only (SQLite may not say so)."""
    with contextlib.suppress(OSError):
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return f"{error} (the file system is read-only)"
    return str(error)


def roll_back(connection: sqlite3.Connection) -> None:
    """Undo an unfinished transaction, keeping the error that stopped it the one reported.

    SQLite may already have rolled back (a full disk does that): the original error is the
    one to report, not "no transaction is active".
    """
    if connection.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


def write_error(path: Path, error: sqlite3.Error) -> JournalError:
    """The journal failure a write's SQLite error becomes."""
    return JournalError(f"{path}: cannot write the journal: {why(path, error)}")


@dataclass(slots=True)
class Transaction(Generic[_State]):
    """A prepared append (:meth:`Journal.prepare`): written, not yet committed.

    ``state`` is the domain's state once it commits, which the journal adopts; opaque here.
    """

    path: Path
    connection: sqlite3.Connection
    state: _State
    tail: tuple[int, str]
    receipts: list[Receipt]
    committed: bool = False

    def commit(self) -> None:
        """``COMMIT``: durable when this returns; else rolled back and :class:`JournalError`.

        It touches only the SQLite connection, so it may run in another thread than the one
        that prepared it, as long as nothing else uses the connection until it returns.
        """
        try:
            self.connection.execute("COMMIT")
        except BaseException as error:
            roll_back(self.connection)
            if isinstance(error, sqlite3.Error):
                raise write_error(self.path, error) from error
            raise
        self.committed = True
