"""Journal files as an older controller wrote them, for the migration tests.

:func:`legacy_copy` writes a journal of schema ``version`` (9 or before: every row with its
canonical text, ``outcome`` and ``prev_hash``, the hash as hex) holding the rows and the
materialized state of a journal this version wrote: what a controller of that version would
have left after the same events, since the canonical rows and the materialized tables did not
change between those versions.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Final

import sqlite_utils

from controller.journal.sqlite.rows import read_rows
from controller.journal.sqlite.schema import migrate

if TYPE_CHECKING:
    from pathlib import Path

COMPACT: Final = 10
"""The first schema version that stores rows compact (its rows are copied as they are)."""
LEGACY_COLUMNS: Final = (
    "seq", "event_id", "kind", "at", "event", "outcome", "reason", "effects", "prev_hash", "hash",
)  # fmt: skip


def _columns(connection: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [str(row[1]) for row in connection.execute(f"PRAGMA {schema}.table_info({table})")]


def legacy_copy(source: Path, target: Path, version: int, page_size: int = 2048) -> None:
    """Write at ``target`` the journal at ``source`` as schema ``version`` stored it."""
    with closing(sqlite3.connect(target, isolation_level=None)) as raw:
        raw.execute(f"PRAGMA page_size={page_size}")
        raw.execute("PRAGMA journal_mode=WAL")
        migrate(sqlite_utils.Database(raw), version)
        legacy = version < COMPACT
        with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as old:
            rows = [tuple(row.values[name] for name in LEGACY_COLUMNS) for row in read_rows(old)]
        raw.execute("ATTACH DATABASE ? AS source", [f"file:{source}?mode=ro"])
        raw.execute("BEGIN")
        if legacy:
            marks = ", ".join("?" for _ in LEGACY_COLUMNS)
            raw.executemany(f"INSERT INTO journal VALUES ({marks})", rows)  # noqa: S608
        tables = [
            str(name)
            for (name,) in raw.execute("SELECT name FROM main.sqlite_master WHERE type='table'")
            if name != "journal" or not legacy
        ]
        for table in tables:
            ours = _columns(raw, "main", table)
            theirs = set(_columns(raw, "source", table))
            shared = ", ".join(name for name in ours if name in theirs)
            if shared:
                raw.execute(
                    f"INSERT INTO main.{table} ({shared}) SELECT {shared} FROM source.{table}"  # noqa: S608
                )
        raw.execute("COMMIT")
        raw.execute("DETACH DATABASE source")
