"""The start-up check and the catch-up of an SQLite journal: the file's rows, read for the walk.

The walk itself, and what it trusts, is backend-neutral (:mod:`controller.journal.state_check`,
:mod:`controller.journal.state_trust`); this module gives it the file's archive records,
snapshots and rows (:class:`FileRows`), for the start-up check of an open journal
(:func:`check_state`) and for the running controller that finds rows another process appended
(:func:`catch_up`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from controller.journal import state_check
from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.sqlite.archive_records import archive_records
from controller.journal.sqlite.checkpoints import stored_snapshots
from controller.journal.sqlite.rows import read_rows, row_at

if TYPE_CHECKING:
    from collections.abc import Iterator

    import sqlite_utils

    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain
    from controller.journal.rows import Row
    from controller.journal.state_trust import StateCheck
    from controller.outputs import SignedHead
    from controller.security.controller_key import ControllerKey


@dataclass(frozen=True, slots=True)
class FileRows:
    """The file's journal as the walk reads it: the walk's ``StoredRows``."""

    connection: sqlite3.Connection

    def archive_records(self) -> list[ArchiveRecord]:
        """The archive segments the journal records."""
        return archive_records(self.connection)

    def snapshots(self) -> list[StoredSnapshot]:
        """The snapshots it keeps, newest first."""
        try:
            return stored_snapshots(self.connection)
        except sqlite3.Error as error:  # a table edited out of shape: the check says so
            raise JournalError(str(error)) from error

    def row_at(self, seq: int) -> Row | None:
        """Row ``seq``, or None."""
        return row_at(self.connection, seq)

    def read_rows(self, after: int) -> Iterator[Row]:
        """Every row after row ``after``, in order."""
        return read_rows(self.connection, after)


class Checked(Protocol[State]):
    """What the check reads of an SQLite journal: its file, its domain, the state it restored."""

    @property
    def db(self) -> sqlite_utils.Database:
        """The open journal file."""
        ...

    @property
    def domain(self) -> Domain[State]:
        """The domain its rows are replayed with."""
        ...

    @property
    def state(self) -> State:
        """The state restored from the materialized tables."""
        ...


def check_state(
    journal: Checked[State], key: ControllerKey, high_water: SignedHead | None = None
) -> StateCheck:
    """Check the journal's materialized state against its rows (:mod:`..state_trust`).

    ``high_water``: the controller's last signed head, kept outside the journal
    (:mod:`..high_water`); the journal must still hold it, or it went back.
    """
    rows = FileRows(journal.db.conn)
    return state_check.check_state(rows, journal.domain, journal.state, key, high_water)


def catch_up(
    connection: sqlite3.Connection,
    domain: Domain[State],
    state: State,
    tail: tuple[int, str],
    stored: State,
) -> tuple[State, StateCheck]:
    """The state after the rows another process appended after ``tail``, and what is wrong.

    :func:`controller.journal.sqlite.Journal.prepare` fails closed if the tables ``stored``
    disagree with it.
    """
    return state_check.catch_up(FileRows(connection), domain, state, tail, stored)
