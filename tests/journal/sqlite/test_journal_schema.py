"""The journal file's schema: its versions, and what readers see of a batch.

docs/journal.md, "Schema versions".

Each version's migration runs once, in order; a batch that is prepared but not yet committed
is seen by no reader.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import (
    POOL,
    opened_journal,
    play_rounds,
    pool_opened,
    rows_of,
    snapshot,
    table_rows,
    wager,
)
from support.journal.legacy_journal import legacy_copy

from controller.journal import JournalError
from controller.journal.errors import SchemaError
from controller.journal.sqlite import store
from controller.journal.sqlite.schema import MIGRATIONS
from controller.ledger_journal.sqlite import Journal, verify

if TYPE_CHECKING:
    from pathlib import Path

    from support.journal.journal_rig import Stored


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


def played_as_of(tmp_path: Path, version: int) -> tuple[Path, Stored]:
    """The rig's rounds in a journal as the controller of schema ``version`` left it."""
    written = tmp_path / "written.db"
    with opened_journal(written) as journal:
        play_rounds(journal)
        state = snapshot(journal.state)
    path = tmp_path / "journal.db"
    legacy_copy(written, path, version)
    return path, state


def test_journal_schema_journal_of_schema_5_is_upgraded_with_its_rows_and_chain_unchanged(
    tmp_path: Path,
) -> None:
    path, state = played_as_of(tmp_path, 5)
    assert sorted(_unique_indexes(path)) == [["event_id"], ["hash"]]
    before = {table: table_rows(path, table) for table in ("journal", "pools", "payouts")}
    rows = rows_of(path)
    assert verify(path).ok  # the old file verifies as it is, without being migrated

    with Journal(path) as journal:  # this controller migrates it on opening
        assert snapshot(journal.state) == state
        assert journal.append(wager("r4-w1", "r4", 1)).seq == len(before["journal"]) + 1
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        with pytest.raises(sqlite3.IntegrityError):  # the file still refuses an id twice
            raw.execute(
                "INSERT INTO journal SELECT seq + 100, event_id, kind, at, event, reason, "
                "effects, hash, provenance FROM journal WHERE seq = 1"
            )
    assert _unique_indexes(path) == [["event_id"]]  # the random-page index on hash is gone
    assert rows_of(path)[: len(rows)] == rows  # every row and hash as it was
    assert table_rows(path, "pools") != before["pools"]  # the new wager moved the meter
    assert table_rows(path, "payouts") == before["payouts"]
    assert verify(path).ok


def _journal_pages(path: Path) -> int:
    with closing(sqlite3.connect(path)) as raw:
        return int(raw.execute("SELECT count(*) FROM dbstat WHERE name = 'journal'").fetchone()[0])


def test_journal_schema_journal_of_schema_9_is_stored_compact_with_every_hash_unchanged(
    tmp_path: Path,
) -> None:
    """Schema 10 rewrites each row in the compact form; what the hash chain covers is unchanged.

    docs/journal.md, "What a row stores".
    """
    path, state = played_as_of(tmp_path, 9)
    rows, pages = rows_of(path), _journal_pages(path)
    assert "prev_hash" in rows[0]
    before = verify(path)
    assert before.ok, before.problems
    with Journal(path) as journal:
        assert snapshot(journal.state) == state
        assert journal.head == (len(rows), rows[-1]["hash"])
    assert rows_of(path) == rows
    assert _journal_pages(path) < pages
    after = verify(path)
    assert (after.ok, after.head, after.rows) == (True, before.head, before.rows)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (
            "UPDATE journal SET prev_hash = (SELECT hash FROM journal WHERE seq = 1) WHERE seq = 5",
            "row 5 does not chain to the row before it (prev_hash)",
        ),
        (
            "UPDATE journal SET event = replace(event, ',', ', ') WHERE seq = 4",
            "row 4 is not the canonical text of its event and effects",
        ),
        (
            "UPDATE journal SET reason = 'edited' WHERE seq = 3",
            "row 3 is not the canonical text of its event and effects",
        ),
        (
            "UPDATE journal SET event = 'nonsense' WHERE seq = 3",
            "row 3 does not hold an event and its effects",
        ),
    ],
    ids=["prev-hash", "event-text", "reason-of-an-applied-event", "not-an-event"],
)
def test_journal_schema_an_edited_row_of_schema_9_stops_the_migration_and_leaves_the_file(
    tmp_path: Path, edit: str, why: str
) -> None:
    """Storing the row compact would drop what shows the edit: the file is left as it was."""
    path, _ = played_as_of(tmp_path, 9)
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        raw.execute(edit)
        assert raw.total_changes == 1
    rows = rows_of(path)
    with pytest.raises(SchemaError, match=re.escape(why)):
        Journal(path)
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 9
    assert rows_of(path) == rows
    assert not verify(path).ok


def _indexes(path: Path, table: str) -> set[str]:
    with closing(sqlite3.connect(path)) as raw:
        return {str(row[1]) for row in raw.execute(f"PRAGMA index_list({table})")}


def test_journal_schema_payouts_are_indexed_only_where_the_reads_look(tmp_path: Path) -> None:
    """One small index of the payouts that need(ed) verification serves every read but one.

    docs/journal.md, "Schema versions" (11).
    """
    path, _ = played_as_of(tmp_path, 10)
    assert {"payouts_by_status", "payouts_by_pool"} <= _indexes(path, "payouts")
    Journal(path).close()
    assert _indexes(path, "payouts") == {
        "sqlite_autoindex_payouts_1",  # the payout id, which a verification updates by
        "payouts_by_seq",  # what a sink catching up reads
        "payouts_to_verify",
        "payouts_verified",  # the console's last pays verified (version 16)
    }
    with Journal(path) as journal:
        plans = {
            query: " ".join(
                str(row[3]) for row in journal.reader.execute(f"EXPLAIN QUERY PLAN {query}")
            )
            for query in (
                "SELECT * FROM payouts WHERE status = 'pending' ORDER BY seq",
                (
                    "SELECT * FROM payouts WHERE kind = 'progressive' AND from_meter_cents > 0 "
                    "ORDER BY seq DESC LIMIT 5"
                ),
                (
                    "SELECT * FROM payouts WHERE (kind = 'progressive' OR verified_by IS NOT NULL "
                    "OR status = 'pending') AND pool_id = 'pool-a' ORDER BY seq DESC"
                ),
            )
        }
        assert all("payouts_to_verify" in plan for plan in plans.values()), plans
        assert [pay.payout_id for pay in journal.pending_payouts()] == ["r3-settle/1/progressive"]
        assert [hit.payout_id for hit in journal.hits()] == [
            "r2-settle/3/progressive",
            "r3-settle/1/progressive",
        ]
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
