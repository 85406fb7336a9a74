"""The wide-area gate's openings and closings, journaled as they happen (Michigan R 432.1841).

A property's wide-area wagers are open only while central was heard within ``grace_s`` and a
matched reconciliation covers the connection (:class:`controller.widearea.property_link.
WideAreaGate`). The ledger refuses a wide-area wager while the journal says the gate is closed,
whatever path the wager takes, so each change is journaled (``WideAreaStatusChanged``): when an
acknowledgement is judged (:attr:`GateJournal.heard`), and when the grace runs out, on a timer.
A gate that closes asks the uplink for a report of its totals (:attr:`GateJournal.reconcile`):
reopening always follows a reconciliation of what came meanwhile (docs/wide-area.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING

from controller.clock import utc_now
from controller.wide_events import WideAreaStatusChanged

if TYPE_CHECKING:
    from controller.ports import Intake, SiteChainView
    from controller.widearea.property_link import WideAreaGate

log = logging.getLogger(__name__)


class GateJournal:
    """Journals each change of one property's gate (see the module docstring)."""

    def __init__(self, name: str, gate: WideAreaGate, view: SiteChainView) -> None:
        self.name = name
        self.gate = gate
        self.view = view
        self.heard = asyncio.Event()
        """Set when an acknowledgement was judged: the gate may have opened or been refused."""
        self.reconcile = asyncio.Event()
        """Central was silent past the grace: report the totals again before reopening."""
        self._journaled: bool | None = None

    async def keep(self, intake: Intake) -> None:
        """Journal each opening and closing; wake when heard, or when the grace runs out."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            await self._journal(intake, now)
            closes = self.gate.closes_at()
            wait = None if closes is None or closes <= now else closes - now
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self.heard.wait()
            self.heard.clear()

    async def _journal(self, intake: Intake, now: float) -> None:
        is_open = self.gate.is_open(now)
        if is_open == self._journaled:
            return
        reason = self.gate.reason(now) or ""
        if not is_open and self._journaled:
            # Reopening takes a reconciliation of the chain as it stands now, whatever older
            # acknowledgements the link still holds: a report of it is due.
            self.gate.connected(self.view.sent_high())
            self.reconcile.set()
        event_id = f"wide-area/status/{uuid.uuid4()}"
        await intake.submit(WideAreaStatusChanged(event_id, utc_now(), is_open, reason))
        self._journaled = is_open
        said = "open" if is_open else f"closed: {reason}"
        log.warning("%s: wide-area wagers %s", self.name, said)
