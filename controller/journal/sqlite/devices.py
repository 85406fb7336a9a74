"""Each device's highest journaled event ``seq`` in an SQLite journal: the table ``device_seqs``.

What the highs are, when the table is written and why (every so many rows, not with every
commit) is :mod:`controller.journal.devices`, which every backend shares; here the file's
table and its mark in ``meta`` are read and written, and the rows after the mark read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.journal.devices import MARK, DeviceHighs, DeviceMarks, Highs, merged
from controller.journal.sqlite.rows import read_rows

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping


_UPSERT: Final = (
    "INSERT INTO device_seqs (table_id, device, high) VALUES (?, ?, ?) "
    "ON CONFLICT (table_id, device) DO UPDATE SET high = max(high, excluded.high)"
)


_MARK_UPSERT: Final = (
    "INSERT INTO meta (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


def read_marks(connection: sqlite3.Connection) -> DeviceMarks:
    """The mark and the highs of the rows after it, from the file."""
    mark = marked_through(connection)
    return DeviceMarks(mark, tail_highs(connection, mark))


def write_highs(
    connection: sqlite3.Connection, highs: Mapping[tuple[str, str], int], through: int
) -> None:
    """Raise each device's mark in ``device_seqs`` (never lower it); they hold up to ``through``."""
    connection.executemany(
        _UPSERT, [(table, device, high) for (table, device), high in highs.items()]
    )
    connection.execute(_MARK_UPSERT, [MARK, str(through)])


def flush_through(connection: sqlite3.Connection, through: int) -> None:
    """Write the highs of the rows up to ``through`` into the table, from the rows themselves.

    For a writer about to remove rows (an archive): after it the rows are gone, and the mark
    must not be left before them.
    """
    mark = marked_through(connection)
    if through > mark:
        highs = tail_highs(connection, mark, through)
        write_highs(connection, highs, through)


def marked_through(connection: sqlite3.Connection) -> int:
    """The mark (module docstring), 0 when missing, unreadable or beyond the last row."""
    found = connection.execute("SELECT value FROM meta WHERE key = ?", [MARK]).fetchone()
    text = str(found[0]) if found is not None else ""
    if not (text.isascii() and text.isdigit()):
        return 0
    (last,) = connection.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()
    mark = int(text)
    return mark if mark <= int(last) else 0


def tail_highs(connection: sqlite3.Connection, after: int, through: int | None = None) -> Highs:
    """The highs of the journal rows after ``after`` (up to ``through``, if given)."""
    highs = DeviceHighs()
    for row in read_rows(connection, after):
        if through is not None and int(row.values["seq"]) > through:
            break
        if row.event is not None:
            highs.note(row.event)
    return highs.highs


def stored_highs(connection: sqlite3.Connection) -> Highs:
    """The table as it stands (up to its mark)."""
    rows = connection.execute("SELECT table_id, device, high FROM device_seqs")
    return {(str(table), str(device)): int(high) for table, device, high in rows}


def read_highs(connection: sqlite3.Connection) -> Highs:
    """Every device's highest journaled ``seq``: the table and the rows after its mark."""
    return merged(stored_highs(connection), tail_highs(connection, marked_through(connection)))
