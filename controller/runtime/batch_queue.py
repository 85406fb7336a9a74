"""The events waiting to be journaled, and how the sequencer takes its batches from them.

Every source's event joins one queue in the order it was handed over
(:meth:`controller.runtime.sequencer.Sequencer.enqueue`), and the sequencer takes them
from it a batch at a time (group commit: docs/architecture.md). Two things shape a batch:

* **it waits a moment for company** (:meth:`BatchQueue.gather`): most of a commit's cost is
  paid once a batch however many events it holds, and on a quiet floor events come one at a
  time, so the oldest event of a batch may wait up to ``group_wait_s`` from its *arrival* for
  others to join it; under load (events queued while the last batch committed) it waits for
  nothing. One timer, not a wake-up per arrival: it ends early once the queue would fill the
  batch (``batch_max``);
* **it may be cut** (:meth:`BatchQueue.hold`): at an event that feeds a mystery level the
  batch ends, so that the keeper is asked before the next event is applied; the rest is held,
  in order, and goes first into the next batch (controller/runtime/mystery_watch.py).

Waiting changes which events share a transaction, never what is written
(controller/journal/batch.py). **A shutdown keeps the order**: the service closes the sequencer
while its run goes on (controller/service/wiring.py), so what the shutdown journals
(:meth:`BatchQueue.drain`) starts with the batch the run has taken from the queue and not yet
committed, then what is held, then what is queued.
"""

from __future__ import annotations

import asyncio
from time import perf_counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.runtime.answers import Waiting


class BatchQueue:
    """The sequencer's queue of waiting events and its batches (see the module docstring)."""

    def __init__(self, batch_max: int, group_wait_s: float) -> None:
        self.batch_max = batch_max
        """The most events a batch holds."""
        self.group_wait_s = group_wait_s
        """How long a batch's oldest event may wait, from its arrival, for others (0: never)."""
        self._queue: asyncio.Queue[Waiting] = asyncio.Queue()
        self._filled: asyncio.Future[None] | None = None
        """Set while a batch waits for company (:meth:`gather`); done once it would be full."""
        self._filling = 0
        """How many queued events fill the waiting batch."""
        self._held: list[Waiting] = []
        """Events cut off a batch (:meth:`hold`): the next batch's first."""
        self._forming: list[Waiting] | None = None
        """The batch taken from the queue and not yet committed (:meth:`next_batch`)."""

    @property
    def gathering(self) -> bool:
        """Whether a batch is waiting for company (:meth:`gather`)."""
        return self._filled is not None

    def put(self, waiting: Waiting) -> None:
        """Queue an event, and end the batch's wait for company once it would be full."""
        self._queue.put_nowait(waiting)
        filled = self._filled
        if filled is not None and not filled.done() and self._queue.qsize() >= self._filling:
            filled.set_result(None)

    async def next_batch(self, wait: float | None) -> list[Waiting]:
        """A new batch of the next event (a held one first); empty if none comes within ``wait``.

        The batch is the one being formed until :meth:`committing`: a shutdown meanwhile
        takes it first (:meth:`drain`).
        """
        first: Waiting | None
        if self._held:
            first = self._held.pop(0)
        elif wait is None:
            first = await self._queue.get()
        else:
            try:
                async with asyncio.timeout(wait):
                    first = await self._queue.get()
            except TimeoutError:
                first = None
        batch = [] if first is None else [first]
        self._forming = batch or None
        return batch

    def committing(self) -> None:
        """The batch being formed is the sequencer's to commit now: no longer the shutdown's."""
        self._forming = None

    async def gather(self, batch: list[Waiting], *, wait: bool = True) -> None:
        """Take what else is queued, once the oldest event has waited ``group_wait_s`` for it.

        Held events go first and wait for nothing more; ``wait`` False (failing closed):
        nothing waits.
        """
        queue = self._queue
        if self._held:
            while self._held and len(batch) < self.batch_max:
                batch.append(self._held.pop(0))
            return
        left = batch[0].queued + self.group_wait_s - perf_counter()
        if left > 0 and wait and len(batch) + queue.qsize() < self.batch_max:
            self._filled = asyncio.get_running_loop().create_future()
            self._filling = self.batch_max - len(batch)
            try:
                async with asyncio.timeout(left):
                    await self._filled  # or the batch is full first
            except TimeoutError:
                pass
            finally:
                self._filled = None
        while len(batch) < self.batch_max and not queue.empty():
            batch.append(queue.get_nowait())

    def hold(self, batch: list[Waiting], end: int) -> None:
        """Cut ``batch`` after its event ``end``: the rest, in order, go first into the next."""
        self._held[:0] = batch[end + 1 :]
        del batch[end + 1 :]

    def drain(self) -> list[Waiting]:
        """Everything waiting, in the order it came (the shutdown's).

        The batch being formed (taken from the queue, not committed) first, then the held
        events, then the queued ones.
        """
        taken = [*(self._forming or ()), *self._held]
        self._forming, self._held = None, []
        while not self._queue.empty():
            taken.append(self._queue.get_nowait())
        return taken

    def stop_gathering(self) -> None:
        """End a batch's wait for company at once (the shutdown takes what it waits for)."""
        if self._filled is not None and not self._filled.done():
            self._filled.set_result(None)

    def empty(self) -> bool:
        """Whether no event is queued (held ones aside)."""
        return self._queue.empty()
