"""The journal's schema, versioned: each migration runs once, in order, in one transaction.

``PRAGMA user_version`` records the version reached. A database written by a newer controller
(a higher version than this code knows) is refused rather than guessed at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.journal.errors import SchemaError

if TYPE_CHECKING:
    import sqlite_utils

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        """CREATE TABLE journal (
            seq INTEGER PRIMARY KEY,
            event_id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            at TEXT NOT NULL,
            event TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('applied', 'rejected')),
            reason TEXT NOT NULL,
            effects TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE
        )""",
        """CREATE TABLE pools (
            pool_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES journal (seq)
        )""",
        """CREATE TABLE tables (
            table_id TEXT PRIMARY KEY,
            config TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES journal (seq)
        )""",
        """CREATE TABLE rounds (
            table_id TEXT NOT NULL,
            round_id TEXT NOT NULL,
            wagers TEXT NOT NULL,
            PRIMARY KEY (table_id, round_id)
        )""",
        """CREATE TABLE payouts (
            payout_id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL REFERENCES journal (seq),
            at TEXT NOT NULL,
            table_id TEXT NOT NULL,
            round_id TEXT NOT NULL,
            seat INTEGER NOT NULL,
            spot TEXT NOT NULL,
            kind TEXT NOT NULL,
            wager_cents INTEGER NOT NULL,
            line TEXT,
            win_cents INTEGER NOT NULL,
            returned_cents INTEGER NOT NULL,
            from_meter_cents INTEGER NOT NULL,
            pool_id TEXT,
            capped_cents INTEGER NOT NULL,
            envy_from_seat INTEGER,
            status TEXT NOT NULL CHECK (status IN ('paid', 'pending')),
            tax_report INTEGER NOT NULL,
            verified_by TEXT,
            verified_seq INTEGER REFERENCES journal (seq)
        )""",
        "CREATE INDEX payouts_by_status ON payouts (status)",
        "CREATE INDEX payouts_by_pool ON payouts (pool_id, seq)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    (
        """CREATE TABLE table_states (
            table_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES journal (seq)
        )""",
    ),
    ("ALTER TABLE payouts ADD COLUMN hand TEXT NOT NULL DEFAULT ''",),
    (
        """CREATE TABLE operators (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL,
            salt TEXT NOT NULL,
            pin_hash TEXT NOT NULL,
            kdf TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES journal (seq)
        )""",
    ),
    # The payouts made after a given row, for the MQTT sink's catch-up at start-up.
    ("CREATE INDEX payouts_by_seq ON payouts (seq)",),
)
"""Migration ``n`` (1-based) takes the schema from version ``n - 1`` to ``n``."""


def migrate(database: sqlite_utils.Database) -> int:
    """Bring the schema up to date; return the version."""
    version = int(next(iter(database.execute("PRAGMA user_version").fetchone())))
    if version > len(MIGRATIONS):
        raise SchemaError(
            f"the journal is at schema version {version}, this controller knows up to "
            f"{len(MIGRATIONS)}: upgrade the controller"
        )
    for number in range(version + 1, len(MIGRATIONS) + 1):
        database.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[number - 1]:
                database.execute(statement)
            database.execute(f"PRAGMA user_version = {number}")
            database.execute("COMMIT")
        except BaseException:
            database.execute("ROLLBACK")
            raise
    return len(MIGRATIONS)
