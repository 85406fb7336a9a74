"""A property's outbox to central in an SQLite journal: its table ``site_messages``, read.

docs/wide-area.md, "The chain of a property's messages". What a queued message is and how a
read of the outbox is checked against the journal's rows is every backend's
(:mod:`controller.journal.site_messages`); here are the file's table, its backfill by
migration 13 and its reads.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import TYPE_CHECKING, Final

from controller.journal.errors import JournalError
from controller.journal.site_messages import QUEUING, Head, Outboxed, OutboxRead, queued_by_rows
from controller.journal.sqlite.rows import row_at

if TYPE_CHECKING:
    import sqlite_utils

    from controller.widearea.messages import SiteMessage


TABLE: Final = """CREATE TABLE site_messages (
            site_seq INTEGER PRIMARY KEY CHECK (site_seq > 0),
            message TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES journal (seq)
        )"""
"""The SQLite file's table (schema 13). ``site_seq`` is the rowid: a second one is refused."""


INSERT: Final = "INSERT INTO site_messages (site_seq, message, seq) VALUES (?, ?, ?)"


def backfill(database: sqlite_utils.Database) -> None:
    """Migration 13's step: the messages the rows already journaled queued, into the table."""
    connection = database.conn
    found = connection.execute(
        "SELECT seq FROM journal WHERE effects LIKE ? ORDER BY seq", [QUEUING]
    ).fetchall()
    seqs = [int(seq) for (seq,) in found]
    made = queued_by_rows(seqs, lambda seq: row_at(connection, seq))
    connection.executemany(INSERT, made)


def read_page(connection: sqlite3.Connection, after: int, limit: int) -> list[Outboxed]:
    """The stored rows with ``site_seq`` above ``after``, in order, at most ``limit``."""
    found = connection.execute(
        "SELECT site_seq, message, seq FROM site_messages WHERE site_seq > ? "
        "ORDER BY site_seq LIMIT ?",
        [after, max(limit, 0)],
    )
    return [(int(site_seq), str(text), int(seq)) for site_seq, text, seq in found]


def stored_messages(connection: sqlite3.Connection) -> list[Outboxed] | None:
    """Every stored row, in order; None in a file of a schema before the table."""
    try:
        return read_page(connection, 0, 2**62)
    except sqlite3.OperationalError:  # a file of a schema before site_messages
        return None


def read(
    connection: sqlite3.Connection, where: str, head: Head, after: int, limit: int
) -> list[SiteMessage]:
    """The outbox after ``site_seq`` ``after``, at most ``limit``, checked (:class:`OutboxRead`).

    ``where`` names the journal in errors; ``head`` is the ledger's chain head.
    """
    try:
        (archived,) = connection.execute(
            "SELECT coalesce(max(last_seq), 0) FROM archives"
        ).fetchone()
        checked = OutboxRead(
            where,
            head,
            int(archived),
            functools.partial(read_page, connection),
            functools.partial(row_at, connection),
        )
        return checked.read(after, limit)
    except sqlite3.Error as error:
        raise JournalError(f"{where}: cannot read the journal: {error}") from error
