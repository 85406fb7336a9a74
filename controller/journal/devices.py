"""The highest event ``seq`` journaled from each device: where gap detection starts again.

A device numbers its events 1, 2, 3... (docs/faults.md, "Lost events"). The controller
watches the numbers as they arrive (:mod:`controller.runtime.device_sequences`), and after a
restart it must know where each device had got to without reading the whole journal again: the table
``device_seqs`` keeps, per table and device, the highest ``seq`` of a journaled event (applied
or refused), written in the same transaction as the rows. It is bookkeeping for finding lost
events, not money: nothing the ledger decides depends on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.journal.identity import device_origin

if TYPE_CHECKING:
    import sqlite3

    from controller.events import AnyEvent

_UPSERT: Final = (
    "INSERT INTO device_seqs (table_id, device, high) VALUES (?, ?, ?) "
    "ON CONFLICT (table_id, device) DO UPDATE SET high = max(high, excluded.high)"
)


class DeviceHighs:
    """The highest ``seq`` per device among one transaction's events."""

    def __init__(self) -> None:
        self.highs: dict[tuple[str, str], int] = {}

    def note(self, event: AnyEvent) -> None:
        """An event written in this transaction."""
        origin = device_origin(event)
        if origin is not None:
            table_id, device, seq = origin
            key = (table_id, device)
            if seq > self.highs.get(key, -1):
                self.highs[key] = seq

    def write(self, connection: sqlite3.Connection) -> None:
        """Raise each device's mark in ``device_seqs`` (never lower it)."""
        if self.highs:
            connection.executemany(
                _UPSERT, [(table, device, high) for (table, device), high in self.highs.items()]
            )


def read_highs(connection: sqlite3.Connection) -> dict[tuple[str, str], int]:
    """Every device's highest journaled ``seq``."""
    rows = connection.execute("SELECT table_id, device, high FROM device_seqs")
    return {(str(table), str(device)): int(high) for table, device, high in rows}
