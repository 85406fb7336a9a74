"""An SQLite journal's rows read back in their canonical form, whatever the file's schema version.

What a row is, canonically and as stored, is :mod:`controller.journal.rows`, which every
backend shares; here are the file's queries: the rows in order, by ``seq``, by event id and
by kind, their times and provenances, and the hash a row chains to. A file of a schema before
version 10 (docs/journal.md, "What a row stores") reads its columns as they are.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Final

from controller.effects import decode_effects
from controller.events import decode_event
from controller.journal.chain import GENESIS
from controller.journal.compact import at_text
from controller.journal.rows import COLUMNS, Row, hex_text, stored_to_row

if TYPE_CHECKING:
    from collections.abc import Iterator

_SELECT: Final = f"SELECT {', '.join(COLUMNS)} FROM journal"  # noqa: S608 - fixed names


def compact_layout(connection: sqlite3.Connection) -> bool:
    """Whether the file stores rows in the compact form (schema 10 on): no ``prev_hash``."""
    columns = {str(row[1]) for row in connection.execute("PRAGMA table_info(journal)")}
    return "prev_hash" not in columns


def _legacy(values: dict[str, Any]) -> Row:
    try:
        event = decode_event(str(values["event"]))
    except (ValueError, TypeError):
        event = None
    try:
        effects = tuple(decode_effects(str(values["effects"])))
    except (ValueError, TypeError):
        effects = None
    return Row(values, event, effects)


def hash_before(connection: sqlite3.Connection, seq: int) -> str | None:
    """The hash row ``seq`` must chain to: row ``seq - 1``'s, or the archive's that ends there.

    None if neither is in the file (rows were removed).
    """
    if seq <= 1:
        return GENESIS
    found = connection.execute("SELECT hash FROM journal WHERE seq = ?", [seq - 1]).fetchone()
    if found is not None:
        return hex_text(found[0])
    try:
        archived = connection.execute(
            "SELECT last_hash FROM archives WHERE last_seq = ?", [seq - 1]
        ).fetchone()
    except sqlite3.OperationalError:  # a file of a schema before archives
        return None
    return None if archived is None else str(archived[0])


def read_rows(connection: sqlite3.Connection, after: int = 0) -> Iterator[Row]:
    """Every row after row ``after``, in order, as :class:`Row` (canonical ``values``).

    Each row's ``prev_hash`` is the stored one in a file of schema 9 or before; from schema
    10, the row before's hash as read (for the first row read, :func:`hash_before`).
    """
    if not compact_layout(connection):
        cursor = connection.execute("SELECT * FROM journal WHERE seq > ? ORDER BY seq", [after])
        names = [column[0] for column in cursor.description]
        for found in cursor:
            yield _legacy(dict(zip(names, found, strict=True)))
        return
    previous: str | None = None
    for found in connection.execute(f"{_SELECT} WHERE seq > ? ORDER BY seq", [after]):
        if previous is None:
            previous = hash_before(connection, int(found[0])) or GENESIS
        row = stored_to_row(tuple(found), previous)
        previous = row.values["hash"]
        yield row


def row_at(connection: sqlite3.Connection, seq: int) -> Row | None:
    """Row ``seq``, or None if the file does not hold it."""
    return next(read_rows(connection, seq - 1), None) if _has(connection, seq) else None


def _has(connection: sqlite3.Connection, seq: int) -> bool:
    return connection.execute("SELECT 1 FROM journal WHERE seq = ?", [seq]).fetchone() is not None


def last_row(connection: sqlite3.Connection) -> tuple[int, str] | None:
    """The last row's ``seq`` and ``hash`` (hex), or None if the journal holds no row."""
    found = connection.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    return None if found is None else (int(found[0]), hex_text(found[1]))


def _where(connection: sqlite3.Connection, where: str, params: list[Any]) -> Iterator[Row]:
    """The rows that match, in order, without their ``prev_hash`` (sixty-four zeros)."""
    if not compact_layout(connection):
        cursor = connection.execute(f"SELECT * FROM journal WHERE {where} ORDER BY seq", params)  # noqa: S608
        names = [column[0] for column in cursor.description]
        for found in cursor:
            yield _legacy(dict(zip(names, found, strict=True)))
        return
    for found in connection.execute(f"{_SELECT} WHERE {where} ORDER BY seq", params):
        yield stored_to_row(tuple(found), GENESIS)


def rows_with_ids(connection: sqlite3.Connection, event_ids: list[str]) -> Iterator[Row]:
    """The rows of those event ids (their ``prev_hash`` not read)."""
    marks = ", ".join("?" for _ in event_ids)
    return _where(connection, f"event_id IN ({marks})", list(event_ids))


def rows_of_kinds(connection: sqlite3.Connection, *kinds: str) -> Iterator[Row]:
    """The rows of those kinds, in order (their ``prev_hash`` not read)."""
    marks = ", ".join("?" for _ in kinds)
    return _where(connection, f"kind IN ({marks})", list(kinds))


def times(connection: sqlite3.Connection, after: int = 0) -> Iterator[tuple[int, str]]:
    """Each row's ``seq`` and time (canonical text) after row ``after``, in order."""
    query = "SELECT seq, at FROM journal WHERE seq > ? ORDER BY seq"
    for seq, at in connection.execute(query, [after]):
        yield int(seq), at_text(at) if isinstance(at, int) else str(at)


def provenances(connection: sqlite3.Connection, after: int = 0) -> Iterator[tuple[int, str | None]]:
    """Each row's ``seq`` and provenance after row ``after``, in order (None: not recorded).

    A file of a schema before 14 has no provenance: each of its rows reads None.
    """
    columns = {str(row[1]) for row in connection.execute("PRAGMA table_info(journal)")}
    if "provenance" not in columns:
        query = "SELECT seq, NULL FROM journal WHERE seq > ? ORDER BY seq"
    else:
        query = "SELECT seq, provenance FROM journal WHERE seq > ? ORDER BY seq"
    for seq, provenance in connection.execute(query, [after]):
        yield int(seq), None if provenance is None else str(provenance)
