"""A property's outbox to central, materialized by the journal, on both backends.

controller/journal/site_messages.py, docs/wide-area.md ("The chain of a property's messages"):
each site message a committed row queued is a row of ``site_messages`` written in that row's
transaction; ``site_messages(after, limit)`` gives them in order, each checked against the row
that queued it; ``jackpotd verify`` compares the table with the rows' effects. The edits are
an intruder's who can write the file or the database: a message deleted, altered, re-chained
or forged. A real SQLite file and a real PostgreSQL server (tests/support/postgres.py).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Any, Final

import psycopg
import pytest
from support.journal_rig import (
    AT,
    PAYTABLE,
    POOL,
    STRAIGHT_FLUSH,
    rows_of,
    settle,
    table_configured,
    wager,
)
from support.legacy_journal import legacy_copy

from controller.effects import SiteMessageQueued
from controller.journal import Journal, JournalError
from controller.journal.archive import archive
from controller.journal.copying import copy_journal
from controller.journal.errors import SchemaError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres import PostgresJournal, checks
from controller.journal.postgres import archive as database_archive
from controller.journal.schema import MIGRATIONS
from controller.journal.verify import verify
from controller.security.controller_key import ControllerKey
from controller.wide_events import WideAreaJoined, WideAreaStatusChanged
from controller.widearea.messages import (
    Contribution,
    SiteMessage,
    canonical,
    decode_message,
    next_message,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.journal.port import JournalPort
    from controller.journal.verify import VerifyReport
    from controller.ports import Receipt

SITE: Final = "atlantic"
NOW: Final = "2026-12-01T00:00:00.000Z"
Where = tuple[str, Any]


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Where]:
    """Where a property's journal lives: a file, or a database of its own on the test's server."""
    if request.param == "sqlite":
        yield "sqlite", tmp_path / "property.db"
    else:
        yield "postgresql", DatabaseUrl(request.getfixturevalue("postgres_url"))


def _open(where: Where) -> JournalPort[Any]:
    kind, location = where
    return Journal(location) if kind == "sqlite" else PostgresJournal(location)


def _verify(where: Where, archives: Path | None = None) -> VerifyReport:
    kind, location = where
    if kind == "sqlite":
        return verify(location, archives=archives)
    return checks.verify(location, archives=archives)


def _edit(where: Where, statement: str, params: tuple[object, ...] = ()) -> int:
    """Run ``statement`` (``?`` marks) as an intruder would: a connection of their own."""
    kind, location = where
    if kind == "sqlite":
        with closing(sqlite3.connect(location, isolation_level=None)) as raw:
            return raw.execute(statement, params).rowcount
    with psycopg.connect(location.url, autocommit=True) as raw:
        return raw.execute(statement.replace("?", "%s"), params).rowcount


def _stored(where: Where) -> list[tuple[int, str, int]]:
    kind, location = where
    query = "SELECT site_seq, message, seq FROM site_messages ORDER BY site_seq"
    if kind == "sqlite":
        with closing(sqlite3.connect(location)) as raw:
            return [tuple(row) for row in raw.execute(query)]
    with psycopg.connect(location.url) as raw:
        return [tuple(row) for row in raw.execute(query)]


def _queued(receipts: list[Receipt]) -> list[tuple[int, SiteMessage]]:
    """Each message the receipts' effects queued, with the journal row that queued it."""
    return [
        (receipt.seq, effect.message)
        for receipt in receipts
        for effect in receipt.effects
        if isinstance(effect, SiteMessageQueued)
    ]


def _join(journal: JournalPort[Any]) -> None:
    """Rows 1 to 3: the property joined to central, a table of the wide-area pool, wagers open."""
    central = ControllerKey.generate()
    join = WideAreaJoined("join-1", AT, SITE, central.public_key, {POOL: PAYTABLE}, "mgr")
    journal.append_many([join, table_configured()])
    assert journal.append(WideAreaStatusChanged("open-1", AT, open=True)).applied


def _play(journal: JournalPort[Any]) -> list[tuple[int, SiteMessage]]:
    """Rows 4 to 6: two wagers (two contributions) and a straight flush (a hit claim)."""
    _join(journal)
    receipts = journal.append_many(
        [wager("w1", "r1", 1), wager("w2", "r2", 1), settle("s2", "r2", {1: STRAIGHT_FLUSH})]
    )
    assert all(receipt.applied for receipt in receipts)
    queued = _queued(receipts)
    assert [(seq, message.site_seq) for seq, message in queued] == [(4, 1), (5, 2), (6, 3)]
    return queued


