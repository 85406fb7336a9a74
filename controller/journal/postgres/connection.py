"""Connections to a PostgreSQL journal, and the one-line errors its failures become.

Each connection is checked for what the journal's durability rests on: the server must flush
a commit before it answers (``fsync`` on, ``synchronous_commit`` not ``off``), or an event
acknowledged to a device could be lost in a crash (docs/ha.md). A connection failure's
message is libpq's first line: it names the host, never the password.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from controller.journal.errors import JournalError

if TYPE_CHECKING:
    from controller.journal.location import DatabaseUrl

CONNECT_TIMEOUT_S: Final = 10
APPLICATION: Final = "jackpotd"
NETWORK_BOUNDS: Final = {
    "keepalives": "1",
    "keepalives_idle": "5",
    "keepalives_interval": "2",
    "keepalives_count": "3",
    "tcp_user_timeout": "10000",
}
"""How long a journal connection waits on a network that stopped answering (libpq's settings).

The statements of a batch run on the event loop (``prepare``) and its ``COMMIT`` in the commit
thread: over a partitioned network either would otherwise wait for the kernel's own TCP
timeouts, about 15 minutes. Data the server has not acknowledged within 10 s
(``tcp_user_timeout``, in ms), or an idle wait for its answer whose keepalives go unanswered
for 5 + 3 x 2 s, fails the connection: the sequencer fails closed, and the journal's errors
say why (docs/ha.md). A ``COMMIT`` waiting for a synchronous standby is not cut short: the
server's TCP stack still answers. A journal URL that sets any of them keeps its own.
"""

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
    given = conninfo_to_dict(url.url)
    bounds = {name: value for name, value in NETWORK_BOUNDS.items() if name not in given}
    try:
        connection = psycopg.connect(
            make_conninfo(url.url, **bounds),
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
