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
        if sequencer.failed_reason is None or sequencer.stepped_down is not None:
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
