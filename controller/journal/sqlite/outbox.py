"""A sink's outbox in the journal's SQLite file: messages kept until the broker has them.

The MQTT sink (drivers/mqtt/sink.py) reaches it only through :class:`controller.ports.Outbox`,
which the journal opens for it (:meth:`controller.journal.sqlite.store.Journal.outbox`).

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
messages.

**Hits a crash kept from the outbox.** A hit reaches the sink after the journal has committed
it, so a crash between that commit and the outbox's insert would lose its announcement. So
the outbox also records, per sink, the journal row of the last hit it stored, in the same
transaction as the hit's row::

    mqtt_outbox_mark(sink TEXT PRIMARY KEY, seq INTEGER)

At start-up the sink announces every hit the journal made after that row
(:func:`controller.journal.sqlite.payouts.payouts_after`) before anything else. A sink's first start
marks the journal's last row, so a new sink does not announce the hits of the past.

This module uses its own :mod:`sqlite3` connection, in WAL mode with
``synchronous=FULL`` like the journal's, in autocommit mode: each insert and delete is one short
transaction, so that it never holds the write lock the journal needs. Calls block the event
loop for one small write, as the journal's own do.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Final

from controller.journal.sqlite.payouts import last_seq, payouts_after
from controller.ports import OutboxError, OutboxMessage

if TYPE_CHECKING:
    from pathlib import Path

    from controller.effects import PayoutMade

SCHEMA: Final = """CREATE TABLE IF NOT EXISTS mqtt_outbox (
    id INTEGER PRIMARY KEY,
    sink TEXT NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    created TEXT NOT NULL
)"""


MARK_SCHEMA: Final = """CREATE TABLE IF NOT EXISTS mqtt_outbox_mark (
    sink TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
)"""


class JournalOutbox:
    """One sink's stored messages (module docstring): a :class:`~controller.ports.Outbox`."""

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
            self._db.execute(MARK_SCHEMA)
        except sqlite3.Error as error:
            raise OutboxError(f"{path}: cannot open the MQTT outbox: {error}") from error

    def close(self) -> None:
        """Close the connection (the rows stay)."""
        self._db.close()

    def add(self, topic: str, payload: bytes, *, qos: int, retain: bool, created: str) -> int:
        """Store a message; its row id."""
        return self._store((self.sink, topic, payload, qos, int(retain), created), None)

    def add_hit(self, topic: str, payload: bytes, *, qos: int, created: str, seq: int) -> int:
        """Store the announcement of the hit journaled at row ``seq``, and mark it; its row id."""
        return self._store((self.sink, topic, payload, qos, 0, created), seq)

    def _store(self, row: tuple[str, str, bytes, int, int, str], hit_seq: int | None) -> int:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._db.execute(
                    "INSERT INTO mqtt_outbox (sink, topic, payload, qos, retain, created) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )
                if hit_seq is not None:
                    self._mark(hit_seq)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as error:
            raise OutboxError(f"cannot store a message for {row[1]}: {error}") from error
        row_id = cursor.lastrowid
        if row_id is None:  # pragma: no cover - sqlite3 always sets it after an INSERT
            raise OutboxError(f"no row id for the message to {row[1]}")
        return row_id

    def hits_stored_through(self) -> int:
        """The journal row of the last hit this sink stored (the journal's end at first use)."""
        try:
            row = self._db.execute(
                "SELECT seq FROM mqtt_outbox_mark WHERE sink = ?", (self.sink,)
            ).fetchone()
            if row is not None:
                return int(row[0])
            seq = last_seq(self._db)
            self._mark(seq)
        except sqlite3.Error as error:
            raise OutboxError(f"cannot read the MQTT outbox's mark: {error}") from error
        return seq

    def missed_payouts(self, after: int) -> list[tuple[int, str, PayoutMade]]:
        """The payouts the journal made after row ``after`` (see the module docstring)."""
        try:
            return payouts_after(self._db, after)
        except sqlite3.Error as error:
            raise OutboxError(f"cannot read the journal's payouts: {error}") from error

    def _mark(self, seq: int) -> None:
        self._db.execute(
            "INSERT INTO mqtt_outbox_mark (sink, seq) VALUES (?, ?) "
            "ON CONFLICT (sink) DO UPDATE SET seq = max(seq, excluded.seq)",
            (self.sink, seq),
        )

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
