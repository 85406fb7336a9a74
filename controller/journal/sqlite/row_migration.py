"""Schema 10: the journal's rows rewritten in the compact form, their hashes unchanged.

Each row of the old table is copied, in order, into the new one as
:func:`controller.journal.rows.stored_row` stores it (docs/journal.md, "What a row stores").
Only what the old row says twice is left out, so the copy must give back every byte the hash
chain covers: the migration reads each copied row back and compares, and it refuses the whole
file (the journal left as it was) if a row would not come back the same, or if a row's
``prev_hash`` is not the hash of the row before it (dropping that column would hide the
break). Such a file fails ``jackpotd verify`` as it is; the message says to run it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from controller.journal.chain import GENESIS
from controller.journal.compact import FormError
from controller.journal.errors import SchemaError
from controller.journal.rows import Row, stored_row
from controller.journal.rows import stored_to_row as read_stored
from controller.journal.sqlite.rows import read_rows

if TYPE_CHECKING:
    import sqlite_utils

NEW_TABLE: Final = """CREATE TABLE journal_v10 (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    at NOT NULL,
    event TEXT NOT NULL,
    reason TEXT,
    effects TEXT NOT NULL,
    hash BLOB NOT NULL CHECK (length(hash) = 32)
)"""
"""``at`` has no declared type: a time is stored as an integer or, if it must be, as text."""
CHUNK: Final = 2_000
"""Rows inserted per statement."""


def _refuse(seq: object, why: str) -> SchemaError:
    return SchemaError(
        f"row {seq} {why}, so it cannot be rewritten in the compact form without losing what "
        "its hash covers: the journal was left as it was; run jackpotd verify"
    )


def _converted(row: Row, previous: str) -> tuple[Any, ...]:
    values = row.values
    if values["prev_hash"] != previous:
        raise _refuse(values["seq"], "does not chain to the row before it (prev_hash)")
    if row.event is None or row.effects is None:
        raise _refuse(values["seq"], "does not hold an event and its effects")
    try:
        stored = stored_row(values, row.event, row.effects)
        again = read_stored(stored, previous)
    except (FormError, ValueError, KeyError) as error:
        raise _refuse(values["seq"], f"cannot be stored ({error})") from error
    if again.form or again.values != values:
        raise _refuse(values["seq"], "is not the canonical text of its event and effects")
    return stored


def compact_rows(database: sqlite_utils.Database) -> None:
    """Copy the old ``journal`` table's rows into ``journal_v10`` (see the module docstring)."""
    connection = database.conn
    previous, chunk = GENESIS, list[tuple[Any, ...]]()
    insert = "INSERT INTO journal_v10 VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    for row in read_rows(connection):
        chunk.append(_converted(row, previous))
        previous = str(row.values["hash"])
        if len(chunk) == CHUNK:
            connection.executemany(insert, chunk)
            chunk = []
    connection.executemany(insert, chunk)
