"""The MQTT sink's outbox: messages kept in the journal's database until the broker has them.

A hit announcement or a table command that cannot reach the broker now (it is down, or the
controller restarts before the broker acknowledged it) must still be published later. The sink
writes each such message here *before* publishing it, and deletes it once the broker has
acknowledged it (``PUBACK`` at QoS 1). At start-up and after every reconnection, what is left
is published again, oldest first. So a message is published at least once: a display may see
one twice (if the connection dies between the broker's ``PUBACK`` and the delete), and tells by
its payout id or ``seq``.

The outbox lives in the journal's SQLite file, in its own table, created if missing (it is not
part of the journal's schema or its hash chain: it only holds what still has to be said)::

    mqtt_outbox(id INTEGER PRIMARY KEY, sink TEXT, topic TEXT, payload BLOB,
                qos INTEGER, retain INTEGER, created TEXT)

``sink`` names the sink that owns a row, so two sinks (two brokers) never publish each other's
messages. This module uses its own :mod:`sqlite3` connection, in WAL mode with
``synchronous=FULL`` like the journal's, in autocommit mode: each insert and delete is one short
transaction, so that it never holds the write lock the journal needs. Calls block the event
loop for one small write, as the journal's own do.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA: Final = """CREATE TABLE IF NOT EXISTS mqtt_outbox (
    id INTEGER PRIMARY KEY,
    sink TEXT NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    created TEXT NOT NULL
)"""


class OutboxError(RuntimeError):
    """The outbox cannot be opened or written."""


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """One message waiting for the broker's acknowledgement; ``row_id`` None if not stored."""

    row_id: int | None
    topic: str
    payload: bytes
    qos: int
    retain: bool


class Outbox:
    """The stored messages of one sink (see the module docstring)."""

    def __init__(self, path: Path | str, sink: str) -> None:
        self.sink = sink
        try:
            # Autocommit (isolation_level None): every statement is its own short transaction.
            self._db = sqlite3.connect(str(path), isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            # The journal may hold the write lock for one transaction; wait for it, briefly.
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.execute(SCHEMA)
        except sqlite3.Error as error:
            raise OutboxError(f"{path}: cannot open the MQTT outbox: {error}") from error

    def close(self) -> None:
        """Close the connection (the rows stay)."""
        self._db.close()

    def add(self, topic: str, payload: bytes, *, qos: int, retain: bool, created: str) -> int:
        """Store a message; its row id."""
        try:
            cursor = self._db.execute(
                "INSERT INTO mqtt_outbox (sink, topic, payload, qos, retain, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (self.sink, topic, payload, qos, int(retain), created),
            )
        except sqlite3.Error as error:
            raise OutboxError(f"cannot store a message for {topic}: {error}") from error
        row_id = cursor.lastrowid
        if row_id is None:  # pragma: no cover - sqlite3 always sets it after an INSERT
            raise OutboxError(f"no row id for the message to {topic}")
        return row_id

    def remove(self, row_id: int) -> None:
        """The broker acknowledged a message: forget it."""
        try:
            self._db.execute("DELETE FROM mqtt_outbox WHERE id = ?", (row_id,))
        except sqlite3.Error as error:
            raise OutboxError(f"cannot delete outbox row {row_id}: {error}") from error

    def pending(self) -> list[OutboxMessage]:
        """This sink's stored messages, oldest first."""
        try:
            rows = self._db.execute(
                "SELECT id, topic, payload, qos, retain FROM mqtt_outbox WHERE sink = ? "
                "ORDER BY id",
                (self.sink,),
            ).fetchall()
        except sqlite3.Error as error:
            raise OutboxError(f"cannot read the MQTT outbox: {error}") from error
        return [
            OutboxMessage(row_id, topic, bytes(payload), qos, bool(retain))
            for row_id, topic, payload, qos, retain in rows
        ]

    def __len__(self) -> int:
        """How many messages of this sink are stored."""
        (count,) = self._db.execute(
            "SELECT count(*) FROM mqtt_outbox WHERE sink = ?", (self.sink,)
        ).fetchone()
        return int(count)
