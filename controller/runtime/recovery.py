"""The sequencer's way back from failing closed: probe the journal with backoff until it writes.

While the journal cannot be written the controller fails closed (docs/architecture.md,
"Failing closed"). :func:`recover` runs beside the sequencer for the life of the service:
while it fails closed, it journals a probe (a ``journal recovered`` fault) after each delay of
the one capped backoff (:class:`controller.backoff.Backoff`, with jitter), committed as a
batch is, in the commit thread under the hang bound; the first that commits reopens the
tables. A journal another node has taken over ends the process instead (:mod:`.step_down`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from controller.backoff import Backoff
from controller.events import FaultRecorded
from controller.journal import JournalError
from controller.journal.errors import FencedError
from controller.runtime.availability import recovered
from controller.runtime.step_down import FENCED

if TYPE_CHECKING:
    from controller.runtime.sequencer import Sequencer

log = logging.getLogger(__name__)


async def recover(sequencer: Sequencer, backoff: Backoff | None = None) -> None:
    """While ``sequencer`` fails closed, probe the journal with backoff; reopen when it works."""
    backoff = backoff or Backoff(initial=0.25, cap=5.0)
    journal = sequencer.journal
    while True:
        if (
            sequencer.failed_reason is None
            or sequencer.stepped_down is not None
            or sequencer.until_restart  # a person must look first (the mystery levels' keeper)
        ):
            await asyncio.sleep(backoff.cap)  # nothing to do; checked again later
            continue
        await asyncio.sleep(backoff.next_delay())
        probe = FaultRecorded(
            f"fault-{uuid.uuid4()}", sequencer.clock(), "journal", "recovered",
            sequencer.failed_reason,
        )  # fmt: skip
        try:
            async with sequencer.writing:
                transaction = sequencer.prepare([probe])
                await sequencer.durable(transaction)
                journal.adopt(transaction)
                if not await _keeper_answers(sequencer):
                    continue
        except FencedError as error:
            sequencer.step_down(FENCED, str(error))
            continue
        except JournalError as error:
            log.warning("journal still unavailable: %s", error)
            continue
        sequencer.upkeep.renewed()
        backoff.reset()
        log.warning("journal writable again: tables reopen")
        sequencer.failed_reason = None
        sequencer.failed_at = None
        sequencer.broadcast.publish(recovered(journal.state, sequencer.clock(), journal.epoch))


async def _keeper_answers(sequencer: Sequencer) -> bool:
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
