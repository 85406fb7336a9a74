"""The agent's table state, shown: a log line, a kept fault, and a file a local sign reads.

When the table closes (the controller has gone quiet) or opens again, the agent logs it at
WARNING, keeps it in its outbox's faults, and, if ``[agent] state_file`` is set, rewrites that
file (atomically: a new file renamed over the old) with one JSON object::

    {"v":1,"table":"t1","open":false,"reason":"no acknowledgement ... for 10.2 s","at":"..."}

A sign or a dealer's display on the table's hardware shows CLOSED while ``open`` is false.
The controller's own signs show CLOSED already, from the controller's status and the table's
last will (docs/mqtt.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Final

import msgspec

from controller.agent.faults import FaultThrottle
from controller.clock import utc_now
from controller.files import RECORD, write_file
from controller.ports import OutboxError
from drivers.mqtt.json_objects import SCHEMA_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from controller.agent.store import AgentOutbox

log = logging.getLogger(__name__)

TABLE_CLOSED_FAULT: Final = "table-closed"
TABLE_OPENED_FAULT: Final = "table-opened"


class Changes:
    """Wakes whoever waits for a part of the agent to change (its status, and the tests)."""

    def __init__(self) -> None:
        self._waiters: set[asyncio.Event] = set()

    def tell(self) -> None:
        """Something changed: every waiter looks again."""
        for waiter in self._waiters:
            waiter.set()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate`` holds, looking again at each change (the caller bounds it)."""
        waiter = asyncio.Event()
        self._waiters.add(waiter)
        try:
            while not predicate():
                await waiter.wait()
                waiter.clear()
        finally:
            self._waiters.discard(waiter)


class TableStateView:
    """Where the agent says whether its table is open."""

    def __init__(self, table_id: str, faults: FaultLog, state_file: Path | None) -> None:
        self.table_id = table_id
        self._faults = faults
        self._file = state_file
        self.open: bool | None = None
        """As last shown; None before the first."""
        self.changes = Changes()
        """Told at each change of ``open``."""

    def show(self, *, table_open: bool, reason: str) -> None:
        """Show the table open or closed (a repeat of the same state shows nothing new)."""
        if table_open == self.open:
            return
        self.open = table_open
        at = utc_now()
        what = "OPEN" if table_open else "CLOSED"
        log.warning("table %s %s: %s", self.table_id, what, reason)
        fault = TABLE_OPENED_FAULT if table_open else TABLE_CLOSED_FAULT
        self._faults.keep(fault, reason, throttled=False)
        if self._file is not None:
            state = {
                "v": SCHEMA_VERSION,
                "table": self.table_id,
                "open": table_open,
                "reason": reason,
                "at": at,
            }
            try:
                staged = self._file.with_name(self._file.name + ".new")
                write_file(staged, msgspec.json.encode(state) + b"\n", RECORD)
                staged.replace(self._file)
            except OSError as error:
                log.warning("table %s: cannot write %s: %s", self.table_id, self._file, error)
        self.changes.tell()


class FaultLog:
    """The agent's faults: every one logged, kept in the outbox at most once per reason a while.

    :class:`controller.agent.faults.FaultThrottle` decides; a kept row after a burst says how
    many of its kind were held back.
    """

    def __init__(self, outbox: AgentOutbox, throttle: FaultThrottle | None = None) -> None:
        self._outbox = outbox
        self._throttle = throttle or FaultThrottle()

    def keep(self, reason: str, detail: str, *, throttled: bool = True) -> None:
        """Keep one fault (a store that fails is logged, never fatal).

        ``throttled=False`` for what is rare and must each be kept (the table opening or
        closing).
        """
        held = self._throttle.admit(reason, time.monotonic()) if throttled else 0
        if held is None:
            return
        if held:
            detail = f"{detail} (and {held} more since the last kept)"
        try:
            self._outbox.fault(reason, detail, utc_now())
        except OutboxError:
            log.exception("agent: cannot keep the fault %s (%s)", reason, detail)
