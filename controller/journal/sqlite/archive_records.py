"""The archive segments an SQLite journal records (its table ``archives``), read back.

What a record holds is :class:`controller.journal.archive_records.ArchiveRecord`, which every
backend shares (PostgreSQL's are :mod:`controller.journal.postgres.archive_records`). A file
of a schema before archives records none.
"""

from __future__ import annotations

import sqlite3

from controller.journal.archive_records import COLUMNS, ArchiveRecord


def archive_records(connection: sqlite3.Connection) -> list[ArchiveRecord]:
    """The segments the journal records, in order; none in a file of a schema before them."""
    try:
        found = connection.execute(
            f"SELECT {', '.join(COLUMNS)} FROM archives ORDER BY last_seq"  # noqa: S608
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    return [ArchiveRecord(*tuple(row)) for row in found]
