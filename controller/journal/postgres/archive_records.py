"""The archive segments a PostgreSQL journal records (its table ``archives``), as readers read them.

Apart from the archiving (controller/journal/postgres/archive.py), so that the checks, which
read the records, import no archiving, and the archiving may import the checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.journal.archive_records import COLUMNS, ArchiveRecord

if TYPE_CHECKING:
    from controller.journal.postgres.connection import Connection

_SELECT: Final = f"SELECT {', '.join(COLUMNS)} FROM archives ORDER BY last_seq"  # noqa: S608


def archive_records(connection: Connection) -> list[ArchiveRecord]:
    """The segments the journal records, in order; none in a journal of a schema before them.

    ``to_regclass``: a failed query would end the caller's (read) transaction.
    """
    found = connection.execute("SELECT to_regclass('archives') IS NOT NULL").fetchone()
    if found is None or not found[0]:
        return []
    return [ArchiveRecord(*tuple(row)) for row in connection.execute(_SELECT).fetchall()]
