"""A table agent's outbox: one SQLite file of device messages kept until the controller has them.

``jackpotd agent`` (docs/ha.md, "Table agents") stores each message of its table's devices
here before it acknowledges the device, and publishes it with (table, boot, seq) until the
controller's cumulative acknowledgement covers it; then the row is deleted. The file is in WAL
mode with ``synchronous=FULL``: an acknowledged device message survives a power loss. Each
call is one short transaction (``BEGIN IMMEDIATE``), so a second agent started on the same
file waits instead of interleaving.

::

    agent_meta(key TEXT PRIMARY KEY, value TEXT)     table_id, boot, stored_high, acked, epoch,
                                                     progressive_chips
    agent_outbox(seq INTEGER PRIMARY KEY, device, device_seq, payload, stored)
    agent_devices(device TEXT PRIMARY KEY, seq)      the highest seq stored from each device
    agent_faults(id INTEGER PRIMARY KEY, at, reason, detail)

**Boots.** A new file gets a new random boot id, and its ``seq`` starts at 1. A restarted agent
with its file keeps the boot and goes on from ``stored_high`` + 1. A wiped file is a new boot,
so the controller never mistakes its ``seq`` 1 for the old boot's (it tracks (table, boot,
seq)). **Device resends.** A device resends until acknowledged, so a message whose device
``seq`` is not above the device's highest stored is not stored again (it is acknowledged
again). It implements :class:`controller.agent.store.AgentOutbox`.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from typing import TYPE_CHECKING, Final

from controller.agent.store import StoredEvent
from controller.files import prepare_database
from controller.ports import OutboxError

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS agent_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS agent_outbox (
    seq INTEGER PRIMARY KEY,
    device TEXT NOT NULL,
    device_seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    stored TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agent_devices (device TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS agent_faults (
    id INTEGER PRIMARY KEY, at TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL
);
"""
_FAULTS_KEPT: Final = 10_000
"""Faults kept in the file; the oldest go first (the log has them all)."""


