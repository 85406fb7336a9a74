"""The console's Faults panel: the faults waiting for a supervisor, kept up to date cheaply.

The ledger keeps no fault, only its register (controller/ledger/fault_register.py); the faults
are the journal's ``fault`` rows (controller/journal/fault_rows.py). The console reads them on a
read-only connection of its own, in a worker thread: the whole journal once, then only the rows
after the last one read (a file's primary key), so a poll every few seconds costs the rows
journaled meanwhile, never the journal (the event loop sequences the tables' events). It keeps
the faults after the point acknowledged through, at most :data:`KEPT` of them and the count of
the older ones, and drafts an acknowledgement through the newest (docs/faults.md,
"Acknowledging faults").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from controller.journal.fault_rows import KIND, waiting_faults
from controller.journal.fault_rows import fault_rows as faults_of
from controller.ledger.faults import register_of
from controller.ledger_journal import open_reader
from controller.web.console_drafts import DraftError
from controller.web.console_words import fault_came_since, no_fault_waiting

if TYPE_CHECKING:
    from controller.journal.fault_rows import WaitingFault
    from controller.journal.location import JournalLocation
    from controller.ledger.state import LedgerState

KEPT: Final = 200
"""Faults waiting kept in memory; the older ones are counted, not listed."""
SHOWN: Final = 50
"""Faults the panel lists, the newest."""


class FaultWatch:
    """The faults waiting, read incrementally from the journal at ``location``."""

    def __init__(self, location: JournalLocation) -> None:
        self.location = location
        self.after = 0
        self.faults: list[WaitingFault] = []
        self.older = 0
        """Faults waiting beyond :data:`KEPT`, counted only."""
        self._lock = asyncio.Lock()

    def _read(self) -> list[WaitingFault]:
        with open_reader(self.location) as reader:
            rows = list(reader.rows(self.after))
        if rows:
            self.after = max(int(row["seq"]) for row in rows)
        return faults_of(row for row in rows if row.get("kind") == KIND)

    async def refresh(self, state: LedgerState) -> list[WaitingFault]:
        """The faults waiting after the rows journaled since the last refresh (oldest first)."""
        async with self._lock:
            found = await asyncio.to_thread(self._read)
            register = register_of(state)
            kept = self.faults + found
            if register is not None and any(f.event_id == register.through for f in kept):
                self.older = 0
            kept = waiting_faults(kept, register.through if register else None)
            if len(kept) > KEPT:
                self.older += len(kept) - KEPT
                kept = kept[-KEPT:]
            self.faults = kept
            return list(kept)

    @property
    def waiting(self) -> int:
        """How many faults wait, listed or counted."""
        return self.older + len(self.faults)

    def newest(self) -> WaitingFault | None:
        """The newest fault waiting, which an acknowledgement names."""
        return self.faults[-1] if self.faults else None


def faults_view(watch: FaultWatch, state: LedgerState) -> dict[str, Any]:
    """What the panel shows: the newest faults waiting, how many, who acknowledged last."""
    register = register_of(state)
    return {
        "waiting": watch.waiting,
        "shown": [fault.document() for fault in reversed(watch.faults[-SHOWN:])],
        "through": register.through if register is not None else None,
        "by": register.by if register is not None else None,
    }


def acknowledgement_count(watch: FaultWatch, state: LedgerState, through: str) -> int:
    """The faults an acknowledgement through ``through`` covers: the ledger's count once open.

    Before a journal's first acknowledgement the ledger counted none: the journal's rows say.
    Refused in plain words unless ``through`` is the newest fault waiting (the page listed an
    older one: a fault came since), or none waits.
    """
    newest = watch.newest()
    if newest is None:
        raise DraftError(no_fault_waiting())
    if through != newest.event_id:
        raise DraftError(fault_came_since(through, newest.event_id))
    register = register_of(state)
    return register.waiting if register is not None else watch.waiting
