"""Where a journal is: a ``postgresql://`` URL names a database, anything else a file's path.

controller/journal/location.py; docs/ha.md. Before it, ``--db postgresql://host/db`` was taken
for a relative path and made an SQLite file ``postgresql:/host/db``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import JournalError
from controller.journal.location import DatabaseUrl, journal_location


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://jackpotd@db.casino.example:5432/journal",
        "postgres://db.casino.example/journal",
        "postgresql:///journal?host=/run/postgresql",
    ],
)
def test_a_postgresql_url_names_a_database_never_a_file(url: str) -> None:
    assert journal_location(url, Path("/etc/jackpotd")) == DatabaseUrl(url)


def test_any_other_text_is_an_sqlite_file_relative_to_its_folder() -> None:
    base = Path("/etc/jackpotd")
    assert journal_location("var/journal.db", base) == base / "var" / "journal.db"
    assert journal_location("/srv/journal.db", base) == Path("/srv/journal.db")
    assert journal_location("postgresql.db") == Path("postgresql.db")
    # A colon alone is no URL: a file may be named so.
    assert journal_location("postgresql:journal.db") == Path("postgresql:journal.db")


@pytest.mark.parametrize("url", ["mysql://db/journal", "sqlite:///var/journal.db", "http://x/y"])
def test_a_url_of_another_scheme_is_refused_rather_than_made_a_file(url: str) -> None:
    with pytest.raises(JournalError, match=r"not a journal location: give an SQLite file's path"):
        journal_location(url)


def test_a_postgresql_url_libpq_cannot_read_is_refused_in_one_line() -> None:
    with pytest.raises(JournalError) as refused:
        journal_location("postgresql://user:hunter2@[::1/journal")
    message = str(refused.value)
    assert message.startswith("postgresql://...: not a PostgreSQL URL libpq reads (")
    assert "\n" not in message
    assert "hunter2" not in message


def test_a_password_in_the_url_never_shows_where_the_journal_is_named() -> None:
    url = DatabaseUrl("postgresql://jackpotd:hunter2@db.casino.example:5432/journal")
    assert str(url) == "postgresql://jackpotd:***@db.casino.example:5432/journal"
    assert (
        f"{url}: cannot open"
        == "postgresql://jackpotd:***@db.casino.example:5432/journal: cannot open"
    )
    assert str(DatabaseUrl("postgresql://db/journal")) == "postgresql://db/journal"


def test_the_database_is_named_by_the_url_or_else_by_its_user() -> None:
    assert DatabaseUrl("postgresql://db:5432/journal").database == "journal"
    assert DatabaseUrl("postgresql://jackpotd@db").database == "jackpotd"
