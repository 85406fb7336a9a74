"""The sequencer's way back from failing closed: probe the journal with backoff until it writes.

While the journal cannot be written the controller fails closed (docs/architecture.md,
"Failing closed"). :func:`recover` runs beside the sequencer for the life of the service: it
waits for the sequencer to fail closed (:attr:`Recovering.probe_due`, an event, never a
poll), then journals a probe (a ``journal recovered`` fault) after each delay of the one
capped backoff (:class:`controller.backoff.Backoff`, with jitter, through
:func:`controller.backoff.retrying`), committed as a batch is, in the commit thread under the
hang bound; the first that commits reopens the tables. A journal another node has taken over
ends the process instead (:mod:`.step_down`); a failure a person must look at first (the
mystery levels' keeper refusing) is never probed away.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from typing import TYPE_CHECKING, Protocol

from controller.backoff import Backoff, retrying
from controller.events import FaultRecorded
from controller.journal import JournalError
from controller.journal.errors import FencedError
from controller.runtime.availability import recovered
from controller.runtime.step_down import FENCED

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent
    from controller.journal.port import PreparedAppend
    from controller.ledger_journal import LedgerJournal
    from controller.runtime.broadcast import Broadcast
    from controller.runtime.mystery_watch import MysteryWatch
    from controller.runtime.upkeep import Upkeep

log = logging.getLogger(__name__)


class Recovering(Protocol):
    """What the probe reads and sets of the sequencer (:class:`.sequencer.Sequencer`)."""

    failed_reason: str | None
    failed_at: str | None

    @property
    def probe_due(self) -> asyncio.Event:
        """Set when the sequencer fails closed on what a probe may end; cleared once it has."""
        ...

    @property
    def journal(self) -> LedgerJournal:
        """The journal probed."""
        ...

    @property
    def stepped_down(self) -> str | None:
        """Why the process is ending, if it is."""
        ...

    @property
    def until_restart(self) -> bool:
        """Whether only a restart may reopen the tables."""
        ...

    @property
    def writing(self) -> asyncio.Lock:
        """The write lock."""
        ...

    @property
    def mystery(self) -> MysteryWatch | None:
        """The mystery levels' watch, if any level is mystery."""
        ...

    @property
    def upkeep(self) -> Upkeep:
        """The timed duties (the lease renewed, the keeper asked)."""
        ...

    @property
    def broadcast(self) -> Broadcast:
        """Where the reopening is published."""
        ...

    @property
    def clock(self) -> Callable[[], str]:
        """The time now (ISO 8601)."""
        ...

    def prepare(self, events: Sequence[AnyEvent]) -> PreparedAppend:
        """The probe, prepared for the journal and not committed."""
        ...

    async def durable(self, transaction: PreparedAppend) -> None:
        """The probe committed in the commit thread."""
        ...

    def step_down(self, status: int, reason: str) -> None:
        """End the process (the journal was taken over)."""
        ...


class _KeeperOwedError(JournalError):
    """The probe committed, but the mystery levels' keeper still owes an answer."""


async def recover(sequencer: Recovering, backoff: Backoff | None = None) -> None:
    """While ``sequencer`` fails closed, probe the journal with backoff; reopen when it works."""
    backoff = backoff or Backoff(initial=0.25, cap=5.0)
    while True:
        await sequencer.probe_due.wait()
        await asyncio.sleep(backoff.next_delay())  # the first probe waits a delay too
        await retrying(
            functools.partial(_probe, sequencer),
            backoff,
            retry_on=JournalError,
            failed=lambda error: log.warning("journal still unavailable: %s", error),
        )


def _wanted(sequencer: Recovering) -> bool:
    """Whether a probe may still reopen the tables (closed, not for good, not for a person)."""
    return (
        sequencer.failed_reason is not None
        and sequencer.stepped_down is None
        and not sequencer.until_restart  # a person must look first (the mystery levels' keeper)
    )


async def _probe(sequencer: Recovering) -> None:
    """Journal one probe; reopen the tables if it commits. Raises JournalError to try again."""
    if not _wanted(sequencer):
        sequencer.probe_due.clear()
        return
    journal = sequencer.journal
    probe = FaultRecorded(
        f"fault-{uuid.uuid4()}", sequencer.clock(), "journal", "recovered",
        sequencer.failed_reason or "",
    )  # fmt: skip
    try:
        async with sequencer.writing:
            transaction = sequencer.prepare([probe])
            await sequencer.durable(transaction)
            journal.adopt(transaction)
            if not await _keeper_answers(sequencer):
                raise _KeeperOwedError("the mystery levels' keeper still owes an answer")
    except FencedError as error:
        sequencer.step_down(FENCED, str(error))
        sequencer.probe_due.clear()
        return
    sequencer.upkeep.renewed()
    log.warning("journal writable again: tables reopen")
    sequencer.failed_reason = None
    sequencer.failed_at = None
    sequencer.probe_due.clear()
    sequencer.broadcast.publish(recovered(journal.state, sequencer.clock(), journal.epoch))


async def _keeper_answers(sequencer: Recovering) -> bool:
    """Whether the mystery levels' keeper answered every question owed, before tables reopen.

    The last event that fed a mystery level was journaled and never asked about if the keeper
    was out of reach: it is asked now, the lock held, so that no wager is taken before the
    keeper says whether that one reached the trigger (controller/runtime/mystery_watch.py). A
    failure closes the controller again (:meth:`~.upkeep.Upkeep.mystery_owed`).
    """
    if sequencer.mystery is None:
        return True
    reason, at = sequencer.failed_reason, sequencer.failed_at
    sequencer.failed_reason = None  # mystery_owed asks only while open; the lock keeps it shut
    if not await sequencer.upkeep.mystery_owed():
        return False
    sequencer.failed_reason, sequencer.failed_at = reason, at
    return True
