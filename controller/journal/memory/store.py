"""The in-memory journal: the SQLite journal's code, on a database in memory.

:class:`MemoryJournal` is :class:`controller.journal.sqlite.store.Journal` (the same append path,
hash chain, materialized tables, catch-up of another writer, reads, outbox of site messages
and start-up check) with its connections opened on the memory database
(:mod:`.database`) rather than on a file: what differs from the file's is only how a
connection is made, and the messages, which name ``memory://NAME``.
"""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlite_utils

from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.memory import database
from controller.journal.memory.readonly import verify
from controller.journal.sqlite.outbox import MARK_SCHEMA, SCHEMA, JournalOutbox
from controller.journal.sqlite.schema import migrate
from controller.journal.sqlite.store import Journal
from controller.journal.sqlite.transaction import Transaction, roll_back
from controller.ports import OutboxError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent
    from controller.journal.anchors import Anchor
    from controller.journal.checkpoints import Sealed
    from controller.journal.devices import DeviceMarks
    from controller.journal.domain import Domain
    from controller.journal.location import MemoryLocation
    from controller.journal.port import JournalPort
    from controller.journal.row_checks import VerifyReport
    from controller.provenances import Provenances


@dataclass(slots=True)
class MemoryTransaction(Transaction[State]):
    """A prepared append of a memory journal: its commit's failure names ``memory://NAME``."""

    where: str = ""

    def commit(self) -> None:
        """``COMMIT``; else rolled back and :class:`JournalError`."""
        try:
            self.connection.execute("COMMIT")
        except BaseException as error:
            roll_back(self.connection)
            if isinstance(error, sqlite3.Error):
                raise JournalError(f"{self.where}: cannot write the journal: {error}") from error
            raise
        self.committed = True


class MemoryJournal(Journal[State]):
    """The journal ``memory://NAME`` of this process, opened for writing (made if new)."""

    def __init__(self, location: MemoryLocation, domain: Domain[State]) -> None:
        # Journal's own __init__ opens a file; this is it with the memory database's connection.
        self.location = location
        self.domain = domain
        self.path = location  # type: ignore[assignment] # the port's path: the location
        try:
            self.db = database.database(location)
            migrate(self.db)
        except sqlite3.Error as error:
            raise JournalError(f"{location}: cannot open the journal: {error}") from error
        self._tail = self._last_row()
        self.state = self._load()
        self._devices = self._read_devices()
        self._devices_after: tuple[Transaction[State], DeviceMarks] | None = None
        self.writer: str | None = None
        self.live_clock: Callable[[], str] | None = None

    @functools.cached_property
    def reader(self) -> sqlite_utils.Database:
        """A read-only connection of its own (the file's :attr:`Journal.reader`)."""
        return sqlite_utils.Database(database.connect(self.location, read_only=True))

    def outbox(self, sink: str) -> JournalOutbox:
        """The named sink's outbox, in this journal's database (its own connection)."""
        return MemoryOutbox(self.location, sink)

    def prepare(
        self,
        events: Sequence[AnyEvent],
        *,
        snapshot: Sealed | None = None,
        provenance: Provenances = None,
        domain: Domain[State] | None = None,
    ) -> Transaction[State]:
        """:meth:`Journal.prepare`, its failures naming ``memory://NAME``."""
        try:
            named = self.writer if provenance is None else provenance
            prepared = self._prepare(
                events, snapshot, named, self.domain if domain is None else domain
            )
        except sqlite3.Error as error:
            raise JournalError(f"{self.location}: cannot write the journal: {error}") from error
        transaction = MemoryTransaction(
            prepared.path,
            prepared.connection,
            prepared.state,
            prepared.tail,
            prepared.receipts,
            where=str(self.location),
        )
        if self._devices_after is not None and self._devices_after[0] is prepared:
            self._devices_after = (transaction, self._devices_after[1])
        return transaction

    def verify(self, *, keys: Sequence[str] = (), anchors: Sequence[Anchor] = ()) -> VerifyReport:
        """Check the chain and replay the journal from empty (:func:`.readonly.verify`)."""
        return verify(self.location, keys=keys, anchors=anchors, domain=self.domain)


class MemoryOutbox(JournalOutbox):
    """One sink's stored messages in a memory journal's database (:class:`JournalOutbox`)."""

    def __init__(self, location: MemoryLocation, sink: str) -> None:
        # JournalOutbox's own __init__ opens a file; the same tables here.
        self.sink = sink
        try:
            self._db = database.connect(location)
            self._db.execute(SCHEMA)
            self._db.execute(MARK_SCHEMA)
        except sqlite3.Error as error:
            raise OutboxError(f"{location}: cannot open the MQTT outbox: {error}") from error


if TYPE_CHECKING:  # mypy proves the memory journal implements the port.
    _BACKEND: type[JournalPort[Transaction[Any], Any]] = MemoryJournal
