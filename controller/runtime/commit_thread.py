"""The one thread the journal's ``COMMIT`` runs in, and the bound on how long it may take.

docs/architecture.md, "The commit thread": the sequencer prepares a batch on the event loop and
runs its ``COMMIT`` here, one at a time, while the loop reads on; a fenced journal's lease
renewal runs here too, since it commits on the same connection. Two rules:

* **Never abandoned, never cancelled.** A thread cannot be interrupted, and a ``COMMIT`` waiting
  on synchronous replication must not be: cancelling it reports success without replication
  (docs/ha.md, "A COMMIT that hangs"). A task cancelled while it waits goes on waiting until the
  work has ended (:meth:`CommitThread.finish`), so nothing else touches the connection before.
* **Bounded.** Work not done within ``hang_s`` calls ``on_hang`` (the sequencer steps down and
  the process ends); the work itself is left to run.
"""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


async def outlast(future: asyncio.Future[None]) -> None:
    """Wait until ``future`` is done, however often the waiting task is cancelled meanwhile."""
    while not future.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([future])


class CommitThread:
    """Runs blocking journal calls one at a time in a thread of its own, each bounded."""

    def __init__(self, hang_s: float | None, on_hang: Callable[[], None]) -> None:
        self.hang_s = hang_s
        """How long a call may run before ``on_hang``; None: no bound."""
        self._on_hang = on_hang
        # Never shut down: a batch taken before the sequencer closed may still commit. An idle
        # worker ends with the executor (garbage collected, or at exit).
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="journal-commit")

    def start(self, call: Callable[[], None]) -> asyncio.Future[None]:
        """Run ``call`` in the thread; ``on_hang`` if it has not ended within the bound."""
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._executor, call)
        if self.hang_s is not None:
            timer = loop.call_later(self.hang_s, self._hung, work)
            work.add_done_callback(lambda _done: timer.cancel())
        return work

    def _hung(self, work: asyncio.Future[None]) -> None:
        if not work.done():
            self._on_hang()

    @staticmethod
    async def finish(work: asyncio.Future[None]) -> None:
        """Wait for ``work``: its result or error; if cancelled, only once it has ended."""
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            await outlast(work)
            raise