@pytest.fixture
def played(where: Where) -> list[tuple[int, SiteMessage]]:
    """A closed property journal whose wagers and hit queued three messages."""
    with closing(_open(where)) as journal:
        return _play(journal)


# --- what the journal materializes and gives --------------------------------------------------


def test_each_queued_message_is_a_row_written_with_the_journal_row_that_queued_it(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    assert _stored(where) == [
        (message.site_seq, canonical(message).decode(), seq) for seq, message in played
    ]


def test_the_outbox_gives_every_message_in_site_seq_order_equal_to_the_effects(
    where: Where,
) -> None:
    with closing(_open(where)) as journal:
        queued = _play(journal)
        assert journal.site_messages(0, 100) == [message for _, message in queued]


def test_the_outbox_pages_after_the_last_acknowledged_site_seq_at_most_limit_at_a_time(
    where: Where,
) -> None:
    with closing(_open(where)) as journal:
        messages = [message for _, message in _play(journal)]
        assert journal.site_messages(0, 2) == messages[:2]
        assert journal.site_messages(2, 2) == messages[2:]
        assert journal.site_messages(1, 1) == messages[1:2]
        assert journal.site_messages(3, 100) == []  # all acknowledged: nothing to send
        assert journal.site_messages(0, 0) == []


def test_a_reopened_journal_gives_the_same_outbox_and_passes_its_checks(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    with closing(_open(where)) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in played]
        assert journal.check_state(ControllerKey.generate()).ok
        report = journal.verify()
        assert report.ok, report.problems


def test_a_resent_event_queues_no_second_message(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    before = _stored(where)
    with closing(_open(where)) as journal:
        again = journal.append(wager("w2", "r2", 1))
        assert again.duplicate
        assert len(journal.site_messages(0, 100)) == len(played)
    assert _stored(where) == before


def test_a_wager_refused_while_the_link_is_closed_queues_nothing(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    with closing(_open(where)) as journal:
        assert journal.append(WideAreaStatusChanged("close-1", AT, open=False)).applied
        refused = journal.append(wager("w3", "r3", 1))
        assert not refused.applied
        assert len(journal.site_messages(0, 100)) == len(played)


def test_the_table_refuses_a_second_message_under_one_site_seq(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    """A second message numbered 3 would fork the chain central holds, so the key refuses it."""
    seq, message = played[-1]
    forked = canonical(
        next_message(SITE, 3, message.prev, AT, Contribution(POOL, "T1", "r9", 2, 5))
    )
    with pytest.raises((sqlite3.IntegrityError, psycopg.errors.UniqueViolation)):
        _edit(
            where,
            "INSERT INTO site_messages (site_seq, message, seq) VALUES (?, ?, ?)",
            (3, forked.decode(), seq),
        )
    assert [row[0] for row in _stored(where)] == [1, 2, 3]


# --- an intruder's edits: each read refuses, verify names it ------------------------------------


def _forged_after(played: list[tuple[int, SiteMessage]]) -> str:
    """Message 4, chained to message 3, its digest right: a wager no row made."""
    last = played[-1][1]
    return canonical(
        next_message(SITE, 4, last.digest, AT, Contribution(POOL, "T1", "r9", 1, 1))
    ).decode()


def _rechained_2(played: list[tuple[int, SiteMessage]]) -> str:
    """Message 2 made a 1-cent wager, chained to message 1, its digest recomputed."""
    first = played[0][1]
    return canonical(
        next_message(SITE, 2, first.digest, AT, Contribution(POOL, "T1", "r2", 1, 1))
    ).decode()


def _rechained(played: list[tuple[int, SiteMessage]]) -> list[tuple[int, str]]:
    """Messages 2 and 3 rewritten as a chain that holds: message 2's wager 1 cent, not 100."""
    second = _rechained_2(played)
    third = next_message(SITE, 3, decode_message(second.encode()).digest, AT, played[2][1].body)
    return [(2, second), (3, canonical(third).decode())]


ALTER_MESSAGE_2: Final = (
    "UPDATE site_messages SET message = replace(message, '\"wager_cents\":100', "
    "'\"wager_cents\":1') WHERE site_seq = 2"
)
"""Message 2's wager made 1 cent, its digest left as it was."""
ALTER_ROW_5: Final = (
    "UPDATE journal SET effects = replace(effects, '\"wager_cents\":100', "
    "'\"wager_cents\":1') WHERE seq = 5"
)
"""The same edit of the effects of row 5, which queued message 2."""
EDITS: Final = {
    "altered": (
        ALTER_MESSAGE_2,
        "site message 2: not what journal row 5 queued",
        "site message 2 is not what journal row 5 queued",
    ),
    "last-deleted": (
        "DELETE FROM site_messages WHERE site_seq = 3",
        "site message 3: missing from the outbox (site_messages)",
        "site message 3 is missing",
    ),
    "middle-deleted": (
        "DELETE FROM site_messages WHERE site_seq = 2",
        "site message 2: missing from the outbox (site_messages)",
        "site message 2 is missing",
    ),
}


@pytest.mark.usefixtures("played")
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_outbox_fails_verify_and_every_read_refuses_it(where: Where, edit: str) -> None:
    statement, problem, refusal = EDITS[edit]
    assert _edit(where, statement) == 1
    report = _verify(where)
    assert problem in report.problems
    with closing(_open(where)) as journal, pytest.raises(JournalError, match=refusal):
        journal.site_messages(0, 100)


def test_a_rechained_forgery_fails_verify_and_the_read_refuses_it_before_it_is_signed(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    """Digests recomputed so that the chain holds: the rows that queued them do not agree."""
    statement = "UPDATE site_messages SET message = ? WHERE site_seq = ?"
    for site_seq, text in _rechained(played):
        assert _edit(where, statement, (text, site_seq)) == 1
    report = _verify(where)
    assert "site message 2: not what journal row 5 queued" in report.problems
    assert "site message 3: not what journal row 6 queued" in report.problems
    with closing(_open(where)) as journal:
        assert journal.site_messages(0, 1) == [played[0][1]]  # before the edit: as queued
        with pytest.raises(JournalError, match="site message 2 is not what journal row 5 queued"):
            journal.site_messages(1, 100)


def test_a_forged_next_message_fails_verify_and_the_read_refuses_it(
    where: Where, played: list[tuple[int, SiteMessage]]
) -> None:
    seq = played[-1][0]
    statement = "INSERT INTO site_messages (site_seq, message, seq) VALUES (?, ?, ?)"
    assert _edit(where, statement, (4, _forged_after(played), seq)) == 1
    report = _verify(where)
    assert f"site message 4: the journal queued no such message (row {seq})" in report.problems
    with closing(_open(where)) as journal:
        with pytest.raises(JournalError, match=f"site message 4 is not what journal row {seq}"):
            journal.site_messages(3, 100)
        assert journal.site_messages(0, 3) == [message for _, message in played]


@pytest.mark.usefixtures("played")
def test_the_start_up_check_leaves_the_outbox_to_its_reads_and_the_journal_goes_on(
    where: Where,
) -> None:
    """An edited outbox stops the uplink (each read refuses), not the property's own tables."""
    assert _edit(where, "DELETE FROM site_messages WHERE site_seq = 3") == 1
    with closing(_open(where)) as journal:
        assert journal.check_state(ControllerKey.generate()).ok
        with pytest.raises(JournalError, match="site message 3 is missing"):
            journal.site_messages(2, 100)
        assert journal.append(WideAreaStatusChanged("close-1", AT, open=False)).applied


@pytest.mark.usefixtures("played")
def test_a_row_edited_with_its_message_still_fails_the_read(where: Where) -> None:
    """The row's effects and the outbox edited alike: the row no longer hashes to its hash."""
    assert _edit(where, ALTER_ROW_5) == 1
    assert _edit(where, ALTER_MESSAGE_2) == 1
    with (
        closing(_open(where)) as journal,
        pytest.raises(JournalError, match="journal row 5, which was edited"),
    ):
        journal.site_messages(0, 100)
    assert not _verify(where).ok


# --- migrations, copies and archives ------------------------------------------------------------


def test_a_file_made_before_the_outbox_opens_and_gets_it_from_its_rows_every_hash_unchanged(
    tmp_path: Path,
) -> None:
    written = tmp_path / "written.db"
    with Journal(written) as journal:
        queued = _play(journal)
    path = tmp_path / "property.db"
    legacy_copy(written, path, len(MIGRATIONS) - 1)
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
        _play(journal)
    path = tmp_path / "property.db"
    legacy_copy(written, path, len(MIGRATIONS) - 1)
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        assert raw.execute(ALTER_ROW_5).rowcount == 1
    with pytest.raises(SchemaError, match="journal row 5 does not hash to its stored hash"):
        Journal(path)
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) - 1


def test_a_database_of_schema_3_gets_the_outbox_from_its_rows_when_the_service_opens_it(
    postgres_url: str,
) -> None:
    url = DatabaseUrl(postgres_url)
    with PostgresJournal(url) as journal:
        queued = _play(journal)
    with psycopg.connect(url.url, autocommit=True) as admin:
        admin.execute("DROP TABLE site_messages")
        admin.execute("UPDATE journal_schema SET version = 3")
    with PostgresJournal(url) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in queued]
    with psycopg.connect(url.url) as connection:
        versions = connection.execute("SELECT version FROM journal_schema ORDER BY 1").fetchall()
    assert versions == [(3,), (4,)]
    assert checks.verify(url).ok


def test_a_copied_journal_holds_the_files_outbox_and_verifies(
    tmp_path: Path, postgres_url: str
) -> None:
    path = tmp_path / "property.db"
    with Journal(path) as journal:
        queued = _play(journal)
    url = DatabaseUrl(postgres_url)
    copied = copy_journal(path, url)
    assert copied.target.ok, copied.target.problems
    assert _stored(("postgresql", url)) == _stored(("sqlite", path))
    with PostgresJournal(url) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in queued]


def _archive(where: Where, out: Path, rows: int) -> None:
    kind, location = where
    if kind == "sqlite":
        archive(location, out, rows=rows, now=NOW)
    else:
        database_archive.archive(location, out, rows=rows, now=NOW)


def test_an_archive_leaves_unsent_messages_in_the_outbox_checked_as_a_chain(
    where: Where, played: list[tuple[int, SiteMessage]], tmp_path: Path
) -> None:
    """Rows 1 to 5 move to a segment; messages 1 and 2 stay, verified with or without it."""
    out = tmp_path / "segments"
    _archive(where, out, rows=5)
    with closing(_open(where)) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in played]
        assert journal.site_messages(0, 1) == [played[0][1]]  # read on to message 3's row
    for archives in (None, out):
        report = _verify(where, archives)
        assert (report.ok, report.archived) == (True, 5), report.problems


ARCHIVED_EDITS: Final = {
    "altered": (
        lambda _played: (ALTER_MESSAGE_2, ()),
        "site message 2: not a message of the chain (its row is archived)",
        "site message 2 does not hold its digest",
    ),
    "rechained": (
        lambda played: (
            "UPDATE site_messages SET message = ? WHERE site_seq = 2",
            (_rechained_2(played),),
        ),
        "site message 2: not the message 3 links to",
        "site message 2 is not the one its successor links to",
    ),
    "forged-next": (
        lambda played: (
            "INSERT INTO site_messages (site_seq, message, seq) VALUES (4, ?, 5)",
            (_forged_after(played),),
        ),
        "site message 4: the journal queued no such message (row 5)",
        "site message 4 names journal row 5, before its predecessor's",
    ),
    "row-not-held": (
        lambda played: (
            "INSERT INTO site_messages (site_seq, message, seq) VALUES (4, ?, 99)",
            (_forged_after(played),),
        ),
        "site message 4: the journal queued no such message (row 99)",
        "site message 4 names journal row 99, which the journal does not hold",
    ),
}


@pytest.mark.parametrize("edit", sorted(ARCHIVED_EDITS))
def test_an_edited_message_of_an_archived_row_fails_verify_and_every_read_refuses_it(
    where: Where, played: list[tuple[int, SiteMessage]], tmp_path: Path, edit: str
) -> None:
    """Its row is in a segment: the message is held to the chain the live rows continue."""
    out = tmp_path / "segments"
    _archive(where, out, rows=5)
    statement, problem, refusal = ARCHIVED_EDITS[edit]
    assert _edit(where, *statement(played)) == 1
    assert problem in _verify(where).problems
    assert not _verify(where, out).ok
    with closing(_open(where)) as journal, pytest.raises(JournalError, match=refusal):
        journal.site_messages(0, 100)


def test_a_forged_next_message_of_an_archived_row_read_on_its_own_is_not_the_chains_head(
    where: Where, played: list[tuple[int, SiteMessage]], tmp_path: Path
) -> None:
    """Read after the last acknowledged message, nothing live follows it to hold it to."""
    _archive(where, tmp_path / "segments", rows=5)
    statement = "INSERT INTO site_messages (site_seq, message, seq) VALUES (4, ?, 5)"
    assert _edit(where, statement, (_forged_after(played),)) == 1
    with closing(_open(where)) as journal:
        with pytest.raises(JournalError, match="site message 4 is not the head of the ledger's"):
            journal.site_messages(3, 100)
        assert journal.site_messages(0, 3) == [message for _, message in played]
