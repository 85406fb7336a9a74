"""A property's outbox to central kept across migrations, copies and archives, both backends.

controller/journal/site_messages.py: a journal made before the table gets it from its rows
when the service opens it (file schema 13, database schema 4), every row and hash unchanged;
``jackpotd journal copy`` makes it again in the database; an archive leaves it whole, and the
messages of archived rows are held to the chain the live rows continue, by verify and by
every read. A real SQLite file and a real PostgreSQL server (tests/support/journal/postgres.py).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Final

import psycopg
import pytest
from support.journal.journal_rig import rows_of
from support.journal.legacy_journal import legacy_copy
from support.journal.site_outbox import (
    ALTER_MESSAGE_2,
    ALTER_ROW_5,
    Where,
    archive_at,
    edit,
    forged_after,
    open_journal,
    play,
    rechained_2,
    stored,
    verify_at,
)

from controller.journal import JournalError
from controller.journal.errors import SchemaError
from controller.journal.location import DatabaseUrl
from controller.journal.sqlite.schema import MIGRATIONS
from controller.ledger_journal.copying import copy_journal
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.postgres import verify as verify_database
from controller.ledger_journal.sqlite import Journal, verify

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from controller.widearea.messages import SiteMessage

    Intrusion = Callable[[list[tuple[int, SiteMessage]]], tuple[str, tuple[object, ...]]]
    """An intruder's statement and its parameters, made from the three queued messages."""

BEFORE_OUTBOX = 12
"""The schema before the outbox to central (migration 13 made it)."""


def test_a_file_made_before_the_outbox_opens_and_gets_it_from_its_rows_every_hash_unchanged(
    tmp_path: Path,
) -> None:
    written = tmp_path / "written.db"
    with Journal(written) as journal:
        queued = play(journal)
    path = tmp_path / "property.db"
    legacy_copy(written, path, BEFORE_OUTBOX)
    with closing(sqlite3.connect(path)) as raw:
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
    assert "site_messages" not in tables
    rows = rows_of(path)
    before = verify(path)  # verified as it is, without being migrated
    assert before.ok, before.problems
    assert any("predates the site_messages table" in note for note in before.notes)
    with Journal(path) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in queued]
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    assert rows_of(path) == rows
    after = verify(path)
    assert (after.ok, after.head) == (True, before.head)


def test_a_file_whose_queuing_row_was_edited_is_not_migrated_and_is_left_as_it_was(
    tmp_path: Path,
) -> None:
    written = tmp_path / "written.db"
    with Journal(written) as journal:
        play(journal)
    path = tmp_path / "property.db"
    legacy_copy(written, path, BEFORE_OUTBOX)
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        assert raw.execute(ALTER_ROW_5).rowcount == 1
    with pytest.raises(SchemaError, match="journal row 5 does not hash to its stored hash"):
        Journal(path)
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == BEFORE_OUTBOX


def test_a_database_of_schema_3_gets_the_outbox_from_its_rows_when_the_service_opens_it(
    postgres_url: str,
) -> None:
    url = DatabaseUrl(postgres_url)
    with PostgresJournal(url) as journal:
        queued = play(journal)
    with psycopg.connect(url.url, autocommit=True) as admin:
        admin.execute("DROP TABLE site_messages")
        admin.execute("ALTER TABLE journal DROP COLUMN provenance")
        admin.execute("UPDATE journal_schema SET version = 3")
    with PostgresJournal(url) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in queued]
    with psycopg.connect(url.url) as connection:
        versions = connection.execute("SELECT version FROM journal_schema ORDER BY 1").fetchall()
    assert versions == [(3,), (4,), (5,), (6,)]  # 6: the pays verified's index, if not there
    assert verify_database(url).ok


def test_a_copied_journal_holds_the_files_outbox_and_verifies(
    tmp_path: Path, postgres_url: str
) -> None:
    path = tmp_path / "property.db"
    with Journal(path) as journal:
        queued = play(journal)
    url = DatabaseUrl(postgres_url)
    copied = copy_journal(path, url)
    assert copied.target.ok, copied.target.problems
    assert stored(("postgresql", url)) == stored(("sqlite", path))
    with PostgresJournal(url) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in queued]


def test_an_archive_leaves_unsent_messages_in_the_outbox_checked_as_a_chain(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]], tmp_path: Path
) -> None:
    """Rows 1 to 5 move to a segment; messages 1 and 2 stay, verified with or without it."""
    out = tmp_path / "segments"
    archive_at(property_at, out, rows=5)
    with closing(open_journal(property_at)) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in three_queued]
        assert journal.site_messages(0, 1) == [three_queued[0][1]]  # read on to message 3's row
    for archives in (None, out):
        report = verify_at(property_at, archives)
        assert (report.ok, report.archived) == (True, 5), report.problems


ARCHIVED_EDITS: Final[dict[str, tuple[Intrusion, str, str]]] = {
    "altered": (
        lambda _played: (ALTER_MESSAGE_2, ()),
        "site message 2: not a message of the chain (its row is archived)",
        "site message 2 does not hold its digest",
    ),
    "rechained": (
        lambda three_queued: (
            "UPDATE site_messages SET message = ? WHERE site_seq = 2",
            (rechained_2(three_queued),),
        ),
        "site message 2: not the message 3 links to",
        "site message 2 is not the one its successor links to",
    ),
    "forged-next": (
        lambda three_queued: (
            "INSERT INTO site_messages (site_seq, message, seq) VALUES (4, ?, 5)",
            (forged_after(three_queued),),
        ),
        "site message 4: the journal queued no such message (row 5)",
        "site message 4 names journal row 5, before its predecessor's",
    ),
    "row-not-held": (
        lambda three_queued: (
            "INSERT INTO site_messages (site_seq, message, seq) VALUES (4, ?, 99)",
            (forged_after(three_queued),),
        ),
        "site message 4: the journal queued no such message (row 99)",
        "site message 4 names journal row 99, which the journal does not hold",
    ),
}


@pytest.mark.parametrize("edited", sorted(ARCHIVED_EDITS))
def test_an_edited_message_of_an_archived_row_fails_verify_and_every_read_refuses_it(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]], tmp_path: Path, edited: str
) -> None:
    """Its row is in a segment: the message is held to the chain the live rows continue."""
    out = tmp_path / "segments"
    archive_at(property_at, out, rows=5)
    statement, problem, refusal = ARCHIVED_EDITS[edited]
    assert edit(property_at, *statement(three_queued)) == 1
    assert problem in verify_at(property_at).problems
    assert not verify_at(property_at, out).ok
    with closing(open_journal(property_at)) as journal, pytest.raises(JournalError, match=refusal):
        journal.site_messages(0, 100)


def test_a_forged_next_message_of_an_archived_row_read_on_its_own_is_not_the_chains_head(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]], tmp_path: Path
) -> None:
    """Read after the last acknowledged message, nothing live follows it to hold it to."""
    archive_at(property_at, tmp_path / "segments", rows=5)
    statement = "INSERT INTO site_messages (site_seq, message, seq) VALUES (4, ?, 5)"
    assert edit(property_at, statement, (forged_after(three_queued),)) == 1
    with closing(open_journal(property_at)) as journal:
        with pytest.raises(JournalError, match="site message 4 is not the head of the ledger's"):
            journal.site_messages(3, 100)
        assert journal.site_messages(0, 3) == [message for _, message in three_queued]
