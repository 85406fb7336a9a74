"""The sequencer: the one task that owns the journal, and so every meter (docs/architecture.md).

Sources hand it events (:class:`controller.ports.Intake`); it takes them in one order, journals
them in batches (group commit: everything waiting when a commit starts goes into it), answers
each source once its event is durable, and only then publishes the resulting updates to the
sinks.

**The application calls the domain; the journal only records** (docs/architecture.md, "The
layers"). The sequencer hands each batch to the journal with the ledger's step
(:data:`controller.ledger.domain.LEDGER`): the journal decides which events are new under its
write lock, the step applies each, and the journal records the event, its effects and the
new state.

**The commit runs beside the event loop.** The loop applies a batch to the ledger and writes
its rows (:meth:`controller.journal.sqlite.Journal.prepare`); then the ``COMMIT`` (the WAL write and
its ``fsync``, most of a batch's time) runs in one dedicated worker thread, and the loop moves
the ledger on once it has returned. Meanwhile the loop goes on reading, decoding and queueing
what the tables send, so the next batch holds everything that arrived during the commit: that
is what makes group commit work under load. The thread is the only one in the controller, and
it shares nothing with the loop but the SQLite connection, which nothing else touches while a
commit runs: the sequencer commits one batch at a time (:attr:`Sequencer._writing`), and
displays and metrics read through their own connection (:attr:`Journal.reader`). A commit is
never abandoned halfway: cancelled while it runs, the sequencer waits for it to end first.

If the journal cannot be written, the controller **fails closed**: every waiting and new
event is answered with :class:`ControllerUnavailableError` (so sources do not acknowledge and
devices resend), every table is shown CLOSED, and the sequencer probes the journal with
capped exponential backoff until a write succeeds again (:mod:`.recovery`).

**A batch waits a moment for company** (:mod:`.batch_queue`). Most of a commit's cost is
paid once a batch however many events it holds, and on a quiet floor events come one at a
time, so the oldest event of a batch may wait up to ``group_wait_s`` (1 ms) from its arrival
for others to join it; under load a batch waits for nothing. Waiting changes which events
share a transaction, never what is written (controller/journal/batch.py). A shutdown
(:meth:`Sequencer.close`) journals what was taken and queued in the order it came.

Between batches, and when no event comes before one falls due, it journals signed
checkpoints, signs the journal's head and renews its lease (:mod:`.upkeep`).

**Stepping down** (docs/ha.md, "The fenced sequencer"). On a journal several nodes share, the
sequencer renews its lease with every commit and, when no events come, on a timer; if the
journal says another node has taken over (:class:`FencedError`), or a ``COMMIT`` has not
returned within ``commit_hang_s``, it fails closed and ends the process
(:mod:`controller.runtime.step_down`, statuses 75 and 74). A hung ``COMMIT`` is never
cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from time import perf_counter
from typing import TYPE_CHECKING

from controller.clock import utc_now
from controller.events import DeviceEvent
from controller.journal import JournalError
from controller.journal.errors import FencedError
from controller.journal.identity import device_origin
from controller.ledger.domain import LEDGER
from controller.ports import ControllerUnavailableError, EventNotRecordedError
from controller.provenances import DAEMON
from controller.runtime.answers import Waiting, answer, consume
from controller.runtime.availability import failing_closed, started, stopping
from controller.runtime.batch_queue import BatchQueue
from controller.runtime.clock_watch import ClockWatch
from controller.runtime.commit_thread import CommitThread
from controller.runtime.device_sequences import DeviceSequences
from controller.runtime.recovery import recover
from controller.runtime.rejections import Rejections
from controller.runtime.sequencer_stats import SequencerStats
from controller.runtime.step_down import COMMIT_HUNG, FENCED, exit_process
from controller.runtime.upkeep import Upkeep

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.backoff import Backoff
    from controller.events import AnyEvent
    from controller.journal.checkpoints import Sealed
    from controller.journal.domain import Domain
    from controller.journal.port import PreparedAppend
    from controller.ledger.state import LedgerState
    from controller.ledger_journal import LedgerJournal
    from controller.ports import Receipt
    from controller.runtime.broadcast import Broadcast
    from controller.runtime.checkpointing import CheckpointSchedule
    from controller.runtime.device_sequences import Gap
    from controller.runtime.heads import HeadSchedule
    from controller.runtime.mystery_watch import MysteryWatch
    from controller.runtime.rejection_limit import RejectionLimit

log = logging.getLogger(__name__)


class Sequencer:
    """Implements :class:`controller.ports.Intake`; run :meth:`run` as one task."""

    def __init__(  # noqa: PLR0913 - the sequencer's collaborators, each but the first two optional
        self,
        journal: LedgerJournal,
        broadcast: Broadcast,
        *,
        clock: Callable[[], str] = utc_now,
        batch_max: int = 512,
        group_wait_s: float = 0.001,
        on_heartbeat: Callable[..., AnyEvent | None] | None = None,
        rejection_limit: RejectionLimit | None = None,
        commit_hang_s: float | None = None,
        halt: Callable[[int, str], object] = exit_process,
    ) -> None:
        self.journal = journal
        self.broadcast = broadcast
        self.clock = clock
        self.clock_watch = ClockWatch()
        """Consulted once per batch: a step of the wall clock that dates events is journaled.

        Replace it before :meth:`run` for other tolerances (or, in tests, other clocks).
        """
        self.batches = BatchQueue(batch_max, group_wait_s)
        """The events waiting to be journaled, and the batches taken (:mod:`.batch_queue`)."""
        self.stats = SequencerStats()
        self.failed_reason: str | None = None
        self.failed_at: str | None = None
        """When it failed closed (UTC, ISO 8601): a screen asked before the news reaches it."""
        self.until_restart = False
        """Failed closed on something a person must look at (the mystery levels' keeper): the
        journal's recovery probe does not reopen the tables; a restart does (docs/faults.md)."""
        self.probe_due = asyncio.Event()  # failed closed on what a probe may end (.recovery)
        self._on_heartbeat = on_heartbeat
        self.sequences = DeviceSequences(journal.device_highs())
        """Every device's sequence numbers, watched for lost events."""
        self.gaps: dict[str, Gap] = {}
        """Each gap journaled, by its fault's id, until committed and counted (:mod:`.answers`)."""
        self.rejections = Rejections(
            rejection_limit, self.stats, clock, self.submit, self._queue_aside
        )
        """Bad input, journaled as faults with a flood bounded (:mod:`.rejections`)."""
        self.domain: Domain[LedgerState] = LEDGER
        """What applies each event the journal records: the ledger (:mod:`.ledger.domain`)."""
        self._closing = False
        self.writing = asyncio.Lock()
        """Held while a batch is written and committed (one at a time), and by the shutdown."""
        self.committer = CommitThread(commit_hang_s, self._hung)
        """Where each ``COMMIT`` and lease renewal runs (:mod:`.commit_thread`)."""
        self.on_commit: list[Callable[[Sequence[Receipt]], None]] = []
        """Called with the receipts of each commit, before the updates are published."""
        self.checkpoints: CheckpointSchedule | None = None
        """When to journal a signed checkpoint (:mod:`.checkpointing`); None: never."""
        self.heads: HeadSchedule | None = None
        """When to sign the journal's head, the high-water mark (:mod:`.heads`); None: never."""
        self.mystery: MysteryWatch | None = None
        """The journal's mystery levels' draws and questions (:mod:`.mystery_watch`); None:
        no mystery level is configured, and batches are never cut for one."""
        self.upkeep = Upkeep(self)
        """Checkpoints, heads and the lease's renewal, when due (:mod:`.upkeep`)."""
        self.halt = halt
        """Ends the process with a status (:func:`.step_down.exit_process`); tests record it."""
        self.stepped_down: str | None = None
        """Why the sequencer stepped down (fenced, or a commit hung); it never writes again."""

    @property
    def commit_hang_s(self) -> float | None:
        """How long a ``COMMIT`` may take before the process ends (None: no bound)."""
        return self.committer.hang_s

    @property
    def gathering(self) -> bool:
        """Whether a batch is waiting for company (:meth:`.BatchQueue.gather`)."""
        return self.batches.gathering

    @property
    def available(self) -> bool:
        """Whether events are being journaled (False while failing closed)."""
        return self.failed_reason is None and not self._closing

    async def submit(self, event: AnyEvent, *, provenance: str | None = None) -> Receipt:
        """Journal an event once; return when it is durable (see controller.ports.Intake)."""
        return await self.enqueue(event, provenance=provenance)

    def enqueue(self, event: AnyEvent, *, provenance: str | None = None) -> asyncio.Future[Receipt]:
        """Queue an event to be journaled once; the future is its receipt (see Intake)."""
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        if not self.available:
            reason = self.failed_reason or "the controller is stopping"
            future.set_exception(ControllerUnavailableError(reason))
            return future
        if isinstance(event, DeviceEvent):
            self._revive(event.table_id, event.device)
        origin = device_origin(event)
        if origin is not None:
            self.sequences.seen(*origin)
        self.batches.put(Waiting(event, future, perf_counter(), provenance or DAEMON))
        return future

    def _queue_aside(self, event: AnyEvent) -> None:
        """Queue an event nobody waits for (a reopening, a gap, a count of left-out input)."""
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        future.add_done_callback(consume)
        self.batches.put(Waiting(event, future, perf_counter()))

    def _revive(self, table_id: str, device: str) -> None:
        """Queue the reopening of a table closed for silence ahead of what it just sent."""
        if self._on_heartbeat is None:
            return
        live = self.journal.state.table_states.get(table_id)
        closed = live is not None and not live.online  # by a status row, or for silence
        head = self.journal.head[0]
        revival = self._on_heartbeat(
            table_id, device, revive=self.available, closed=closed, head=head
        )
        if revival is not None:
            self._queue_aside(revival)

    def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """A device is alive; the liveness monitor is told (the heartbeat is never journaled).

        Failing closed, it is still noted, so that tables heard during the outage are not
        closed for silence the moment the journal is back. Its ``last`` (the number of the
        last event the device sent) finds events that never arrived; each gap found is
        journaled once (:mod:`controller.runtime.device_sequences`).
        """
        self._revive(table_id, device)
        if not self.available:
            return  # the gaps are found again at the next heartbeat
        for gap in self.sequences.heartbeat(table_id, device, last):
            fault = gap.fault(self.clock())
            self.gaps[fault.event_id] = gap
            log.error("ALARM %s", fault.detail)
            self._queue_aside(fault)

    async def reject(self, source: str, reason: str, detail: str = "") -> None:
        """Bad input: counted, logged and journaled as a fault (:mod:`.rejections`)."""
        await self.rejections.reject(source, reason, detail)

    async def run(self) -> None:
        """Journal events in arrival order until cancelled or closed."""
        journal = self.journal
        self.broadcast.publish(started(journal.state, self.clock(), journal.head[0], journal.epoch))
        if self.mystery is not None:  # a level's draw before its first wager (.mystery_watch)
            async with self.writing:
                await self.upkeep.mystery_owed()
        batches = self.batches
        while True:
            wait = None if self.failed_reason is not None else self.upkeep.seconds_left()
            batch = await batches.next_batch(wait)
            if batch:
                await batches.gather(batch, wait=self.failed_reason is None)
                self._cut_at_mystery(batch)
            async with self.writing:
                if self._closing:
                    return  # the shutdown journaled what this batch held (close)
                batches.committing()
                if self.failed_reason is None:
                    if batch:
                        self._watch_clock(batch)
                        await self._commit(batch)
                    await self.upkeep.step()
                else:
                    self._refuse(batch)

    def _cut_at_mystery(self, batch: list[Waiting]) -> bool:
        """End the batch at its first event that feeds a mystery level (:mod:`.mystery_watch`).

        The keeper is asked once that event is committed, before the next one is applied; the
        rest of the batch waits, in order, for the next. Whether the batch was cut.
        """
        watch = self.mystery
        if watch is None:
            return False
        state = self.journal.state
        for index, waiting in enumerate(batch[:-1]):
            if watch.feeds(state, waiting.event):
                self.batches.hold(batch, index)
                return True
        return False

    async def catch_up(self) -> bool:
        """Take in the rows other processes appended; whether the journal is still writable.

        Rows another process appended (an operator's action at the command line) are in the
        head only after a transaction: an empty one catches up, so that the checkpoint of a
        clean stop covers them (controller/runtime/checkpointing.py).
        """
        await self._commit([])
        return self.failed_reason is None

    async def commit_own(self, event: AnyEvent, *, snapshot: Sealed | None = None) -> None:
        """Journal an event of the controller's own in a batch of its own (the lock held)."""
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        future.add_done_callback(consume)
        await self._commit([Waiting(event, future, perf_counter())], snapshot=snapshot)

    def prepare(
        self,
        events: Sequence[AnyEvent],
        *,
        provenance: Sequence[str] | str = DAEMON,
        snapshot: Sealed | None = None,
    ) -> PreparedAppend:
        """Hand ``events`` to the journal with the domain that applies them, not committed."""
        prepared: PreparedAppend = self.journal.prepare(
            events, snapshot=snapshot, provenance=provenance, domain=self.domain
        )
        return prepared

    def _watch_clock(self, batch: list[Waiting]) -> None:
        """Journal a step of the wall clock since the last batch, ahead of this batch.

        Consulted only while the journal is writable, so that a step during an outage is
        journaled once it is back (docs/faults.md, "Clock steps").
        """
        step = self.clock_watch.check()
        if step is None:
            return
        fault = step.fault(f"fault-{uuid.uuid4()}", self.clock())
        log.error("ALARM clock step: %s", fault.detail)
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        future.add_done_callback(consume)
        batch.insert(0, Waiting(fault, future, perf_counter()))

    def _refuse(self, batch: list[Waiting]) -> None:
        for waiting in batch:
            if not waiting.future.done():
                waiting.future.set_exception(ControllerUnavailableError(self.failed_reason or ""))

    async def _commit(self, batch: list[Waiting], snapshot: Sealed | None = None) -> None:
        started = perf_counter()
        try:
            events = [waiting.event for waiting in batch]
            provenance = [waiting.provenance for waiting in batch]
            transaction = self.prepare(events, snapshot=snapshot, provenance=provenance)
            await self.durable(transaction)
        except FencedError as error:
            self.step_down(FENCED, str(error))
            self._refuse(batch)
            return
        except JournalError as error:
            if self.stepped_down is None:
                self.fail_closed(str(error))
            self._refuse(batch)
            return
        except Exception as error:
            # Not the journal failing (that is JournalError) but something an event found in
            # the controller. Nothing was written. Commit the events one by one, so that only
            # the one that fails is left unrecorded: its source counts it and, if it keeps
            # failing, parks it (docs/faults.md, "Poison messages"). The rest go on.
            if len(batch) > 1:
                for waiting in batch:
                    await self._commit([waiting])
                return
            self.stats.internal_errors += 1
            log.exception("cannot record %s", batch[0].event.event_id)
            if not batch[0].future.done():
                reason = f"{batch[0].event.event_id}: {type(error).__name__}: {error}"
                batch[0].future.set_exception(EventNotRecordedError(reason))
            return
        self.upkeep.renewed()  # the commit renewed the lease (if the journal has one)
        answer(self, batch, self.journal.adopt(transaction), started)

    def _hung(self) -> None:
        """The commit thread's bound has passed: step down, leaving the ``COMMIT`` to run."""
        self.step_down(
            COMMIT_HUNG,
            f"{self.journal.path}: a COMMIT has not returned in {self.committer.hang_s:g} s "
            "(is a synchronous standby not answering?); it is never cancelled: this process "
            "ends, nothing of it acknowledged, and recovers from the journal when it starts "
            "again",
        )

    async def durable(self, transaction: PreparedAppend) -> None:
        """Run the ``COMMIT`` in the commit thread; return (or raise) once it has ended."""
        commit = self.committer.start(transaction.commit)
        try:
            await self.committer.finish(commit)
        except asyncio.CancelledError:
            # The COMMIT has ended (finish waits for it): keep what it made durable, and only
            # then stop. Its sources are stopping too; they will be answered on resend.
            if not commit.cancelled() and commit.exception() is None:
                self.journal.adopt(transaction)
            raise
        if self.stepped_down is not None:  # it hung, and the halt returned (tests only)
            raise JournalError(f"stepped down while committing: {self.stepped_down}")

    def step_down(self, status: int, reason: str) -> None:
        """Fail closed for good, and end the process with ``status`` (:mod:`.step_down`)."""
        if self.stepped_down is not None:
            return
        self.stepped_down = reason
        if self.failed_reason is None:
            self.fail_closed(reason)
        self.failed_reason = reason
        self.halt(status, reason)

    def fail_closed(self, reason: str, *, until_restart: bool = False) -> None:
        """Fail closed: refuse every event and show every table offline (the module docstring).

        ``until_restart``: not for the journal's probe to end (see :attr:`until_restart`).
        """
        self.stats.journal_failures += 1
        self.until_restart = self.until_restart or until_restart
        self.failed_reason = reason
        self.failed_at = self.clock()
        if self.stepped_down is None and not self.until_restart:
            self.probe_due.set()
        log.critical("journal unavailable, failing closed: %s", reason)
        journal = self.journal
        self.broadcast.publish(failing_closed(journal.state, reason, self.failed_at, journal.epoch))

    async def recover(self, backoff: Backoff | None = None) -> None:
        """While failing closed, probe the journal with backoff; reopen the tables when it works."""
        await recover(self, backoff)

    async def close(self) -> None:
        """Stop taking events, journal those taken and queued, and say the controller is offline.

        In the order they came (:meth:`.BatchQueue.drain`), in batches cut at each event that
        feeds a mystery level as :meth:`run` cuts them, the keeper asked after each.
        """
        self._closing = True
        self.rejections.flush(everything=True)
        self.batches.stop_gathering()
        async with self.writing:
            waiting = self.batches.drain()
            while waiting:
                size = self.batches.batch_max
                batch, waiting = waiting[:size], waiting[size:]
                if self._cut_at_mystery(batch):
                    waiting[:0] = self.batches.drain()  # the rest of the batch, held: next
                if self.failed_reason is None:
                    await self._commit(batch)
                    await self.upkeep.mystery_owed()
                else:
                    self._refuse(batch)
            await self.upkeep.step(closing=True)
        self.broadcast.publish(stopping(self.clock(), self.journal.epoch))
