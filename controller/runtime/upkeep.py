"""What the sequencer does between batches when it falls due: a checkpoint, a head, the lease.

After each batch, and when no event arrives before one falls due, the sequencer asks
:class:`Upkeep` to journal a signed checkpoint (:mod:`.checkpointing`), to sign the journal's
head, the high-water mark (:mod:`.heads`, through :mod:`.head_signing`), and to renew the
sequencer's lease on a journal several nodes share (docs/ha.md, "The fenced sequencer"). It
runs under the sequencer's write lock, and only while the journal is writable. A signer that
says the journal went back under it ends the process (:mod:`.step_down`); a signer out of
reach is tried again at the next interval; a lease another node has taken ends it too.
"""

from __future__ import annotations

import logging
from time import monotonic
from typing import TYPE_CHECKING, Protocol

from controller.errors import JackpotError
from controller.journal import JournalError
from controller.journal.errors import FencedError
from controller.journal.high_water import HighWaterError
from controller.runtime.head_signing import HeadSigning
from controller.runtime.remote_signer import off_the_loop
from controller.runtime.step_down import FENCED, WENT_BACK

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.events import AnyEvent
    from controller.journal.checkpoints import Sealed
    from controller.ledger_journal import LedgerJournal
    from controller.runtime.broadcast import Broadcast
    from controller.runtime.checkpointing import CheckpointSchedule
    from controller.runtime.commit_thread import CommitThread
    from controller.runtime.heads import HeadSchedule
    from controller.runtime.mystery_watch import MysteryWatch

log = logging.getLogger(__name__)


class Kept(Protocol):
    """What the timed duties read of the sequencer (:class:`.sequencer.Sequencer`)."""

    @property
    def journal(self) -> LedgerJournal:
        """The journal checkpointed, signed and leased."""
        ...

    @property
    def checkpoints(self) -> CheckpointSchedule | None:
        """The checkpoint schedule, if checkpoints are signed."""
        ...

    @property
    def heads(self) -> HeadSchedule | None:
        """The signed heads' schedule, if heads are signed."""
        ...

    @property
    def mystery(self) -> MysteryWatch | None:
        """The mystery levels' watch, if any level is mystery."""
        ...

    @property
    def committer(self) -> CommitThread:
        """The commit thread (the lease renewed in it)."""
        ...

    @property
    def broadcast(self) -> Broadcast:
        """Where a failure to close is published."""
        ...

    @property
    def clock(self) -> Callable[[], str]:
        """The time now (ISO 8601)."""
        ...

    @property
    def failed_reason(self) -> str | None:
        """Why the tables are closed, if they are."""
        ...

    @property
    def stepped_down(self) -> str | None:
        """Why the process is ending, if it is."""
        ...

    async def catch_up(self) -> bool:
        """Take in rows other processes appended; whether the journal is still writable."""
        ...

    async def commit_own(self, event: AnyEvent, *, snapshot: Sealed | None = None) -> None:
        """Journal an event of the controller's own in a batch of its own."""
        ...

    def fail_closed(self, reason: str, *, until_restart: bool = False) -> None:
        """Refuse every event and show every table offline."""
        ...

    def step_down(self, status: int, reason: str) -> None:
        """End the process."""
        ...