class AgentOutboxStore:
    """The outbox file of one table's agent (see the module docstring)."""

    def __init__(self, path: Path, table_id: str) -> None:
        try:
            prepare_database(path)  # 0640 whatever the umask; its -wal and -shm follow
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
        except (sqlite3.Error, OSError) as error:
            raise OutboxError(f"cannot open the agent outbox {path}: {error}") from error
        self._meta = self._open(path, table_id)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _open(self, path: Path, table_id: str) -> dict[str, str]:
        try:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            with self._transaction():
                meta = dict(self._db.execute("SELECT key, value FROM agent_meta").fetchall())
                if not meta:
                    meta = {
                        "table_id": table_id,
                        "boot": secrets.token_hex(8),
                        "stored_high": "0",
                        "acked": "0",
                        "epoch": "0",
                    }
                    self._db.executemany(
                        "INSERT INTO agent_meta (key, value) VALUES (?, ?)", meta.items()
                    )
        except sqlite3.Error as error:
            raise OutboxError(f"cannot read the agent outbox {path}: {error}") from error
        if meta.get("table_id") != table_id:
            raise OutboxError(
                f"the agent outbox {path} belongs to table {meta.get('table_id')!r}, "
                f"not {table_id!r}: move it away to start a new boot"
            )
        return meta

    @property
    def table_id(self) -> str:
        """The table the outbox was created for."""
        return self._meta["table_id"]

    @property
    def boot(self) -> str:
        """The boot id."""
        return self._meta["boot"]

    @property
    def stored_high(self) -> int:
        """The highest ``seq`` stored in this boot."""
        return int(self._meta["stored_high"])

    @property
    def acked(self) -> int:
        """The highest ``seq`` acknowledged."""
        return int(self._meta["acked"])

    @property
    def epoch(self) -> int:
        """The newest epoch an accepted acknowledgement carried."""
        return int(self._meta["epoch"])

    def stored_from(self, device: str) -> int:
        """The highest ``seq`` stored from ``device`` (0 if none)."""
        try:
            row = self._db.execute(
                "SELECT seq FROM agent_devices WHERE device = ?", (device,)
            ).fetchone()
        except sqlite3.Error as error:
            raise OutboxError(f"cannot read the agent outbox: {error}") from error
        return 0 if row is None else int(row[0])

    @property
    def progressive_chips(self) -> frozenset[int]:
        """The seats with a progressive chip present since the last lock stored."""
        text = self._meta.get("progressive_chips", "")
        return frozenset(int(seat) for seat in text.split(",") if seat)

    def store(
        self,
        device: str,
        device_seq: int,
        payload: str,
        at: str,
        chips: frozenset[int] | None = None,
    ) -> int | None:
        """Store a device's message (and the chips it leaves); its ``seq``, or None if stored."""
        try:
            with self._transaction():
                row = self._db.execute(
                    "SELECT seq FROM agent_devices WHERE device = ?", (device,)
                ).fetchone()
                if row is not None and device_seq <= int(row[0]):
                    return None
                seq = self.stored_high + 1
                self._db.execute(
                    "INSERT INTO agent_outbox (seq, device, device_seq, payload, stored)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (seq, device, device_seq, payload, at),
                )
                self._db.execute(
                    "INSERT INTO agent_devices (device, seq) VALUES (?, ?)"
                    " ON CONFLICT (device) DO UPDATE SET seq = excluded.seq",
                    (device, device_seq),
                )
                self._set("stored_high", seq)
                seats = None if chips is None else ",".join(str(s) for s in sorted(chips))
                if seats is not None:
                    self._set("progressive_chips", seats)
        except sqlite3.Error as error:
            self._reload()
            raise OutboxError(f"cannot store {device}/{device_seq}: {error}") from error
        self._meta["stored_high"] = str(seq)
        if seats is not None:
            self._meta["progressive_chips"] = seats
        return seq

    def pending(self, after: int, limit: int) -> list[StoredEvent]:
        """The oldest unacknowledged messages after ``seq`` ``after``, oldest first."""
        try:
            rows = self._db.execute(
                "SELECT seq, device, device_seq, payload, stored FROM agent_outbox"
                " WHERE seq > ? ORDER BY seq LIMIT ?",
                (max(after, self.acked), limit),
            ).fetchall()
        except sqlite3.Error as error:
            raise OutboxError(f"cannot read the agent outbox: {error}") from error
        return [StoredEvent(int(s), str(d), int(n), str(p), str(t)) for s, d, n, p, t in rows]

    def trim(self, through: int, epoch: int) -> int:
        """Forget what is acknowledged through ``through``."""
        through = max(through, self.acked)
        epoch = max(epoch, self.epoch)
        try:
            with self._transaction():
                gone = self._db.execute("DELETE FROM agent_outbox WHERE seq <= ?", (through,))
                self._set("acked", through)
                self._set("epoch", epoch)
        except sqlite3.Error as error:
            self._reload()
            raise OutboxError(f"cannot trim the agent outbox: {error}") from error
        self._meta["acked"], self._meta["epoch"] = str(through), str(epoch)
        return gone.rowcount

    def fault(self, reason: str, detail: str, at: str) -> None:
        """Keep one of the agent's own faults, the newest ``_FAULTS_KEPT`` of them."""
        try:
            with self._transaction():
                cursor = self._db.execute(
                    "INSERT INTO agent_faults (at, reason, detail) VALUES (?, ?, ?)",
                    (at, reason, detail),
                )
                newest = cursor.lastrowid or 0
                self._db.execute("DELETE FROM agent_faults WHERE id <= ?", (newest - _FAULTS_KEPT,))
        except sqlite3.Error as error:
            raise OutboxError(f"cannot keep the fault {reason}: {error}") from error

    def faults(self) -> list[tuple[str, str, str]]:
        """The faults kept, oldest first: (time, reason, detail)."""
        rows = self._db.execute("SELECT at, reason, detail FROM agent_faults ORDER BY id")
        return [(str(at), str(reason), str(detail)) for at, reason, detail in rows]

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    def _set(self, key: str, value: int | str) -> None:
        self._db.execute(
            "INSERT INTO agent_meta (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    def _reload(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # the next call fails again and says why
            self._meta = dict(self._db.execute("SELECT key, value FROM agent_meta").fetchall())


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on an error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            self._db.execute("COMMIT")
        else:
            with contextlib.suppress(sqlite3.Error):  # the error that got here says why
                self._db.execute("ROLLBACK")
