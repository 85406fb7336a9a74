"""What a committed batch is answered with: each source's receipt, the counts, the updates.

Only once a batch's ``COMMIT`` has returned (docs/architecture.md, "One event's
way through") does the sequencer answer each waiting source, count what the metrics and alerts watch
(outcomes, latencies, reused ids, lost events, held rounds), run its ``on_commit`` hooks and
publish the updates the events made to every sink: nothing reaches a sink before its
transaction has committed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Protocol

from controller.effects import RoundHeld
from controller.events import CheckpointRecorded
from controller.provenances import DAEMON
from controller.runtime.updates import updates_of

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent
    from controller.ledger_journal import LedgerJournal
    from controller.outputs import AnyUpdate
    from controller.ports import Receipt
    from controller.runtime.broadcast import Broadcast
    from controller.runtime.checkpointing import CheckpointSchedule
    from controller.runtime.device_sequences import Gap
    from controller.runtime.sequencer_stats import SequencerStats

log = logging.getLogger(__name__)


class Answering(Protocol):
    """What answering a batch reads of the sequencer (:class:`.sequencer.Sequencer`)."""

    @property
    def stats(self) -> SequencerStats:
        """The sequencer's counters."""
        ...

    @property
    def broadcast(self) -> Broadcast:
        """Where the batch's updates are published."""
        ...

    @property
    def checkpoints(self) -> CheckpointSchedule | None:
        """The checkpoint schedule, told of each committed row."""
        ...

    @property
    def gaps(self) -> dict[str, Gap]:
        """The devices' open sequence gaps."""
        ...

    @property
    def journal(self) -> LedgerJournal:
        """The journal the batch was committed to."""
        ...

    @property
    def on_commit(self) -> list[Callable[[Sequence[Receipt]], None]]:
        """The hooks run on each committed batch."""
        ...


def consume(future: asyncio.Future[Receipt]) -> None:
    """Retrieve the outcome of an event the controller queued itself, so none goes unseen.

    A table's reopening, a gap, a clock step, a checkpoint: nobody awaits their receipt.
    """
    if not future.cancelled() and future.exception() is not None:
        log.warning("event queued by the controller not journaled: %s", future.exception())


@dataclass(slots=True)
class Waiting:
    """An event queued to be journaled, and whoever waits for its receipt."""

    event: AnyEvent
    future: asyncio.Future[Receipt]
    queued: float
    provenance: str = DAEMON
    """Who sent it (docs/journal.md, "Provenance"); the daemon itself (liveness, gaps, clock
    steps, checkpoints) unless a source says."""


def answer(
    sequencer: Answering, batch: Sequence[Waiting], receipts: list[Receipt], started: float
) -> None:
    """Count, answer each source, run the hooks and publish what the batch changed."""
    stats = sequencer.stats
    finished = perf_counter()
    stats.commits += 1
    stats.commit_seconds.append(finished - started)
    updates: list[AnyUpdate] = []
    for waiting, receipt in zip(batch, receipts, strict=True):
        stats.events[receipt.outcome] += 1
        stats.queue_to_commit_seconds.append(finished - waiting.queued)
        if not receipt.duplicate:
            updates.extend(_updates(sequencer, receipt, waiting.event))
            _count_faults(sequencer, receipt, waiting.event)
        if not waiting.future.done():
            waiting.future.set_result(receipt)
    for hook in sequencer.on_commit:
        hook(receipts)
    sequencer.broadcast.publish(updates)


def _count_faults(sequencer: Answering, receipt: Receipt, event: AnyEvent) -> None:
    """Count what the alerts watch: conflicting reuses of an id and lost events."""
    stats = sequencer.stats
    if receipt.conflict:
        table_id = str(getattr(event, "table_id", ""))
        stats.conflicts[table_id] += 1
        log.error("ALARM %s reused with other content (%s)", event.event_id, receipt.event_id)
    gap = sequencer.gaps.pop(event.event_id, None)
    if gap is not None:
        stats.gaps[gap.table_id] += 1
        stats.lost_events[gap.table_id] += gap.count


def _updates(sequencer: Answering, receipt: Receipt, event: AnyEvent) -> list[AnyUpdate]:
    """What the sinks must hear about, from the effects of a committed event."""
    if isinstance(event, CheckpointRecorded) and sequencer.checkpoints is not None:
        return [sequencer.checkpoints.recorded(receipt.seq, event)]
    for effect in receipt.effects:
        if isinstance(effect, RoundHeld):
            sequencer.stats.held_rounds += 1
            log.error(
                "ALARM table %s round %s held: %s",
                effect.table_id,
                effect.round_id,
                effect.reason,
            )
    journal = sequencer.journal
    return updates_of(receipt, event.at, journal.state, journal.epoch, event)