class Upkeep:
    """The sequencer's timed duties (see the module docstring); the schedules are its own.

    It reads :attr:`Kept.checkpoints` and :attr:`Kept.heads` each time, so that
    either may be set or replaced before :meth:`controller.runtime.sequencer.Sequencer.run`.
    """

    def __init__(self, sequencer: Kept) -> None:
        self.sequencer = sequencer
        self._head_signing: HeadSigning | None = None
        self._renewed = monotonic()

    def seconds_left(self) -> float | None:
        """Until the first duty falls due: a checkpoint, a head, the lease; None: none will."""
        sequencer = self.sequencer
        head = sequencer.journal.head[0]
        schedule, heads = sequencer.checkpoints, sequencer.heads
        waits = [
            schedule.seconds_left(head) if schedule else None,
            heads.seconds_left(head) if heads else None,
            self._renewal_left(),
        ]
        known = [wait for wait in waits if wait is not None]
        return min(known) if known else None

    def renewed(self) -> None:
        """A commit renewed the lease (if the journal has one)."""
        self._renewed = monotonic()

    async def step(self, *, closing: bool = False) -> None:
        """Do what is due: when closing, a last checkpoint and head, and no renewal."""
        await self.mystery_owed()
        await self._checkpoint_if_due(closing=closing)
        await self._head_if_due(closing=closing)
        if not closing:
            await self._renew_if_due()

    async def mystery_owed(self) -> bool:
        """Journal every mystery draw and reveal owed (:mod:`.mystery_watch`), one by one.

        A keeper out of reach or showing someone else asked it fails the controller closed:
        the level's trigger must not be played on without its keeper (docs/faults.md). Whether
        the controller is still open after it.
        """
        sequencer = self.sequencer
        watch = sequencer.mystery
        while watch is not None and sequencer.failed_reason is None:
            try:
                event = await watch.owed(sequencer.journal.state)
            except (OSError, JackpotError) as error:
                # A keeper that refused or raised the alarm is a person's to look at: not for
                # the journal's probe to reopen. One out of reach is asked again by the probe
                # before any table's event is taken (controller/runtime/recovery.py).
                sequencer.fail_closed(
                    f"the mystery levels' keeper: {error}",
                    until_restart=not isinstance(error, OSError),
                )
                return False
            if event is None:
                return True
            await sequencer.commit_own(event)
        return watch is None

    async def _checkpoint_if_due(self, *, closing: bool) -> None:
        """Journal a signed checkpoint of the head if one is due (always when closing)."""
        sequencer = self.sequencer
        schedule = sequencer.checkpoints
        if schedule is None or sequencer.failed_reason is not None:
            return
        if closing and not await sequencer.catch_up():
            return
        head = sequencer.journal.head[0]
        if not (schedule.due(head) or (closing and schedule.rows_behind(head) > 0)):
            return
        try:
            at = sequencer.clock()
            sealed = await off_the_loop(schedule.key, lambda: schedule.seal(sequencer.journal, at))
        except HighWaterError as error:  # the signer refused: the journal went back under it
            sequencer.step_down(WENT_BACK, str(error))
            return
        except OSError as error:  # the signer unreachable: tried again at the next interval
            log.error("cannot sign a checkpoint: %s", error)  # noqa: TRY400 - the reason is it
            return
        await sequencer.commit_own(sealed.event, snapshot=sealed)

    async def _head_if_due(self, *, closing: bool) -> None:
        """Sign the journal's head if one is due (:meth:`.heads.HeadSchedule.sign_if_due`).

        A journal that went back under the running controller ends the process, signing
        nothing (:mod:`.step_down`). Through the signer process the head is signed in the
        background, so that a stalled signer never holds up the journal (:mod:`.head_signing`).
        """
        sequencer = self.sequencer
        heads = sequencer.heads
        if heads is None or sequencer.failed_reason is not None:
            return
        if self._head_signing is None or self._head_signing.heads is not heads:
            self._head_signing = HeadSigning(
                heads, sequencer.journal, sequencer.clock,
                publish=lambda update: sequencer.broadcast.publish([update]),
                went_back=lambda reason: sequencer.step_down(WENT_BACK, reason),
                may_sign=lambda: sequencer.failed_reason is None,
            )  # fmt: skip
        await self._head_signing.step(closing=closing)

    def _renewal_left(self) -> float | None:
        """Seconds until the lease must be renewed; None without a lease, or failing closed."""
        every = self.sequencer.journal.lease_renewal_s
        if every is None or self.sequencer.failed_reason is not None:
            return None
        return max(0.0, self._renewed + every - monotonic())

    async def _renew_if_due(self) -> None:
        """Renew the lease in the commit thread if no commit has for a while (an asyncio timer)."""
        if self._renewal_left() != 0.0:
            return
        sequencer = self.sequencer
        committer = sequencer.committer
        try:
            await committer.finish(committer.start(sequencer.journal.renew))
        except FencedError as error:
            sequencer.step_down(FENCED, str(error))
            return
        except JournalError as error:
            if sequencer.stepped_down is None:
                sequencer.fail_closed(str(error))
            return
        self.renewed()
