"""A property's journal for the outbox tests: its messages queued, and an intruder's edits.

tests/journal/test_journal_site_messages*.py, on both backends. ``property_at`` (a fixture,
registered by tests/conftest.py) is where a property's journal lives, a file or a PostgreSQL
database of the test's own (tests/support/journal/postgres.py), once each; :func:`play` journals a
property joined to central whose two wagers and a straight flush queue three site messages
(rows 4 to 6), and ``three_queued`` is that journal, closed; :func:`edit` writes the file or
the database as someone with its password would.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Any, Final

import psycopg
import pytest

from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.postgres import archive as archive_database
from controller.ledger_journal.postgres import verify as verify_database
from controller.ledger_journal.sqlite import Journal, archive, verify
from controller.security.controller_key import ControllerKey
from controller.wide_effects import SiteMessageQueued
from controller.wide_events import WideAreaJoined, WideAreaStatusChanged
from controller.widearea.messages import Contribution, canonical, decode_message, next_message
from support.journal.journal_rig import (
    AT,
    PAYTABLE,
    POOL,
    STRAIGHT_FLUSH,
    settle,
    table_configured,
    wager,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.journal.row_checks import VerifyReport
    from controller.ledger_journal import LedgerJournal
    from controller.ports import Receipt
    from controller.widearea.messages import SiteMessage

SITE: Final = "atlantic"
NOW: Final = "2026-12-01T00:00:00.000Z"
Where = tuple[str, Any]
"""``("sqlite", path)`` or ``("postgresql", DatabaseUrl)``."""


@pytest.fixture(params=["sqlite", "postgresql"])
def property_at(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Where]:
    """Where a property's journal lives: a file, or a database of its own on the test's server."""
    if request.param == "sqlite":
        yield "sqlite", tmp_path / "property.db"
    else:
        yield "postgresql", DatabaseUrl(request.getfixturevalue("postgres_url"))


@pytest.fixture
def three_queued(property_at: Where) -> list[tuple[int, SiteMessage]]:
    """A closed property journal whose wagers and hit queued three messages (rows 4 to 6)."""
    with closing(open_journal(property_at)) as journal:
        return play(journal)


def open_journal(where: Where) -> LedgerJournal:
    """The journal at ``where``, opened as the service opens it (migrated)."""
    kind, location = where
    return Journal(location) if kind == "sqlite" else PostgresJournal(location)


def verify_at(where: Where, archives: Path | None = None) -> VerifyReport:
    """``jackpotd verify`` of the journal at ``where`` (with its segments' folder if given)."""
    kind, location = where
    if kind == "sqlite":
        return verify(location, archives=archives)
    return verify_database(location, archives=archives)


def edit(where: Where, statement: str, params: tuple[object, ...] = ()) -> int:
    """Run ``statement`` (``?`` marks) as an intruder would: a connection of their own."""
    kind, location = where
    if kind == "sqlite":
        with closing(sqlite3.connect(location, isolation_level=None)) as raw:
            return raw.execute(statement, params).rowcount
    with psycopg.connect(location.url, autocommit=True) as raw:
        return raw.execute(statement.replace("?", "%s"), params).rowcount


def stored(where: Where) -> list[tuple[int, str, int]]:
    """The ``site_messages`` rows as stored, in ``site_seq`` order."""
    kind, location = where
    query = "SELECT site_seq, message, seq FROM site_messages ORDER BY site_seq"
    if kind == "sqlite":
        with closing(sqlite3.connect(location)) as raw:
            return [tuple(row) for row in raw.execute(query)]
    with psycopg.connect(location.url) as raw:
        return [tuple(row) for row in raw.execute(query)]


def queued_by(receipts: list[Receipt]) -> list[tuple[int, SiteMessage]]:
    """Each message the receipts' effects queued, with the journal row that queued it."""
    return [
        (receipt.seq, effect.message)
        for receipt in receipts
        for effect in receipt.effects
        if isinstance(effect, SiteMessageQueued)
    ]


def join(journal: LedgerJournal) -> None:
    """Rows 1 to 3: the property joined to central, a table of the wide-area pool, wagers open."""
    central = ControllerKey.generate()
    joined = WideAreaJoined("join-1", AT, SITE, central.public_key, {POOL: PAYTABLE}, "mgr")
    journal.append_many([joined, table_configured()])
    assert journal.append(WideAreaStatusChanged("open-1", AT, open=True)).applied


def play(journal: LedgerJournal) -> list[tuple[int, SiteMessage]]:
    """Rows 4 to 6: two wagers (two contributions) and a straight flush (a hit claim)."""
    join(journal)
    receipts = journal.append_many(
        [wager("w1", "r1", 1), wager("w2", "r2", 1), settle("s2", "r2", {1: STRAIGHT_FLUSH})]
    )
    assert all(receipt.applied for receipt in receipts)
    queued = queued_by(receipts)
    assert [(seq, message.site_seq) for seq, message in queued] == [(4, 1), (5, 2), (6, 3)]
    return queued


def forged_after(played: list[tuple[int, SiteMessage]]) -> str:
    """Message 4, chained to message 3, its digest right: a wager no row made."""
    last = played[-1][1]
    return canonical(
        next_message(SITE, 4, last.digest, AT, Contribution(POOL, "T1", "r9", 1, 1))
    ).decode()


def rechained_2(played: list[tuple[int, SiteMessage]]) -> str:
    """Message 2 made a 1-cent wager, chained to message 1, its digest recomputed."""
    first = played[0][1]
    return canonical(
        next_message(SITE, 2, first.digest, AT, Contribution(POOL, "T1", "r2", 1, 1))
    ).decode()


def rechained(played: list[tuple[int, SiteMessage]]) -> list[tuple[int, str]]:
    """Messages 2 and 3 rewritten as a chain that holds: message 2's wager 1 cent, not 100."""
    second = rechained_2(played)
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


def archive_at(where: Where, out: Path, rows: int) -> None:
    """``jackpotd archive --rows N --out DIR`` of the journal at ``where``."""
    kind, location = where
    if kind == "sqlite":
        archive(location, out, rows=rows, now=NOW)
    else:
        archive_database(location, out, rows=rows, now=NOW)
