"""The journal's schema, versioned: each migration runs once, in order, in one transaction.

``PRAGMA user_version`` records the version reached. A database written by a newer controller
(a higher version than this code knows) is refused rather than guessed at.

Migrations run with foreign keys off and check them (``PRAGMA foreign_key_check``) before they
commit. That is SQLite's documented way to rebuild a table that other tables reference
(https://sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"), which
migration 6 does to the journal itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from controller.journal.errors import SchemaError
from controller.journal.sqlite.row_migration import NEW_TABLE, compact_rows
from controller.journal.sqlite.site_messages import TABLE as SITE_MESSAGES
from controller.journal.sqlite.site_messages import backfill

if TYPE_CHECKING:
    import sqlite_utils

Step = str | Callable[["sqlite_utils.Database"], None]

VERIFIED_INDEX: Final = (
    "CREATE INDEX payouts_verified ON payouts (verified_seq) WHERE verified_seq IS NOT NULL"
)
"""The index of the pays verified (PostgreSQL's journal has the same)."""
MIGRATIONS: Final[tuple[tuple[Step, ...], ...]] = (
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
    # The journal without a UNIQUE index on ``hash``. Nothing looks a row up by its hash, and
    # the chain (each row's hash covers the one before) is what makes a changed row show; but
    # a SHA-256 is random, so every append wrote one more random page of that index (about
    # 40 % of the bytes each event wrote to the WAL). The rows are copied as they are.
    (
        """CREATE TABLE journal_v6 (
            seq INTEGER PRIMARY KEY,
            event_id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            at TEXT NOT NULL,
            event TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('applied', 'rejected')),
            reason TEXT NOT NULL,
            effects TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )""",
        (
            "INSERT INTO journal_v6 SELECT seq, event_id, kind, at, event, outcome, reason, "
            "effects, prev_hash, hash FROM journal ORDER BY seq"
        ),
        "DROP TABLE journal",
        "ALTER TABLE journal_v6 RENAME TO journal",
    ),
    # The highest event seq journaled per device (controller/journal/devices.py), filled in
    # from the device events already journaled. A device's void carries its seq only in its
    # id; its other events make the mark.
    (
        """CREATE TABLE device_seqs (
            table_id TEXT NOT NULL,
            device TEXT NOT NULL,
            high INTEGER NOT NULL,
            PRIMARY KEY (table_id, device)
        )""",
        (
            "INSERT INTO device_seqs (table_id, device, high) "
            "SELECT json_extract(event, '$.table_id'), json_extract(event, '$.device'), "
            "max(json_extract(event, '$.seq')) FROM journal "
            "WHERE kind IN ('bet-sensed', 'bets-locked', 'card-dealt', 'deal-complete') "
            "GROUP BY 1, 2"
        ),
    ),
    # Operators who sign with Ed25519 keys (controller/ledger/authority.py): the public key, the
    # count of failed authentications in a row, and whether they are locked out.
    (
        "ALTER TABLE operators ADD COLUMN public_key TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE operators ADD COLUMN failures INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE operators ADD COLUMN locked INTEGER NOT NULL DEFAULT 0",
    ),
    # Snapshots of the ledger state at the last few signed checkpoints
    # (controller/journal/checkpoints.py): start-up replays from the last one that verifies.
    (
        """CREATE TABLE snapshots (
            seq INTEGER PRIMARY KEY REFERENCES journal (seq),
            head_seq INTEGER NOT NULL,
            state TEXT NOT NULL
        )""",
    ),
    # The journal's rows in the compact form (controller/journal/sqlite/row_migration.py): each row
    # about a third of its bytes, every hash unchanged (docs/journal.md, "What a row stores").
    (
        NEW_TABLE,
        compact_rows,
        "DROP TABLE journal",
        "ALTER TABLE journal_v10 RENAME TO journal",
    ),
    # Index only what the reads ask: one small index of the payouts that needed or need a
    # supervisor's verification (hits, pending ones), which serves the pending payouts, the
    # hits and the verification records alike, in place of two indexes of every payout.
    (
        "DROP INDEX payouts_by_status",
        "DROP INDEX payouts_by_pool",
        (
            "CREATE INDEX payouts_to_verify ON payouts (seq) WHERE kind = 'progressive' "
            "OR verified_by IS NOT NULL OR status = 'pending'"
        ),
    ),
    # The ranges of rows moved out to sealed segments (controller/journal/archive.py): where
    # each ends, the hash the live chain continues from and the state after it.
    (
        """CREATE TABLE archives (
            segment TEXT PRIMARY KEY,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL UNIQUE,
            prev_hash TEXT NOT NULL,
            last_hash TEXT NOT NULL,
            rows INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            checkpoint_seq INTEGER,
            state TEXT NOT NULL,
            archived_at TEXT NOT NULL
        )""",
    ),
    # A property's outbox to central (controller/journal/site_messages.py): each site message
    # a row queued, filled in from the rows journaled before; the rows and the chain untouched.
    (SITE_MESSAGES, backfill),
    # Each row's provenance: which intake, or which command, wrote it (docs/journal.md,
    # "Provenance"). NULL for the rows written before; the hash chain does not cover it.
    ("ALTER TABLE journal ADD COLUMN provenance TEXT",),
    # ``device_seqs`` written every so many rows rather than with every commit, up to the row
    # the ``meta`` value device_seqs_through names (controller/journal/devices.py): every row
    # journaled so far is in it. A controller that does not know the mark would take the
    # table as complete, so the version rises and such a controller refuses the file.
    (
        (
            "INSERT INTO meta (key, value) SELECT 'device_seqs_through', "
            "CAST(coalesce(max(seq), 0) AS TEXT) FROM journal "
            "WHERE true ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        ),
    ),
    # The pays verified, by the row that verified them: the console's "last verified" reads
    # the newest few through it on the event loop, which must not scan every payout.
    (VERIFIED_INDEX,),
)
"""Migration ``n`` (1-based) takes the schema from version ``n - 1`` to ``n``.

A step is an SQL statement, or a function given the database (a copy that SQL cannot write).
"""


def migrate(database: sqlite_utils.Database, target: int = len(MIGRATIONS)) -> int:
    """Bring the schema up to ``target`` (the latest unless a test says); return the version."""
    version = int(next(iter(database.execute("PRAGMA user_version").fetchone())))
    if version > len(MIGRATIONS):
        raise SchemaError(
            f"the journal is at schema version {version}, this controller knows up to "
            f"{len(MIGRATIONS)}: upgrade the controller"
        )
    if version >= target:
        return version
    # Not inside a transaction: SQLite ignores this pragma there.
    enforced = int(next(iter(database.execute("PRAGMA foreign_keys").fetchone())))
    database.execute("PRAGMA foreign_keys=OFF")
    try:
        for number in range(version + 1, target + 1):
            _run(database, number)
    finally:
        database.execute(f"PRAGMA foreign_keys={'ON' if enforced else 'OFF'}")
    return target


def _run(database: sqlite_utils.Database, number: int) -> None:
    """Migration ``number`` in one transaction, committed only if every reference holds."""
    database.execute("BEGIN IMMEDIATE")
    try:
        for step in MIGRATIONS[number - 1]:
            if isinstance(step, str):
                database.execute(step)
            else:
                step(database)
        _check_references(database, number)
        database.execute(f"PRAGMA user_version = {number}")
        database.execute("COMMIT")
    except BaseException:
        database.execute("ROLLBACK")
        raise


def _check_references(database: sqlite_utils.Database, number: int) -> None:
    broken = [
        found
        for found in database.execute("PRAGMA foreign_key_check").fetchall()
        if not _archived_reference(database, found)
    ]
    if broken:
        raise SchemaError(
            f"migration {number} would break {len(broken)} references, for example "
            f"{broken[0]!r}: the journal was left as it was"
        )


def _archived_reference(database: sqlite_utils.Database, found: tuple[object, ...]) -> bool:
    """Whether a reference that ``foreign_key_check`` reports names an archived journal row.

    A pool, a table or a payout pending at an archive's cut keeps the number of the row that
    last changed it, which the archive moved out (controller/journal/archive.py).
    """
    table, rowid, parent, key = found
    if parent != "journal":
        return False
    columns = [
        row[3] for row in database.execute(f"PRAGMA foreign_key_list({table})") if row[0] == key
    ]
    try:
        (archived,) = database.execute("SELECT coalesce(max(last_seq), 0) FROM archives").fetchone()
    except sqlite3.OperationalError:  # a schema before archives
        return False
    for column in columns:
        (seq,) = database.execute(
            f"SELECT {column} FROM {table} WHERE rowid = ?",  # noqa: S608 - names from SQLite
            [rowid],
        ).fetchone()
        if seq is None or int(seq) > int(archived):
            return False
    return bool(columns)
