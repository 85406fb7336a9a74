"""A prepared append of the PostgreSQL journal, committed apart (in the sequencer's commit thread).

:meth:`controller.journal.postgres.store.PostgresJournal.prepare` writes a batch's rows in one
transaction and hands back a :class:`PostgresTransaction`; its :meth:`~PostgresTransaction.commit`
runs the ``COMMIT`` alone, so that it may run in another thread (docs/architecture.md, "The
commit thread"), as the SQLite file's :mod:`controller.journal.sqlite.transaction` does.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic

import psycopg

from controller.journal.domain import State
from controller.journal.postgres.connection import write_error

if TYPE_CHECKING:
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.connection import Connection
    from controller.ports import Receipt


def roll_back(connection: Connection) -> None:
    """Undo an unfinished transaction, keeping the error that stopped it the one reported."""
    with contextlib.suppress(psycopg.Error):
        connection.rollback()


@dataclass(slots=True)
class PostgresTransaction(Generic[State]):
    """A prepared append (:meth:`PostgresJournal.prepare`): written, not yet committed."""

    url: DatabaseUrl
    connection: Connection
    state: State
    tail: tuple[int, str]
    receipts: list[Receipt]
    committed: bool = False
    lease_from: float | None = None
    """When, by the journal's monotonic clock, the fence was held in this transaction (before
    its renewal was sent); None without a fence."""

    def commit(self) -> None:
        """``COMMIT``: durable when this returns; else rolled back and :class:`JournalError`."""
        try:
            self.connection.commit()
        except BaseException as error:
            roll_back(self.connection)
            if isinstance(error, psycopg.Error):
                raise write_error(self.url, error) from error
            raise
        self.committed = True
