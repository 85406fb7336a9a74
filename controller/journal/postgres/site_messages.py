"""A PostgreSQL journal's outbox to central: the ``site_messages`` table, as the file's.

The same rows, checks and read as :mod:`controller.journal.site_messages` (docs/wide-area.md),
with PostgreSQL's types and parameters. No reference to ``journal (seq)``: an archive removes
journal rows, and an unsent message outlives its row (schema version 3 dropped the other
tables' references for the same reason).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final

import psycopg

from controller.journal.errors import JournalError
from controller.journal.postgres.connection import reason
from controller.journal.postgres.rows import row_at
from controller.journal.site_messages import QUEUING, OutboxRead, queued_by_rows

if TYPE_CHECKING:
    from controller.journal.postgres.connection import Connection
    from controller.journal.site_messages import Head, Outboxed
    from controller.widearea.messages import SiteMessage

TABLE: Final = """CREATE TABLE site_messages (
        site_seq BIGINT PRIMARY KEY CHECK (site_seq > 0),
        message TEXT NOT NULL,
        seq BIGINT NOT NULL
    )"""
"""Schema version 4. The primary key refuses a second message under one ``site_seq``."""
INSERT: Final = "INSERT INTO site_messages (site_seq, message, seq) VALUES (%s, %s, %s)"


def backfill(connection: Connection) -> None:
    """Version 4's step: the messages the rows already journaled queued, into the table."""
    found = connection.execute(
        "SELECT seq FROM journal WHERE effects LIKE %s ORDER BY seq", [QUEUING]
    ).fetchall()
    made = queued_by_rows([int(seq) for (seq,) in found], functools.partial(row_at, connection))
    with connection.cursor() as cursor:
        cursor.executemany(INSERT, made)


def _page(connection: Connection, after: int, limit: int) -> list[Outboxed]:
    found = connection.execute(
        "SELECT site_seq, message, seq FROM site_messages WHERE site_seq > %s "
        "ORDER BY site_seq LIMIT %s",
        [after, max(limit, 0)],
    )
    return [(int(site_seq), str(text), int(seq)) for site_seq, text, seq in found]


def stored_messages(connection: Connection) -> list[Outboxed] | None:
    """Every stored row, in order (``jackpotd verify``); None before schema version 4."""
    # to_regclass: a failed query would end the verification's read transaction.
    found = connection.execute("SELECT to_regclass('site_messages') IS NOT NULL").fetchone()
    return _page(connection, 0, 2**62) if found is not None and found[0] else None


def read(
    connection: Connection, where: str, head: Head, after: int, limit: int
) -> list[SiteMessage]:
    """The outbox after ``site_seq`` ``after``, at most ``limit``, checked (:class:`OutboxRead`).

    ``where`` names the journal in errors; ``head`` is the ledger's chain head.
    """
    try:
        found = connection.execute("SELECT coalesce(max(last_seq), 0) FROM archives").fetchone()
        archived = int(found[0]) if found else 0
        page_of = functools.partial(_page, connection)
        checked = OutboxRead(where, head, archived, page_of, functools.partial(row_at, connection))
        return checked.read(after, limit)
    except psycopg.Error as error:
        raise JournalError(f"{where}: cannot read the journal: {reason(error)}") from error
