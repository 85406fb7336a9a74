"""Connections to a PostgreSQL journal, and the one-line errors its failures become.

Each connection is checked for what the journal's durability rests on: the server must flush
a commit before it answers (``fsync`` on, ``synchronous_commit`` not ``off``), or an event
acknowledged to a device could be lost in a crash (docs/ha.md). A connection failure's
message is libpq's first line: it names the host, never the password.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import psycopg

from controller.journal.errors import JournalError

if TYPE_CHECKING:
    from controller.journal.location import DatabaseUrl

CONNECT_TIMEOUT_S: Final = 10
APPLICATION: Final = "jackpotd"

Connection = psycopg.Connection[tuple[Any, ...]]


def reason(error: BaseException) -> str:
    """The first line of a driver's or server's message."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def write_error(url: DatabaseUrl, error: BaseException) -> JournalError:
    """The journal failure a write's database error becomes."""
    return JournalError(f"{url}: cannot write the journal: {reason(error)}")


def _durable(connection: psycopg.Connection[Any], url: DatabaseUrl) -> None:
    """Refuse a server that would acknowledge a commit it has not flushed."""
    settings = dict(
        connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit')"
        ).fetchall()
    )
    if settings.get("fsync") != "on":
        raise JournalError(
            f"{url}: the server runs with fsync off: a committed event could be lost in a "
            "crash, so the journal refuses it (docs/ha.md)"
        )
    if settings.get("synchronous_commit") == "off":
        raise JournalError(
            f"{url}: synchronous_commit is off for this database: a committed event could be "
            "lost in a crash, so the journal refuses it (docs/ha.md)"
        )


def connect(url: DatabaseUrl, *, autocommit: bool = False, writes: bool = True) -> Connection:
    """A connection to the journal's database; its durability checked if it ``writes``."""
    try:
        connection = psycopg.connect(
            url.url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name=APPLICATION,
        )
    except psycopg.Error as error:
        raise JournalError(f"{url}: cannot open the journal: {reason(error)}") from None
    try:
        if writes:
            _durable(connection, url)
        if not autocommit:
            connection.rollback()  # the check's read transaction
    except BaseException:
        connection.close()
        raise
    return connection
