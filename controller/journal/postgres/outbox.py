"""A sink's outbox in the PostgreSQL journal's database (the twin of journal/sqlite/outbox.py).

The same two tables as in the SQLite file, outside the schema and the hash chain, created if
missing: ``mqtt_outbox`` (the messages a sink keeps until its broker has them) and
``mqtt_outbox_mark`` (per sink, the journal row of the last hit it stored, written in the same
transaction as the hit's message). Its own connection, one short transaction per call, so that
it never holds the journal's write lock; :class:`controller.ports.Outbox` is what the sink sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import psycopg

from controller.journal.errors import JournalError
from controller.journal.postgres.connection import connect, reason
from controller.journal.postgres.reads import committed_seq, payouts_after
from controller.ports import OutboxError, OutboxMessage

if TYPE_CHECKING:
    from controller.effects import PayoutMade
    from controller.journal.location import DatabaseUrl

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS mqtt_outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        sink TEXT NOT NULL,
        topic TEXT NOT NULL,
        payload BYTEA NOT NULL,
        qos INTEGER NOT NULL,
        retain INTEGER NOT NULL,
        created TEXT NOT NULL
    )""",
    "CREATE TABLE IF NOT EXISTS mqtt_outbox_mark (sink TEXT PRIMARY KEY, seq BIGINT NOT NULL)",
)
_MARK: Final = (
    "INSERT INTO mqtt_outbox_mark (sink, seq) VALUES (%s, %s) "
    "ON CONFLICT (sink) DO UPDATE SET seq = GREATEST(mqtt_outbox_mark.seq, EXCLUDED.seq)"
)


class PostgresOutbox:
    """One sink's stored messages: a :class:`~controller.ports.Outbox`."""

    def __init__(self, url: DatabaseUrl, sink: str) -> None:
        self.sink = sink
        try:
            self._db = connect(url)
            with self._db.transaction():
                for statement in SCHEMA:
                    self._db.execute(statement)
        except (JournalError, psycopg.Error) as error:
            raise OutboxError(f"{url}: cannot open the MQTT outbox: {reason(error)}") from error

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
            with self._db.transaction():
                found = self._db.execute(
                    "INSERT INTO mqtt_outbox (sink, topic, payload, qos, retain, created) "
                    "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                    row,
                ).fetchone()
                if hit_seq is not None:
                    self._db.execute(_MARK, [self.sink, hit_seq])
        except psycopg.Error as error:
            raise OutboxError(f"cannot store a message for {row[1]}: {reason(error)}") from error
        if found is None:  # pragma: no cover - INSERT ... RETURNING always returns the row
            raise OutboxError(f"no row id for the message to {row[1]}")
        return int(found[0])

    def hits_stored_through(self) -> int:
        """The journal row of the last hit this sink stored (the journal's end at first use)."""
        try:
            with self._db.transaction():
                found = self._db.execute(
                    "SELECT seq FROM mqtt_outbox_mark WHERE sink = %s", [self.sink]
                ).fetchone()
                if found is not None:
                    return int(found[0])
                seq = committed_seq(self._db)
                self._db.execute(_MARK, [self.sink, seq])
        except psycopg.Error as error:
            raise OutboxError(f"cannot read the MQTT outbox's mark: {reason(error)}") from error
        return seq

    def missed_payouts(self, after: int) -> list[tuple[int, str, PayoutMade]]:
        """The payouts the journal made after row ``after``."""
        try:
            with self._db.transaction():
                return payouts_after(self._db, after)
        except psycopg.Error as error:
            raise OutboxError(f"cannot read the journal's payouts: {reason(error)}") from error

    def remove(self, row_id: int) -> None:
        """The broker acknowledged a message: forget it."""
        try:
            with self._db.transaction():
                self._db.execute("DELETE FROM mqtt_outbox WHERE id = %s", [row_id])
        except psycopg.Error as error:
            raise OutboxError(f"cannot delete outbox row {row_id}: {reason(error)}") from error

    def pending(self) -> list[OutboxMessage]:
        """This sink's stored messages, oldest first."""
        try:
            with self._db.transaction():
                rows = self._db.execute(
                    "SELECT id, topic, payload, qos, retain FROM mqtt_outbox WHERE sink = %s "
                    "ORDER BY id",
                    [self.sink],
                ).fetchall()
        except psycopg.Error as error:
            raise OutboxError(f"cannot read the MQTT outbox: {reason(error)}") from error
        return [
            OutboxMessage(int(row_id), topic, bytes(payload), qos, bool(retain))
            for row_id, topic, payload, qos, retain in rows
        ]

    def __len__(self) -> int:
        """How many messages of this sink are stored."""
        with self._db.transaction():
            found = self._db.execute(
                "SELECT count(*) FROM mqtt_outbox WHERE sink = %s", [self.sink]
            ).fetchone()
        return int(found[0]) if found else 0
