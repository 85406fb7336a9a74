"""The journal file's schema: its versions, and what readers see of a batch.

docs/journal.md, "Schema versions".

Each version's migration runs once, in order; a batch that is prepared but not yet committed
is seen by no reader.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from support.journal_rig import (
    POOL,
    opened_journal,
    play_rounds,
    pool_opened,
    snapshot,
    table_rows,
    wager,
)

from controller.journal import Journal, JournalError, store
from controller.journal.schema import MIGRATIONS, SchemaError, migrate
from controller.journal.verify import verify

if TYPE_CHECKING:
    from pathlib import Path


# --- schema migrations ----------------------------------------------------------------------


def test_journal_schema_fresh_journal_is_migrated_to_the_latest_schema_version(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    Journal(path).close()
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {
            row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert {"journal", "pools", "tables", "rounds", "payouts", "meta"} <= tables
    with opened_journal(path) as journal:  # reopening migrates nothing again and keeps rows
        assert journal.state.pools
    with Journal(path) as journal:
        assert len(list(journal.rows())) == 2


def test_journal_schema_journal_from_a_newer_controller_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path):
        pass
    newer = len(MIGRATIONS) + 1
    with closing(sqlite3.connect(path)) as raw:
        raw.execute(f"PRAGMA user_version = {newer}")
    with pytest.raises(
        SchemaError,
        match=rf"schema version {newer}, this controller knows up to {len(MIGRATIONS)}: "
        "upgrade the controller",
    ):
        Journal(path)
    with closing(sqlite3.connect(path)) as raw:  # left as it was
        assert raw.execute("PRAGMA user_version").fetchone()[0] == newer
        assert raw.execute("SELECT count(*) FROM journal").fetchone()[0] == 2


def _unique_indexes(path: Path) -> list[list[str]]:
    """The columns of each UNIQUE index of the journal table."""
    with closing(sqlite3.connect(path)) as raw:
        return [
            [row[2] for row in raw.execute(f"PRAGMA index_info('{name}')")]
            for _seq, name, unique, *_ in raw.execute("PRAGMA index_list(journal)")
            if unique
        ]


def test_journal_schema_journal_of_schema_5_is_upgraded_with_its_rows_and_chain_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.db"
    with monkeypatch.context() as patch:  # a journal written by the controller of schema 5
        patch.setattr(store, "migrate", lambda database: migrate(database, 5))
        with opened_journal(path) as journal:
            play_rounds(journal)
            state = snapshot(journal.state)
    assert sorted(_unique_indexes(path)) == [["event_id"], ["hash"]]
    before = {table: table_rows(path, table) for table in ("journal", "pools", "payouts")}

    with Journal(path) as journal:  # this controller migrates it on opening
        assert snapshot(journal.state) == state
        assert journal.append(wager("r4-w1", "r4", 1)).seq == len(before["journal"]) + 1
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 9
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        with pytest.raises(sqlite3.IntegrityError):  # the file still refuses an id twice
            raw.execute(
                "INSERT INTO journal SELECT seq + 100, event_id, kind, at, event, outcome, "
                "reason, effects, prev_hash, hash || 'x' FROM journal WHERE seq = 1"
            )
    assert _unique_indexes(path) == [["event_id"]]  # the random-page index on hash is gone
    assert table_rows(path, "journal")[: len(before["journal"])] == before["journal"]
    assert table_rows(path, "pools") != before["pools"]  # the new wager moved the meter
    assert table_rows(path, "payouts") == before["payouts"]
    assert verify(path).ok


def test_journal_schema_a_file_that_is_not_a_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal(path)


# --- pages --------------------------------------------------------------------------------


def _page_size(path: Path) -> int:
    with closing(sqlite3.connect(path)) as raw:
        return int(raw.execute("PRAGMA page_size").fetchone()[0])


def test_journal_schema_a_new_journal_has_small_pages_and_an_old_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    """2 KiB pages for a new file (fewer WAL bytes per commit); a 4 KiB file works as it is.

    docs/journal.md, "Schema versions".
    """
    new = tmp_path / "new.db"
    with opened_journal(new) as journal:
        play_rounds(journal)
    assert _page_size(new) == store.PAGE_SIZE == 2048
    old = tmp_path / "old.db"
    with closing(sqlite3.connect(old)) as raw:  # a journal made before: SQLite's default
        raw.execute("PRAGMA page_size=4096")
        raw.execute("VACUUM")
    with opened_journal(old) as journal:
        play_rounds(journal)
        assert journal.append(wager("r4-w1", "r4", 1)).applied
    assert _page_size(old) == 4096
    assert verify(old).ok
    assert verify(new).ok


def test_journal_schema_materialized_rows_are_updated_in_place(tmp_path: Path) -> None:
    """A changed pool or table state keeps its row (an upsert, not a delete and insert).

    docs/journal.md, "Schema versions".
    """
    path = tmp_path / "journal.db"

    def rowids() -> dict[str, list[tuple[object, ...]]]:
        with closing(sqlite3.connect(path)) as raw:
            return {
                table: raw.execute(f"SELECT rowid, {key} FROM {table} ORDER BY 2").fetchall()  # noqa: S608
                for table, key in (("pools", "pool_id"), ("tables", "table_id"))
            }

    with opened_journal(path) as journal:
        # A second pool after it: a replaced row of the first would come back after it.
        assert journal.append(pool_opened("open-b", "B")).applied
        before = rowids()
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        assert journal.state.pools[POOL].wagers_count == 2
    assert table_rows(path, "pools") != []
    assert rowids() == before


# --- prepared, committed, read ----------------------------------------------------------------


def test_journal_schema_readers_see_a_batch_only_once_it_is_committed(tmp_path: Path) -> None:
    with opened_journal(tmp_path / "journal.db") as journal:
        rows = "SELECT count(*) AS n FROM journal"
        before = next(iter(journal.reader.query(rows)))["n"]
        transaction = journal.prepare([wager("a-1", "r1", 1), wager("a-2", "r1", 2)])
        assert next(iter(journal.reader.query(rows)))["n"] == before  # written, not durable
        assert journal.state.pools[POOL].wagers_count == 0  # nor adopted
        with pytest.raises(JournalError, match="must be committed"):
            journal.adopt(transaction)
        transaction.commit()
        assert next(iter(journal.reader.query(rows)))["n"] == before + 2
        assert [receipt.seq for receipt in journal.adopt(transaction)] == [3, 4]
        assert journal.state.pools[POOL].wagers_count == 2
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            journal.reader.execute("DELETE FROM journal")
