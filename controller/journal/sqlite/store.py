"""Appending events to the journal and restoring the ledger from it.

One SQLite file in WAL mode with ``synchronous=FULL``. Each event is applied to the ledger in
memory, then the journal row (event, outcome, effects, hash chain) and every changed row of
the materialized state (pools, tables, open rounds, payouts, the outbox of site messages)
are written in **one** ``BEGIN IMMEDIATE`` transaction; the in-memory state moves on only
after it commits. An event id seen before is acknowledged with its original outcome and not
applied again. If the write fails, the exception propagates and nothing changed: the caller
fails closed.

Several events appended together (:meth:`Journal.append_many`, the sequencer's group commit)
share that one transaction, and its work: the ids are looked up in one query, the journal
rows inserted in one statement, and each changed row of the materialized state is written
once, as it stands after the last event that changed it (with that event's row as its
``seq``), rather than once per event. What the file holds once the transaction commits is the
same as if the events had been appended one by one.

Another process (a supervisor's command) may append to the same file: under the write lock,
the journal checks that the last row is still the one it knows and otherwise catches up first,
replaying that process's rows from its own state; the tables must equal the result, or nothing
is written (:meth:`Journal._catch_up`).
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Final, Generic, Self

import msgspec
import sqlite_utils

from controller.files import prepare_database
from controller.journal.appending import (
    Changed,
    Known,
    append_events,
    changed_rows,
    known_receipt,
    payout_columns,
)
from controller.journal.chain import GENESIS
from controller.journal.devices import DeviceMarks, merged
from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.provenance import each_provenance
from controller.journal.rows import INSERT
from controller.journal.sqlite import site_messages
from controller.journal.sqlite.checkpoints import store_snapshot
from controller.journal.sqlite.devices import read_highs, read_marks, stored_highs, write_highs
from controller.journal.sqlite.outbox import JournalOutbox
from controller.journal.sqlite.reads import FileReadSide
from controller.journal.sqlite.restore import load_state
from controller.journal.sqlite.rows import last_row, read_rows, rows_with_ids
from controller.journal.sqlite.schema import migrate
from controller.journal.sqlite.state_check import catch_up, check_state
from controller.journal.sqlite.transaction import Transaction, roll_back, why, write_error
from controller.journal.sqlite.verify import verify

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

    from controller.events import AnyEvent
    from controller.journal.anchors import Anchor
    from controller.journal.checkpoints import Sealed
    from controller.journal.domain import Domain
    from controller.journal.port import JournalPort
    from controller.journal.row_checks import VerifyReport
    from controller.journal.state_trust import StateCheck
    from controller.outputs import SignedHead
    from controller.ports import Receipt
    from controller.provenances import Provenances
    from controller.security.controller_key import ControllerKey
    from controller.widearea.messages import SiteMessage

__all__ = ["LOOKUP_CHUNK", "PAGE_SIZE", "Journal", "connect", "payout_columns"]

LOOKUP_CHUNK: Final = 500
"""Event ids looked up per query (SQLite allows at least 999 parameters)."""
PAGE_SIZE: Final = 2048
"""Bytes per page of a journal file created from now on (SQLite's default is 4096).

Each commit writes every page it changed to the WAL, whole, and most of those pages hold one
small change: a leaf of the event-id index per event (a batch's events come from different
tables, so they land in different leaves), the table's live-state row, the journal rows. At
2 KiB a page the WAL takes about 40 % fewer bytes per event than at 4 KiB, for the same
rows (docs/journal.md). A file that exists keeps the page size it was made with: SQLite
changes it only by rebuilding the file, which the controller never does by itself.
"""


def connect(path: Path | str) -> sqlite_utils.Database:
    """Open the database with the journal's pragmas and explicit transactions.

    A new file is made first at 0640 whatever the umask (:func:`controller.files.prepare_database`);
    its ``-wal`` and ``-shm`` take the same mode.
    """
    prepare_database(Path(path))
    connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    database = sqlite_utils.Database(connection)
    database.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before WAL; a no-op on an existing file
    database.execute("PRAGMA journal_mode=WAL")
    database.execute("PRAGMA synchronous=FULL")
    database.execute("PRAGMA foreign_keys=ON")
    database.execute("PRAGMA busy_timeout=5000")
    return database


@functools.cache
def _upsert_statement(table: str, keys: tuple[str, ...], values: tuple[str, ...]) -> str:
    """The upsert of :meth:`Journal._upsert`, built once per table (fixed names only)."""
    names = ", ".join((*keys, *values))
    marks = ", ".join("?" for _ in (*keys, *values))
    updates = ", ".join(f"{name} = excluded.{name}" for name in values)
    return (
        f"INSERT INTO {table} ({names}) VALUES ({marks}) "  # noqa: S608
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates}"
    )


class Journal(FileReadSide, Generic[State]):
    """The ledger's durable home. One writer per process; see the module docstring.

    It is the SQLite backend of :class:`controller.journal.port.JournalPort`; its reads for
    reports, displays and metrics come from :class:`controller.journal.read_side.ReadSide`.
    Generic in the state of the domain it records, which it is opened with (the ledger's:
    ``controller.ledger_journal.sqlite.Journal``).
    """

    def __init__(self, path: Path | str, domain: Domain[State]) -> None:
        self.path = Path(path)
        self.domain = domain
        """What its rows are applied and replayed with, and its state read back by."""
        try:
            self.db = connect(self.path)
            migrate(self.db)
        except sqlite3.Error as error:
            reason = why(self.path, error)
            raise JournalError(f"{self.path}: cannot open the journal: {reason}") from error
        except OSError as error:  # the new file could not be made (controller.files)
            raise JournalError(
                f"{self.path}: cannot open the journal: {error.strerror or error}"
            ) from error
        self._tail = self._last_row()
        self.state = self._load()
        self._devices = self._read_devices()
        self._devices_after: tuple[Transaction[State], DeviceMarks] | None = None
        self.writer: str | None = None
        """The provenance of an append that names none (the command or service that opened it)."""
        self.live_clock: Callable[[], str] | None = None
        """The controller's clock at a live append (controller/journal/appending.py ``now``)."""

    def _load(self) -> State:
        """The materialized state, or fail closed if it cannot be read."""
        try:
            return load_state(self.db, self.domain)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
            raise JournalError(
                f"{self.path}: the materialized state cannot be read ({error}); run jackpotd verify"
            ) from error

    def _read_devices(self) -> DeviceMarks:
        """The device highs' mark and the rows after it (:mod:`..devices`)."""
        try:
            return read_marks(self.db.conn)
        except sqlite3.Error as error:
            raise JournalError(f"{self.path}: cannot read the device highs: {error}") from error

    @functools.cached_property
    def reader(self) -> sqlite_utils.Database:
        """A read-only connection of its own, for displays, metrics and reports.

        It sees what is committed, and never uses the writer's connection, which a commit may
        be using in the sequencer's commit thread at any moment.
        """
        try:
            connection = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise JournalError(f"{self.path}: cannot read the journal: {error}") from error
        connection.execute("PRAGMA busy_timeout=5000")
        return sqlite_utils.Database(connection)

    def outbox(self, sink: str) -> JournalOutbox:
        """The named sink's outbox, in this journal's file (its own connection)."""
        return JournalOutbox(self.path, sink)

    def close(self) -> None:
        """Close the database."""
        if "reader" in self.__dict__:
            self.reader.close()
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _catch_up(self) -> State:
        """The state after another writer's rows: replayed from ours, the tables checked.

        The tables that writer left are not taken on trust (docs/faults.md, "Edited state"):
        if they differ from the replay of its rows, nothing is written and the caller fails
        closed.
        """
        state, check = catch_up(self.db.conn, self.domain, self.state, self._tail, self._load())
        if not check.ok:
            shown = "; ".join(check.problems[:5])
            raise JournalError(
                f"{self.path}: another process wrote the journal, and the stored state is not "
                f"what its rows give: {shown}"
            )
        return state

    @property
    def head(self) -> tuple[int, str]:
        """The last row this journal knows: its ``seq`` and ``hash`` (0 and zeros if none)."""
        return self._tail

    @property
    def epoch(self) -> int:
        """0: one controller writes a file; it has no fence (docs/ha.md)."""
        return 0

    @property
    def took_over(self) -> None:
        """None: a file has no fence to take over."""
        return None

    @property
    def leading(self) -> bool:
        """True: a file has one writer and no fence to lose."""
        return True

    @property
    def lease_renewal_s(self) -> None:
        """None: a file has no lease to renew."""
        return None

    def renew(self) -> None:
        """Nothing: a file has no lease."""

    def _last_row(self) -> tuple[int, str]:
        return last_row(self.db.conn) or (0, GENESIS)

    def _known(self, event_ids: Sequence[str]) -> Known:
        """The receipts (``duplicate=True``) and events of those ids the journal holds."""
        known: Known = {}
        unique = list(dict.fromkeys(event_ids))
        for first in range(0, len(unique), LOOKUP_CHUNK):
            for row in rows_with_ids(self.db.conn, unique[first : first + LOOKUP_CHUNK]):
                receipt, text = known_receipt(row)
                known[receipt.event_id] = (receipt, text)
        return known

    def append(self, event: AnyEvent, *, provenance: str | None = None) -> Receipt:
        """Apply and journal one event durably (see the module docstring)."""
        return self.append_many([event], provenance=provenance)[0]

    def append_many(
        self,
        events: Sequence[AnyEvent],
        *,
        snapshot: Sealed | None = None,
        provenance: Provenances = None,
    ) -> list[Receipt]:
        """Apply and journal several events in one transaction (group commit).

        ``snapshot``: a signed checkpoint among the events, whose snapshot of the state is
        stored in the same transaction (:mod:`controller.journal.checkpoints`).
        """
        transaction = self.prepare(events, snapshot=snapshot, provenance=provenance)
        transaction.commit()
        return self.adopt(transaction)

    def prepare(
        self,
        events: Sequence[AnyEvent],
        *,
        snapshot: Sealed | None = None,
        provenance: Provenances = None,
        domain: Domain[State] | None = None,
    ) -> Transaction[State]:
        """Everything of :meth:`append_many` but the ``COMMIT``, which the caller runs next.

        The write lock is held from here until :meth:`Transaction.commit` returns, and nothing
        may use this journal's connection meanwhile. The sequencer runs the commit (the WAL
        write and its ``fsync``) beside the event loop; see :mod:`controller.runtime.sequencer`.
        """
        try:
            named = self.writer if provenance is None else provenance
            return self._prepare(events, snapshot, named, self.domain if domain is None else domain)
        except sqlite3.Error as error:
            raise write_error(self.path, error) from error

    def adopt(self, transaction: Transaction[State]) -> list[Receipt]:
        """Move the in-memory state on to a committed transaction's; return its receipts."""
        if not transaction.committed:
            raise JournalError("a transaction must be committed before its state is adopted")
        self.state, self._tail = transaction.state, transaction.tail
        if self._devices_after is not None and self._devices_after[0] is transaction:
            self._devices = self._devices_after[1]
        self._devices_after = None
        return transaction.receipts

    def _prepare(
        self,
        events: Sequence[AnyEvent],
        snapshot: Sealed | None,
        provenance: Provenances,
        domain: Domain[State],
    ) -> Transaction[State]:
        connection = self.db.conn
        connection.execute("BEGIN IMMEDIATE")
        try:
            if self._last_row() != self._tail:  # another process wrote: catch up first
                self.state = self._catch_up()
                self._tail = self._last_row()
                self._devices = read_marks(connection)
            now = self.live_clock() if self.live_clock is not None else None
            origins = each_provenance(events, provenance)
            done = append_events(
                events, self.state, self._tail, self._known, origins,
                domain=domain, screen=domain.screen, now=now,
            )  # fmt: skip
            connection.executemany(INSERT, done.rows)
            # Not every commit: see controller/journal/devices.py.
            devices, flushed = self._devices.after(
                done.devices, done.tail[0], flush=snapshot is not None
            )
            if devices.through != self._devices.through:
                write_highs(connection, flushed, devices.through)
            self._materialize(changed_rows(done.batch, done.state, domain))
            if snapshot is not None:
                store_snapshot(connection, done.receipts, snapshot)
        except BaseException:
            roll_back(connection)
            raise
        transaction = Transaction(self.path, connection, done.state, done.tail, done.receipts)
        self._devices_after = (transaction, devices)
        return transaction

    def _materialize(self, changed: Changed) -> None:
        """Write each changed row of the materialized state once, as the batch left it.

        Upserts (``INSERT ... ON CONFLICT DO UPDATE``), not ``INSERT OR REPLACE``: a replace
        deletes the row and inserts it again under a new rowid, which rewrites a page at the
        end of the table and one of its key index besides the row's own. In place, a changed
        row costs its own page only.
        """
        connection = self.db.conn
        for table, keys, values, rows in changed.writes:
            connection.executemany(_upsert_statement(table, keys, values), rows)
        connection.executemany(
            "DELETE FROM rounds WHERE table_id = ? AND round_id = ?", changed.rounds_closed
        )
        for name in changed.operators_removed:
            connection.execute("DELETE FROM operators WHERE name = ?", [name])
        for row in changed.payouts:
            columns = ", ".join(row)
            marks = ", ".join("?" for _ in row)
            statement = f"INSERT INTO payouts ({columns}) VALUES ({marks})"  # noqa: S608
            connection.execute(statement, tuple(row.values()))
        connection.executemany(
            "UPDATE payouts SET status = 'paid', verified_by = ?, verified_seq = ? "
            "WHERE payout_id = ?",
            changed.verified,
        )
        if changed.site_messages:
            connection.executemany(site_messages.INSERT, changed.site_messages)

    def site_messages(self, after: int, limit: int) -> list[SiteMessage]:
        """The outbox to central after ``site_seq`` ``after``, checked (:mod:`..site_messages`)."""
        chain = self.state.chain
        head = (0, GENESIS) if chain is None else (chain.seq, chain.head)
        return site_messages.read(self.reader.conn, str(self.path), head, after, limit)

    def device_highs(self) -> dict[tuple[str, str], int]:
        """The highest event ``seq`` journaled from each device (:mod:`..devices`)."""
        if self._last_row() != self._tail:  # another process wrote rows this one has not read
            return read_highs(self.db.conn)
        return merged(stored_highs(self.db.conn), self._devices.pending)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journal row in order, as its canonical columns (:mod:`..rows`)."""
        for row in read_rows(self.db.conn):
            yield row.values

    def check_state(self, key: ControllerKey, high_water: SignedHead | None = None) -> StateCheck:
        """The start-up check (:func:`.state_check.check_state`)."""
        return check_state(self, key, high_water)

    def verify(self, *, keys: Sequence[str] = (), anchors: Sequence[Anchor] = ()) -> VerifyReport:
        """Check the chain and replay the journal from empty (:func:`.verify.verify`)."""
        return verify(self.path, keys=keys, anchors=anchors, domain=self.domain)


if TYPE_CHECKING:  # mypy proves the SQLite journal implements the port.
    _BACKEND: type[JournalPort[Transaction[Any], Any]] = Journal
