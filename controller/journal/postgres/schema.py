"""The PostgreSQL journal's tables: those of the SQLite file's schema 12.

The same tables and columns as the SQLite file (docs/journal.md, "Tables"), in PostgreSQL's
types: the journal rows in the compact form (controller/journal/compact.py) but for ``at``,
kept as its canonical text; ``hash`` as its 32 bytes. ``payouts.made`` keeps the order the
payouts were made in (SQLite's rowid). ``journal_schema`` holds the version, created with the
tables in one transaction under an advisory lock, so that two controllers starting on one
empty database make them once. A database holding other tables and no ``journal_schema`` is
refused: it is not a journal.

| version | what it changed |
|---|---|
| 1 | the tables of the SQLite file's schema 12, but archives |
| 2 | ``sequencer_fence``: the epoch, holder and lease of the sequencer (:mod:`.fence`) |
| 3 | ``archives``: the segments old rows were moved to (:mod:`.archive`); the materialized \
tables' references to journal rows dropped, since a pool, a table, an operator or a pending \
payout keeps the number of the row that last changed it, archived or not (as in the file) |
| 4 | ``site_messages``: a property's outbox to central (:mod:`.site_messages`), filled in from \
the rows journaled before; the rows and the chain untouched (the file's schema 13) |
| 5 | ``journal.provenance``: which intake or command wrote each row, NULL for the rows \
before; the hash chain does not cover it (the file's schema 14) |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from controller.journal.errors import SchemaError
from controller.journal.postgres import fence, site_messages

if TYPE_CHECKING:
    from controller.journal.postgres.connection import Connection

VERSION: Final = 6
_LOCK: Final = 0x6A61636B706F7464  # "jackpotd": the advisory lock of the schema's creation

TABLES: Final = (
    """CREATE TABLE journal (
        seq BIGINT PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        event TEXT NOT NULL,
        reason TEXT,
        effects TEXT NOT NULL,
        hash BYTEA NOT NULL
    )""",
    """CREATE TABLE pools (
        pool_id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        seq BIGINT NOT NULL REFERENCES journal (seq)
    )""",
    """CREATE TABLE tables (
        table_id TEXT PRIMARY KEY,
        config TEXT NOT NULL,
        seq BIGINT NOT NULL REFERENCES journal (seq)
    )""",
    """CREATE TABLE table_states (
        table_id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        seq BIGINT NOT NULL REFERENCES journal (seq)
    )""",
    """CREATE TABLE rounds (
        table_id TEXT NOT NULL,
        round_id TEXT NOT NULL,
        wagers TEXT NOT NULL,
        PRIMARY KEY (table_id, round_id)
    )""",
    """CREATE TABLE payouts (
        payout_id TEXT PRIMARY KEY,
        made BIGINT GENERATED ALWAYS AS IDENTITY,
        seq BIGINT NOT NULL REFERENCES journal (seq),
        at TEXT NOT NULL,
        table_id TEXT NOT NULL,
        round_id TEXT NOT NULL,
        seat INTEGER NOT NULL,
        spot TEXT NOT NULL,
        kind TEXT NOT NULL,
        wager_cents BIGINT NOT NULL,
        line TEXT,
        win_cents BIGINT NOT NULL,
        returned_cents BIGINT NOT NULL,
        from_meter_cents BIGINT NOT NULL,
        pool_id TEXT,
        capped_cents BIGINT NOT NULL,
        envy_from_seat INTEGER,
        status TEXT NOT NULL CHECK (status IN ('paid', 'pending')),
        tax_report INTEGER NOT NULL,
        verified_by TEXT,
        verified_seq BIGINT REFERENCES journal (seq),
        hand TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX payouts_by_seq ON payouts (seq)",
    (
        "CREATE INDEX payouts_to_verify ON payouts (seq) WHERE kind = 'progressive' "
        "OR verified_by IS NOT NULL OR status = 'pending'"
    ),
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE operators (
        name TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        salt TEXT NOT NULL,
        pin_hash TEXT NOT NULL,
        kdf TEXT NOT NULL,
        public_key TEXT NOT NULL DEFAULT '',
        failures INTEGER NOT NULL DEFAULT 0,
        locked INTEGER NOT NULL DEFAULT 0,
        seq BIGINT NOT NULL REFERENCES journal (seq)
    )""",
    """CREATE TABLE device_seqs (
        table_id TEXT NOT NULL,
        device TEXT NOT NULL,
        high BIGINT NOT NULL,
        PRIMARY KEY (table_id, device)
    )""",
    """CREATE TABLE snapshots (
        seq BIGINT PRIMARY KEY REFERENCES journal (seq),
        head_seq BIGINT NOT NULL,
        state TEXT NOT NULL
    )""",
    "CREATE TABLE journal_schema (version INTEGER NOT NULL)",
)
ARCHIVES: Final = """CREATE TABLE archives (
        segment TEXT PRIMARY KEY,
        first_seq BIGINT NOT NULL,
        last_seq BIGINT NOT NULL UNIQUE,
        prev_hash TEXT NOT NULL,
        last_hash TEXT NOT NULL,
        rows BIGINT NOT NULL,
        sha256 TEXT NOT NULL,
        checkpoint_seq BIGINT,
        state TEXT NOT NULL,
        archived_at TEXT NOT NULL
    )"""
"""The SQLite file's ``archives`` (docs/journal.md, "Archives"), column for column."""
_REFERENCES: Final = (
    ("pools", "pools_seq_fkey"),
    ("tables", "tables_seq_fkey"),
    ("table_states", "table_states_seq_fkey"),
    ("payouts", "payouts_seq_fkey"),
    ("payouts", "payouts_verified_seq_fkey"),
    ("operators", "operators_seq_fkey"),
    ("snapshots", "snapshots_seq_fkey"),
)
"""The references to ``journal (seq)`` that :data:`TABLES` made (PostgreSQL's names for them)."""
Step = str | Callable[["Connection"], None]
"""An SQL statement, or a function given the connection (what SQL cannot do: read rows)."""
MIGRATIONS: Final[dict[int, tuple[Step, ...]]] = {
    2: (fence.TABLE,),
    3: (
        ARCHIVES,
        *(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}" for table, name in _REFERENCES),
    ),
    4: (site_messages.TABLE, site_messages.backfill),
    5: ("ALTER TABLE journal ADD COLUMN IF NOT EXISTS provenance TEXT",),
    # The pays verified, by the row that verified them (the console's "last verified").
    6: (
        (
            "CREATE INDEX IF NOT EXISTS payouts_verified ON payouts (verified_seq) "
            "WHERE verified_seq IS NOT NULL"
        ),
    ),
}
"""What each version adds to the one before, run in order on an older journal's database."""


def migrate(connection: Connection, where: str) -> int:
    """Make the tables in an empty database; check the version of a journal's. Commits."""
    with connection.transaction():
        # Tables are nothing anyone is answered on, and every group commit after waits for
        # replication: opening a journal never waits for a standby (docs/ha.md).
        connection.execute("SET LOCAL synchronous_commit = local")
        connection.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK])
        found = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        names = {str(name) for (name,) in found}
        if "journal_schema" in names:
            row = connection.execute("SELECT max(version) FROM journal_schema").fetchone()
            version = int(row[0]) if row and row[0] is not None else 0
            if version > VERSION:
                raise SchemaError(
                    f"{where}: the journal is at schema version {version}, this controller "
                    f"knows up to {VERSION}: upgrade the controller"
                )
            for step in range(version + 1, VERSION + 1):
                _run(connection, MIGRATIONS[step])
                connection.execute("INSERT INTO journal_schema (version) VALUES (%s)", [step])
            return VERSION
        if names:
            shown = ", ".join(sorted(names)[:5])
            raise SchemaError(
                f"{where}: not a journal: the database holds other tables ({shown}) and no "
                "journal_schema; give the journal a database of its own"
            )
        _run(connection, (*TABLES, *(made for step in MIGRATIONS.values() for made in step)))
        connection.execute("INSERT INTO journal_schema (version) VALUES (%s)", [VERSION])
    return VERSION


def _run(connection: Connection, steps: tuple[Step, ...]) -> None:
    for step in steps:
        if isinstance(step, str):
            connection.execute(step)
        else:
            step(connection)
