"""Signing the journal's head without holding up the journal: :class:`HeadSigning`.

After each commit the sequencer asks whether a signed head is due (:class:`~.heads.
HeadSchedule`). With the key in the process a head is signed in place (tens of microseconds).
Through the signer process (controller/runtime/remote_signer.py) a head is a request that a
stalled signer (stopped, swapped out, its disk hung) answers only at its timeout: so it is
signed on a worker thread (:func:`~.remote_signer.off_the_loop`: the event loop never waits)
and in a task of its own, one head at a time, while the sequencer goes on journaling. A head
covers the journal's last row when it is signed; the rows that come meanwhile are covered by
the next (docs/security.md, "History never goes back": the bound is broken while the signer
does not answer, which the head schedule logs, and mended at its first head after).

When the sequencer closes, the head in flight is awaited and the last head signed in place,
as before: each wait bounded by the signer's timeout. A head the signer refuses (the journal
went back under it) steps the sequencer down, wherever it was signed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from controller.journal.high_water import HighWaterError
from controller.runtime.remote_signer import RemoteSigner, off_the_loop

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.ledger_journal import LedgerJournal
    from controller.outputs import HeadUpdate
    from controller.runtime.heads import HeadSchedule

log = logging.getLogger(__name__)


class HeadSigning:
    """The sequencer's signed heads, in place or in the background (see the module docstring)."""

    def __init__(  # noqa: PLR0913 - what a head is signed from, and what follows it
        self,
        heads: HeadSchedule,
        journal: LedgerJournal,
        clock: Callable[[], str],
        *,
        publish: Callable[[HeadUpdate], None],
        went_back: Callable[[str], None],
        may_sign: Callable[[], bool],
    ) -> None:
        self.heads = heads
        self.journal = journal
        self.clock = clock
        self.publish = publish
        self.went_back = went_back
        """Steps the sequencer down: the signer or the schedule refused a head below the mark."""
        self.may_sign = may_sign
        """Whether the sequencer still signs (not failing closed, not stepped down)."""
        self.background = isinstance(heads.key, RemoteSigner)
        """Whether heads are signed in a task of their own (through the signer process)."""
        self._task: asyncio.Task[None] | None = None

    @property
    def in_flight(self) -> bool:
        """Whether a head is being signed in the background now."""
        return self._task is not None and not self._task.done()

    async def step(self, *, closing: bool = False) -> None:
        """Sign a head if one is due (always when closing and rows came since)."""
        if self.in_flight and not closing:
            return  # one head at a time: the next commit asks again
        if self._task is not None:
            await self._task  # closing: the head in flight first (bounded by the timeout)
            self._task = None
        if self.background and not closing:
            self._task = asyncio.create_task(self._sign(closing=False), name="signed head")
            self._task.add_done_callback(_said)
            return
        await self._sign(closing=closing)

    async def _sign(self, *, closing: bool) -> None:
        if not self.may_sign():
            return
        heads, journal, clock = self.heads, self.journal, self.clock
        try:
            update = await off_the_loop(
                heads.key, lambda: heads.sign_if_due(journal, clock, closing=closing)
            )
        except HighWaterError as error:
            self.went_back(str(error))
            return
        if update is not None and self.may_sign():
            self.publish(update)
            for hook in heads.on_signed:  # central's copy, over the wide-area uplink
                hook(update.head)


def _said(task: asyncio.Task[None]) -> None:
    """Log what a head signed in the background raised that nobody foresaw (never lost)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("signing a head failed", exc_info=error)
