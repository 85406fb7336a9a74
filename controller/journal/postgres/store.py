"""The PostgreSQL backend of :class:`controller.journal.port.JournalPort`.

It appends as :class:`controller.journal.sqlite.store.Journal` does (the work is
:mod:`controller.journal.appending`'s): :meth:`PostgresJournal.prepare` takes the journal's
write lock (``LOCK TABLE journal IN EXCLUSIVE MODE``: readers go on reading, another writer
waits), catches up if another process wrote since, applies the batch and writes its rows and
the changed materialized state in one transaction; :meth:`PostgresTransaction.commit` runs the
``COMMIT`` alone, which may run in the sequencer's commit thread (docs/architecture.md, "The
commit thread": the connection is used by nobody else until it returns); :meth:`adopt` moves
the in-memory state on. A ``COMMIT`` whose connection dies is in doubt: the rows may or may
not be in. Either way nothing is acknowledged, the sequencer fails closed, and the next
prepare opens a new connection, finds the rows that did commit as another writer's, and
replays them from its own state (docs/ha.md).

Reads (displays, metrics, reports) run on a second connection in autocommit mode, which sees
what has committed.

Opened with a :class:`~controller.journal.postgres.fence.Fence` (the service does), the journal
takes the sequencer's fence over at open, and every group commit holds it in its own
transaction (:mod:`controller.journal.postgres.fence`): a node another has taken over from
writes nothing and gets :class:`FencedError`. Opened without one (the commands, the contract
tests) it writes as another writer the sequencer catches up with, and its epoch is 0.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any, Generic, Self

import msgspec
import psycopg

from controller.clock import utc_now
from controller.journal.appending import Known, append_events, changed_rows, known_receipt
from controller.journal.chain import GENESIS
from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.postgres import checks, fence, reads, site_messages
from controller.journal.postgres.connection import connect, reason, write_error
from controller.journal.postgres.fence import Held, take_over, takeover_event
from controller.journal.postgres.materialize import DEVICES, materialize, store_snapshot
from controller.journal.postgres.outbox import PostgresOutbox
from controller.journal.postgres.reads import PostgresReadSide
from controller.journal.postgres.rows import INSERT, last_row, rows_with_ids, stored
from controller.journal.postgres.schema import migrate
from controller.journal.postgres.transaction import PostgresTransaction, roll_back
from controller.journal.provenance import each_provenance

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent, SequencerTookOver
    from controller.journal.anchors import Anchor
    from controller.journal.checkpoints import Sealed
    from controller.journal.domain import Domain
    from controller.journal.location import DatabaseUrl
    from controller.journal.port import JournalPort
    from controller.journal.postgres.connection import Connection
    from controller.journal.postgres.fence import Fence
    from controller.journal.row_checks import VerifyReport
    from controller.journal.state_trust import StateCheck
    from controller.outputs import SignedHead
    from controller.ports import Receipt
    from controller.provenances import Provenances
    from controller.security.controller_key import ControllerKey
    from controller.widearea.messages import SiteMessage


class PostgresJournal(PostgresReadSide, Generic[State]):
    """The ledger's durable home in a PostgreSQL database; see the module docstring."""

    def __init__(
        self,
        url: DatabaseUrl,
        *,
        fence: Fence | None = None,
        standby: bool = False,
        clock: Callable[[], float] = time.monotonic,
        domain: Domain[State],
    ) -> None:
        """Open ``url``; with a ``fence``, take it over now unless ``standby`` (:meth:`take`).

        ``domain``: what its rows are applied and replayed with, its state read back by.
        """
        self.url = url
        self.domain = domain
        self.fence = fence
        self._epoch = 0
        self._clock = clock
        self._lease_from: float | None = None
        self._took: SequencerTookOver | None = None
        self.writer: str | None = None
        """The provenance of an append that names none (the command or service that opened it)."""
        self.live_clock: Callable[[], str] | None = None
        """The controller's clock at a live append (controller/journal/appending.py ``now``)."""
        self.db = connect(url)
        try:
            migrate(self.db, str(url))
            if fence is not None and not standby:
                started = clock()
                taken = take_over(self.db, fence, str(url))
                self._epoch, self._lease_from = taken.epoch, started
                self._took = takeover_event(taken, fence.node, utc_now())
            # The head and the state as of one moment: a leader may commit between the two.
            self.db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._tail = last_row(self.db)
            self.state = self._load()
            self.db.rollback()  # the reads' transaction
        except psycopg.Error as error:
            self.db.close()
            raise JournalError(f"{url}: cannot open the journal: {reason(error)}") from error
        except BaseException:
            self.db.close()
            raise
        self._reader: Connection | None = None

    @property
    def path(self) -> DatabaseUrl:
        """What names the journal in messages: its URL (the password hidden when shown)."""
        return self.url

    @property
    def head(self) -> tuple[int, str]:
        """The last row this journal knows: its ``seq`` and ``hash`` (0 and zeros if none)."""
        return self._tail

    @property
    def epoch(self) -> int:
        """The epoch of the fence this journal took over at open; 0 if opened without one."""
        return self._epoch

    @property
    def took_over(self) -> SequencerTookOver | None:
        """This process's takeover of the fence, to journal; None before or without one."""
        return self._took

    @property
    def lease_renewal_s(self) -> float | None:
        """A third of the lease: renewed thrice a lease; None without a fence."""
        return None if self.fence is None else self.fence.lease_s / 3

    @property
    def leading(self) -> bool:
        """True without a fence; with one, while the last renewed lease has not run out.

        Counted by this process's monotonic clock from before the renewal was sent, so the
        lease the database gave lasts at least as long (see :attr:`JournalPort.leading`).
        """
        if self.fence is None:
            return True
        held = self._lease_from
        return held is not None and self._clock() < held + self.fence.lease_s

    def renew(self) -> None:
        """Renew the sequencer's lease (:func:`.fence.renew`); nothing without a fence.

        It commits on the writer's connection, so it runs where commits do (the sequencer's
        commit thread), never while a transaction is prepared.
        """
        if self.fence is None:
            return
        self._connected()
        started = self._clock()
        fence.renew(self.db, self.fence, self._epoch, str(self.url))
        self._lease_from = started

    def take(self) -> int | Held:
        """A standby's one try at the fence: the new epoch (and caught up), or who holds it.

        Opened with ``standby=True`` the journal holds no epoch, and a write finds the fence
        another's (:class:`FencedError`, nothing written). Taken, it first replays what the
        last holder committed since :meth:`follow` last did, so that what the new sequencer
        builds on is the whole journal.
        """
        if self.fence is None:
            raise JournalError(f"{self.url}: opened without a fence: there is none to take")
        try:
            self._connected()
            taken = fence.holder(self.db)
            roll_back(self.db)  # the read's transaction
            if taken.left_s > 0 and taken.holder != self.fence.node:
                return taken  # live: not even a try, which would lock the holder's row
            started = self._clock()
            outcome = fence.attempt(self.db, self.fence, str(self.url))
            if isinstance(outcome, Held):
                return outcome
            self._epoch, self._lease_from = outcome.epoch, started
            self._took = takeover_event(outcome, self.fence.node, utc_now())
            self.follow()
        except psycopg.Error as error:
            roll_back(self.db)
            raise JournalError(f"{self.url}: cannot take the fence: {reason(error)}") from error
        return self._epoch

    def follow(self) -> int:
        """Replay what another node committed since this journal's head; the rows replayed.

        In one ``REPEATABLE READ`` transaction, so that the rows and the stored state it is
        checked against are the same moment's (:meth:`_catch_up`).
        """
        try:
            self._connected()
            self.db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            tail = last_row(self.db)
            if tail == self._tail:
                return 0
            before = self._tail[0]
            self.state, self._tail = self._catch_up(), tail
            return tail[0] - before
        except psycopg.Error as error:
            raise JournalError(f"{self.url}: cannot follow the journal: {reason(error)}") from error
        finally:
            roll_back(self.db)

    def _connected(self) -> None:
        """The writer's connection, opened again after a failure."""
        if self.db.closed or self.db.broken:
            self.db = connect(self.url)

    def _load(self) -> State:
        """The materialized state, or fail closed if it cannot be read."""
        try:
            return reads.load_state(self.db, self.domain)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
            raise JournalError(
                f"{self.url}: the materialized state cannot be read ({error}); run jackpotd verify"
            ) from error

    @property
    def reader(self) -> Connection:
        """The reads' own connection, in autocommit mode: it sees what has committed."""
        if self._reader is None or self._reader.closed:
            self._reader = connect(self.url, autocommit=True)
        return self._reader

    def close(self) -> None:
        """Close both connections; at a clean stop the lease ends now (:func:`.fence.release`)."""
        if self._reader is not None:
            self._reader.close()
        if self.fence is not None and not (self.db.closed or self.db.broken):
            with contextlib.suppress(psycopg.Error):
                roll_back(self.db)
                fence.release(self.db, self.fence, self._epoch)
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- appending ---------------------------------------------------------------------------

    def append(self, event: AnyEvent, *, provenance: str | None = None) -> Receipt:
        """Apply and journal one event durably."""
        return self.append_many([event], provenance=provenance)[0]

    def append_many(
        self,
        events: Sequence[AnyEvent],
        *,
        snapshot: Sealed | None = None,
        provenance: Provenances = None,
    ) -> list[Receipt]:
        """Apply and journal several events in one transaction (group commit)."""
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
    ) -> PostgresTransaction[State]:
        """Everything of :meth:`append_many` but the ``COMMIT``, which the caller runs next."""
        self._connected()  # after a failure: the next write on a new connection
        try:
            named = self.writer if provenance is None else provenance
            return self._prepare(events, snapshot, named, self.domain if domain is None else domain)
        except psycopg.Error as error:
            raise write_error(self.url, error) from error

    def adopt(self, transaction: PostgresTransaction[State]) -> list[Receipt]:
        """Move the in-memory state on to a committed transaction's; return its receipts."""
        if not transaction.committed:
            raise JournalError("a transaction must be committed before its state is adopted")
        self.state, self._tail = transaction.state, transaction.tail
        if transaction.lease_from is not None:
            self._lease_from = transaction.lease_from
        return transaction.receipts

    def _prepare(
        self,
        events: Sequence[AnyEvent],
        snapshot: Sealed | None,
        provenance: Provenances,
        domain: Domain[State],
    ) -> PostgresTransaction[State]:
        connection = self.db
        held: float | None = None
        try:
            if self.fence is not None:  # first: fenced, this transaction writes nothing
                held = self._clock()
                fence.hold(connection, self.fence, self._epoch, str(self.url))
            connection.execute("LOCK TABLE journal IN EXCLUSIVE MODE")
            if last_row(connection) != self._tail:  # another process wrote: catch up first
                self.state = self._catch_up()
                self._tail = last_row(connection)
            now = self.live_clock() if self.live_clock is not None else None
            origins = each_provenance(events, provenance)
            done = append_events(
                events, self.state, self._tail, self._known, origins,
                domain=domain, screen=domain.screen, now=now,
            )  # fmt: skip
            with connection.cursor() as cursor:
                cursor.executemany(INSERT, [stored(row) for row in done.rows])
                highs = done.devices.highs
                cursor.executemany(DEVICES, [(*key, high) for key, high in highs.items()])
            materialize(connection, changed_rows(done.batch, done.state, domain))
            if snapshot is not None:
                store_snapshot(connection, done.receipts, snapshot)
            if self.fence is not None:
                fence.arm(connection, self.fence)
        except BaseException:
            roll_back(connection)
            raise
        return PostgresTransaction(
            self.url, connection, done.state, done.tail, done.receipts, lease_from=held
        )

    def _catch_up(self) -> State:
        """The state after another writer's rows: replayed from ours, the tables checked."""
        state, check = checks.catch_up(self.db, self.domain, self.state, self._tail, self._load())
        if not check.ok:
            shown = "; ".join(check.problems[:5])
            raise JournalError(
                f"{self.url}: another process wrote the journal, and the stored state is not "
                f"what its rows give: {shown}"
            )
        return state

    def _known(self, event_ids: Sequence[str]) -> Known:
        """The receipts (``duplicate=True``) and events of those ids the journal holds."""
        known: Known = {}
        for row in rows_with_ids(self.db, list(dict.fromkeys(event_ids))):
            receipt, text = known_receipt(row)
            known[receipt.event_id] = (receipt, text)
        return known

    def site_messages(self, after: int, limit: int) -> list[SiteMessage]:
        """The outbox to central after ``site_seq`` ``after``, checked (:mod:`.site_messages`)."""
        chain = self.state.chain
        head = (0, GENESIS) if chain is None else (chain.seq, chain.head)
        return site_messages.read(self.reader, str(self.url), head, after, limit)

    def outbox(self, sink: str) -> PostgresOutbox:
        """The named sink's outbox, in this journal's database (its own connection)."""
        return PostgresOutbox(self.url, sink)

    # -- checks ------------------------------------------------------------------------------

    def verify(self, *, keys: Sequence[str] = (), anchors: Sequence[Anchor] = ()) -> VerifyReport:
        """Check the chain and replay the journal from empty (:func:`.checks.verify`)."""
        return checks.verify(self.url, keys=keys, anchors=anchors, domain=self.domain)

    def check_state(self, key: ControllerKey, high_water: SignedHead | None = None) -> StateCheck:
        """The start-up check (:func:`.checks.check_state`), as of one moment.

        In one ``REPEATABLE READ`` transaction, the head and the stored state read again in it:
        another node (a standby checks while the leader writes) may have committed since open.
        """
        try:
            self._connected()
            self.db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._tail, self.state = last_row(self.db), self._load()
            return checks.check_state(self.db, self.domain, self.state, key, high_water)
        except psycopg.Error as error:
            raise JournalError(f"{self.url}: cannot check the journal: {reason(error)}") from error
        finally:
            roll_back(self.db)  # its read transaction


if TYPE_CHECKING:  # mypy proves the PostgreSQL journal implements the port.
    _BACKEND: type[JournalPort[PostgresTransaction[Any], Any]] = PostgresJournal
