"""Opening the journal the service's sequencer writes: fenced when it is a shared database.

A PostgreSQL journal may be opened by several controller nodes; the one that sequences takes
the fence over (:mod:`controller.journal.postgres.fence`, docs/ha.md "The fenced sequencer").
A node may instead open it as a standby, the fence not taken (:func:`open_standby`), and take
it when the holder's lease runs out. An SQLite file has one writer and no fence: it opens as
:func:`.backends.open_journal` opens it. Which is which, its backend says
(:meth:`.backends.JournalBackend.open_sequenced`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.clock import utc_now
from controller.journal.backends import backend_for
from controller.provenances import DAEMON

if TYPE_CHECKING:
    from controller.journal.domain import Domain, State
    from controller.journal.location import DatabaseUrl, JournalLocation
    from controller.journal.port import JournalPort
    from controller.journal.postgres import PostgresJournal
    from controller.journal.postgres.fence import Fence


def open_standby(
    location: DatabaseUrl, fence: Fence, domain: Domain[State]
) -> PostgresJournal[State]:
    """The database's journal for a standby of node ``fence.node``: open, the fence not taken.

    It writes nothing until :meth:`PostgresJournal.take` has taken the fence
    (controller/service/standby.py).
    """
    from controller.journal.postgres import PostgresJournal  # noqa: PLC0415 - psycopg: a database's

    journal = PostgresJournal(location, fence=fence, standby=True, domain=domain)
    journal.writer = DAEMON
    journal.live_clock = utc_now
    return journal


def open_sequenced(
    location: JournalLocation, fence: Fence, domain: Domain[State]
) -> JournalPort[Any, State]:
    """The journal at ``location``, for the sequencer of node ``fence.node``, recording ``domain``.

    A database's fence is taken over first (``FencedError`` if another node holds it live).
    """
    journal = backend_for(location, domain).open_sequenced(fence)
    journal.writer = DAEMON  # its start-up, checkpoints and faults: the sequencer names the rest
    journal.live_clock = utc_now  # a live append: every signature's window must hold now
    return journal
