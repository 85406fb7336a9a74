"""A test :class:`controller.ports.Intake` over a real journal, for driver tests.

Sources are tested against the journal they will really write to: ``submit`` appends to a
:class:`controller.journal.sqlite.Journal` on disk (so a resend comes back ``duplicate=True``),
``reject`` journals a ``FaultRecorded`` as the daemon's intake does, and every call is also
recorded in plain lists for assertions. Setting ``unavailable`` makes ``submit`` fail closed
with :class:`ControllerUnavailableError`, as the sequencer does when its journal cannot be
written.

Import it as ``from support.drivers.intake import JournalIntake`` (tests/ is on the path; see
tests/conftest.py).
Tests wait for what they expect with :meth:`JournalIntake.wait_until` (woken by every call,
never by polling a clock), bounded by ``asyncio.timeout`` in the test.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

from controller.clock import utc_now
from controller.events import FaultRecorded
from controller.ports import ControllerUnavailableError, EventNotRecordedError

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.events import AnyEvent
    from controller.ledger_journal.sqlite import Journal
    from controller.ports import Receipt


class JournalIntake:
    """Implements :class:`controller.ports.Intake` by appending to ``journal``."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.submitted: list[AnyEvent] = []
        """Every event passed to ``submit``, in order (including those refused as unavailable)."""
        self.receipts: list[Receipt] = []
        self.provenances: list[str | None] = []
        """The provenance each event was submitted with, in order."""
        """The receipt of each ``submit`` that returned, in order."""
        self.heartbeats: list[tuple[str, str]] = []
        self.lasts: list[int | None] = []
        """The ``last`` of each heartbeat, in order."""
        self.rejects: list[tuple[str, str, str]] = []
        self.unavailable = False
        self._waiters: set[asyncio.Event] = set()

    async def submit(self, event: AnyEvent, *, provenance: str | None = None) -> Receipt:
        """Journal the event durably (or fail closed when ``unavailable``)."""
        return await self.enqueue(event, provenance=provenance)

    def enqueue(self, event: AnyEvent, *, provenance: str | None = None) -> asyncio.Future[Receipt]:
        """Journal the event durably at once; the future holds its receipt (or the refusal)."""
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        self.submitted.append(event)
        self.provenances.append(provenance)
        try:
            if self.unavailable:
                future.set_exception(ControllerUnavailableError("journal unavailable (test)"))
            else:
                receipt = self.journal.append(event, provenance=provenance)
                self.receipts.append(receipt)
                future.set_result(receipt)
        finally:
            self._changed()
        return future

    def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Record that a device is alive (and the last event it says it sent)."""
        self.heartbeats.append((table_id, device))
        self.lasts.append(last)
        self._changed()

    async def reject(self, source: str, reason: str, detail: str = "") -> None:
        """Record bad input, and journal it as a fault."""
        self.rejects.append((source, reason, detail))
        try:
            self.journal.append(
                FaultRecorded(f"fault/test/{uuid.uuid4()}", utc_now(), source, reason, detail)
            )
        finally:
            self._changed()

    def event_ids(self) -> list[str]:
        """The id of every event in the journal, in journal order (faults excluded)."""
        return [row["event_id"] for row in self.journal.rows() if row["kind"] != "fault"]

    def reasons(self) -> list[str]:
        """The reason of every reject, in order."""
        return [reason for _source, reason, _detail in self.rejects]

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds, re-checking after every call into the intake."""
        while not predicate():
            changed = asyncio.Event()
            self._waiters.add(changed)
            try:
                await changed.wait()
            finally:
                self._waiters.discard(changed)

    async def wait_submitted(self, count: int) -> None:
        """Return once ``count`` events were passed to ``submit``."""
        await self.wait_until(lambda: len(self.submitted) >= count)

    async def wait_rejects(self, count: int) -> None:
        """Return once ``count`` inputs were rejected."""
        await self.wait_until(lambda: len(self.rejects) >= count)

    def _changed(self) -> None:
        for waiter in self._waiters:
            waiter.set()


class PoisonedIntake(JournalIntake):
    """Fails on one event every time, as a fault of the controller's own would (injected).

    The rest is journaled as usual. For the tests of poison messages (docs/faults.md).
    """

    def __init__(self, journal: Journal, poison: str) -> None:
        super().__init__(journal)
        self.poison = poison
        self.attempts = 0
        """How many times the poison was handed over."""

    def enqueue(self, event: AnyEvent, *, provenance: str | None = None) -> asyncio.Future[Receipt]:
        """Journal the event, unless it is the poison: that fails every time."""
        if event.event_id != self.poison:
            return super().enqueue(event, provenance=provenance)
        self.attempts += 1
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        future.set_exception(EventNotRecordedError(f"{event.event_id}: injected fault"))
        self._changed()
        return future
