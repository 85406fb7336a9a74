"""The highest event ``seq`` journaled from each device: where gap detection starts again.

A device numbers its events 1, 2, 3... (docs/faults.md, "Lost events"). The controller
watches the numbers as they arrive (:mod:`controller.runtime.device_sequences`), and after a
restart it must know where each device had got to without reading the whole journal again.
It is bookkeeping for finding lost events, not money: nothing the ledger decides depends on it.

The table ``device_seqs`` keeps, per table and device, the highest ``seq`` of a journaled
event (applied or refused) **up to a journal row**, the ``meta`` value :data:`MARK` (schema
15 on); the rows after it give the rest. So the table is not written with every commit, which
cost a page of the WAL each time (docs/benchmarks.md, "Writes per event"), but every
:data:`FLUSH_ROWS` rows or so, in the transaction of the rows that reach it, and with each
checkpoint's snapshot. Whoever reads the highs (:func:`read_highs`, the daemon, another
process) takes the table and the rows after the mark: at most :data:`FLUSH_ROWS` or so rows,
the same answer as a table written with every commit.

The highs only rise (``max``), so reading a row twice is harmless: a mark that is missing,
unreadable or beyond the journal's last row (an edited file) is read as 0, and the whole
journal gives the highs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from controller.journal.identity import device_origin
from controller.journal.sqlite.rows import read_rows

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping

    from controller.events import AnyEvent

Highs = dict[tuple[str, str], int]
"""The highest ``seq`` of each (table, device)."""

MARK: Final = "device_seqs_through"
"""The ``meta`` key of the last journal row whose devices ``device_seqs`` holds."""
FLUSH_ROWS: Final = 1000
"""Rows past the mark after which an append writes the table again (and moves the mark)."""
_UPSERT: Final = (
    "INSERT INTO device_seqs (table_id, device, high) VALUES (?, ?, ?) "
    "ON CONFLICT (table_id, device) DO UPDATE SET high = max(high, excluded.high)"
)
_MARK_UPSERT: Final = (
    "INSERT INTO meta (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


class DeviceHighs:
    """The highest ``seq`` per device among some events."""

    def __init__(self) -> None:
        self.highs: Highs = {}

    def note(self, event: AnyEvent) -> None:
        """An event written in this transaction."""
        origin = device_origin(event)
        if origin is not None:
            table_id, device, seq = origin
            key = (table_id, device)
            if seq > self.highs.get(key, -1):
                self.highs[key] = seq


def merged(*all_highs: Mapping[tuple[str, str], int]) -> Highs:
    """The highest of each device's marks."""
    out: Highs = {}
    for highs in all_highs:
        for key, high in highs.items():
            if high > out.get(key, -1):
                out[key] = high
    return out


@dataclass(frozen=True, slots=True)
class DeviceMarks:
    """``device_seqs`` as written up to row ``through``, and the highs of the rows after it."""

    through: int
    pending: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def read(cls, connection: sqlite3.Connection) -> DeviceMarks:
        """The mark and the highs of the rows after it, from the file."""
        mark = marked_through(connection)
        return cls(mark, tail_highs(connection, mark))

    def after(self, batch: DeviceHighs, tail: int, *, flush: bool) -> tuple[DeviceMarks, Highs]:
        """The marks once a batch ending at row ``tail`` commits, and what it must write.

        The table is written (the second value not empty) when ``flush`` says so or the rows
        past the mark reach :data:`FLUSH_ROWS`; otherwise the batch's highs wait in memory.
        """
        highs = merged(self.pending, batch.highs)
        if flush or tail - self.through >= FLUSH_ROWS:
            return DeviceMarks(tail), highs
        return DeviceMarks(self.through, highs), {}


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
