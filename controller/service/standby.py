"""A warm standby: a node that is up, checked and following, waiting for the sequencer's lease.

On a shared PostgreSQL journal one node sequences (docs/ha.md, "The fenced sequencer"). The
others do not exit and start cold again and again, which costs a failover the restart delay,
the interpreter's start and the start-up check's replay. Each instead:

1. opens the journal without taking the fence (nothing it does writes), retrying with capped
   backoff while the database cannot be reached;
2. runs the start-up check of the stored state against the journal (the replay from its own
   last checkpoint: the expensive part) and hashes its software for the self-check;
3. tells systemd it is ready, feeds the watchdog, and answers ``GET /leader`` with 503 naming
   the holder (controller/web/standby.py), so HAProxy sends nobody here;
4. waits in the event loop for the end of the holder's lease, read from the fence's row by the
   database's clock. Each time it wakes it first replays what the leader committed meanwhile
   (:meth:`PostgresJournal.follow`), so that a takeover has at most a lease's rows left to
   replay. A holder that renewed is waited for again (reading the row takes no lock); once the
   lease has run out the node tries the fence, and the one that gets it (the epoch
   incremented) leaves the standby with the journal it has followed, on which the service
   builds its sequencer, sources and sinks (controller/service/wiring.py).

A standby whose start-up check failed follows nothing: should it take the fence, the service
journals the check's fault and refuses to start, as a cold start does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

from controller.backoff import Backoff, retrying
from controller.journal.errors import JournalError
from controller.journal.postgres.fence import MARGIN_S, Fence, Held
from controller.ledger_journal import open_standby
from controller.security.manifest import current
from controller.web.display import serve_display
from controller.web.limits import WebLimits
from controller.web.standby import StandbyPage, Standing

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from controller.config.load import Config
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres import PostgresJournal
    from controller.journal.state_trust import StateCheck
    from controller.ledger.state import LedgerState
    from controller.runtime.systemd import Notifier
    from controller.security.controller_key import ControllerKey
    from controller.security.manifest import Manifest

log = logging.getLogger(__name__)

_T = TypeVar("_T")

RETRY_CAP_S: Final = 5.0
"""After the database could not be reached: soon again, then no more often than every 5 s."""


@dataclass(frozen=True, slots=True)
class Promoted:
    """What a standby hands the service once it holds the fence."""

    journal: PostgresJournal[LedgerState]
    check: StateCheck
    """The start-up check, run while standing by (and kept true since by following)."""
    seen: Manifest | None
    """The software as hashed at start, for the self-check; None if not asked for."""


class Standby:
    """One node standing by: see the module docstring."""

    def __init__(
        self,
        config: Config,
        key: ControllerKey,
        stop: asyncio.Event,
        notifier: Notifier,
        *,
        hash_software: bool = True,
    ) -> None:
        """``key`` checks the checkpoints; ``hash_software`` for the self-check at takeover."""
        self.config = config
        self.key = key
        self.stop = stop
        self.notifier = notifier
        self.hash_software = hash_software
        settings = config.controller
        self.fence = Fence(settings.node, settings.lease_s)
        self.standing = Standing(settings.node, settings.controller_id)
        self.backoff = Backoff(initial=0.2, cap=RETRY_CAP_S)

    async def run(self, location: DatabaseUrl) -> Promoted | None:
        """Stand by until this node holds the fence; None if ``stop`` is set first."""
        limits = WebLimits.of(self.config.web)
        served = asyncio.Event()
        page = StandbyPage(self.standing)
        async with asyncio.TaskGroup() as group:
            parts = [
                group.create_task(serve_display(page, limits, served)),
                group.create_task(self.notifier.watchdog()),
            ]
            try:
                await served.wait()
                self.notifier.ready(f"standby: {self.standing.reason}")
                return await self._until_leading(location)
            finally:
                for part in parts:
                    part.cancel()

    async def _until_leading(self, location: DatabaseUrl) -> Promoted | None:
        journal = await self._open(location)
        if journal is None:
            return None
        try:
            promoted = await self._wait(journal)
        except BaseException:
            journal.close()
            raise
        if promoted is None:
            journal.close()
        return promoted

    async def _open(self, location: DatabaseUrl) -> PostgresJournal[LedgerState] | None:
        return await self._retrying(
            lambda: asyncio.to_thread(open_standby, location, self.fence),
            "cannot open the journal: ",
        )

    async def _wait(self, journal: PostgresJournal[LedgerState]) -> Promoted | None:
        seen = await asyncio.to_thread(current, self.config.digest) if self.hash_software else None
        check = await self._retrying(lambda: asyncio.to_thread(journal.check_state, self.key))
        if check is None:
            return None
        if not check.ok:
            self._say(f"the start-up check failed: {'; '.join(check.problems[:3])}")
        follows = check.ok

        async def follow_and_take() -> int | Held:
            if follows:
                await asyncio.to_thread(journal.follow)
            return await asyncio.to_thread(journal.take)

        while not self.stop.is_set():
            taken = await self._retrying(follow_and_take)
            if taken is None:
                return None
            self.standing.seq = journal.head[0]
            if not isinstance(taken, Held):
                log.warning("node %s takes the sequencer over (epoch %d)", self.fence.node, taken)
                return Promoted(journal, check, seen)
            self._held(taken)
            await self._pause(max(0.0, taken.left_s) + MARGIN_S)
        return None

    def _held(self, held: Held) -> None:
        self.standing.holder, self.standing.epoch = held.holder, held.epoch
        self._say(f"node {held.holder!r} holds the sequencer (epoch {held.epoch})")

    def _say(self, reason: str) -> None:
        if reason != self.standing.reason:
            log.info("standby: %s", reason)
            self.notifier.notify(f"STATUS=standby: {reason}")
        self.standing.reason = reason

    def _trouble(self, reason: str) -> None:
        if reason != self.standing.reason:
            log.warning("standby: %s; trying again", reason)
        self._say(reason)

    async def _retrying(
        self, operation: Callable[[], Awaitable[_T]], trouble: str = ""
    ) -> _T | None:
        """``operation`` retried with the capped backoff while the journal cannot be reached."""
        return await retrying(
            operation,
            self.backoff,
            retry_on=JournalError,
            failed=lambda error: self._trouble(f"{trouble}{error}"),
            stop=self.stop,
        )

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the service is stopped."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)
