"""The interfaces between the core and the drivers: what sources feed, what sinks receive.

A **source** (MQTT, a serial link, the simulator) turns device frames and messages into typed
events and hands them to the :class:`Intake`, which the sequencer implements. ``submit``
returns only once the event is durable in the journal (applied or refused); only then may the
source acknowledge the device (serial ``ACK``, MQTT ``PUBACK``). If the journal cannot be
written, ``submit`` raises :class:`ControllerUnavailableError` and the source must not
acknowledge: the device resends later and nothing is lost.

``enqueue`` is the same without the wait, for a source that pipelines (MQTT): the event is in
the intake's queue when it returns, and the future it returns is the receipt (or the
``ControllerUnavailableError``). Events are journaled in the order they are queued. A source
that takes a burst of messages queues each of them in one go, with no task or coroutine each.

A **sink** receives :mod:`controller.outputs` updates after each commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from controller.errors import UnavailableError

if TYPE_CHECKING:
    import asyncio
    from collections.abc import AsyncIterator

    from controller.effects import AnyEffect, PayoutMade
    from controller.events import AnyEvent
    from controller.outputs import AnyUpdate, MeterUpdate, SignedHead
    from controller.widearea.messages import (
        Award,
        CentralMark,
        SiteHead,
        SiteHello,
        SiteMessage,
        SiteTotals,
    )
    from controller.widearea.site_link import SiteLink


APPLIED: Final = "applied"
REJECTED: Final = "rejected"
INTERNAL_ERROR: Final = "internal error"
"""How the reason of an event the ledger failed on (a bug, not a refusal) begins."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What became of an appended event, once it is durable."""

    seq: int
    event_id: str
    outcome: str
    reason: str
    effects: tuple[AnyEffect, ...]
    duplicate: bool = False
    conflict: bool = False
    """The event reused an id the journal holds for other content: this is the fault recorded
    instead (:mod:`controller.journal.identity`), and the event was not applied."""

    @property
    def applied(self) -> bool:
        """Whether the ledger accepted the event (a refusal is journaled too)."""
        return self.outcome == APPLIED


class ControllerUnavailableError(UnavailableError, RuntimeError):
    """The controller is failing closed (its journal cannot be written): do not acknowledge."""


class EventNotRecordedError(UnavailableError, RuntimeError):
    """The controller failed on this one event (a fault of its own): it is not journaled.

    Unlike :class:`ControllerUnavailableError` the journal is fine and other events go on; the
    source leaves this one unacknowledged, and parks it once it has failed the same way a few
    times (docs/faults.md, "Poison messages").
    """


class Intake(Protocol):
    """What sources hand their inputs to."""

    async def submit(self, event: AnyEvent, *, provenance: str | None = None) -> Receipt:
        """Journal the event (once per id) and return once it is durable.

        ``provenance`` says where it came from (``mqtt client=... topic=...``,
        ``serial port=...``, ``agent table=... boot=...``), journaled beside its row.
        """
        ...

    def enqueue(self, event: AnyEvent, *, provenance: str | None = None) -> asyncio.Future[Receipt]:
        """Queue the event to be journaled (once per id); the future is done once it is durable."""
        ...

    def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """A device of a table is alive (keeps the table open; never journaled).

        ``last`` is the ``seq`` of the last event the device says it sent, if it says: events
        it sent that never arrived are then journaled as a gap.
        """
        ...

    async def reject(self, source: str, reason: str, detail: str = "") -> None:
        """Bad input that could not become an event: counted, logged and journaled as a fault."""
        ...


class Source(Protocol):
    """A driver that feeds events in; ``run`` reconnects with capped backoff until cancelled."""

    name: str

    async def run(self, intake: Intake) -> None:
        """Feed events until cancelled."""
        ...


class Sink(Protocol):
    """A driver that shows or forwards updates (signs, MQTT meter topics, displays)."""

    name: str

    async def run(self, updates: AsyncIterator[AnyUpdate]) -> None:
        """Consume updates until cancelled."""
        ...


class SiteLinks(Protocol):
    """Central's linked properties as its ledger holds them, and central's signature.

    What the MQTT source answers properties with (docs/wide-area.md, "The link's runtime"):
    the service gives it this view of the journal's state and of the controller key.
    """

    @property
    def heartbeat_s(self) -> float:
        """How often every linked property is acknowledged while nothing else is said."""
        ...

    def sites(self) -> list[str]:
        """The linked properties' ids."""
        ...

    def link(self, site: str) -> SiteLink | None:
        """A linked property's chain as the ledger has applied it; None if not linked."""
        ...

    def sign(self, data: bytes) -> str:
        """Central's controller key's signature of ``data`` (base64)."""
        ...

    def awards(self, site: str) -> list[Award]:
        """The awards of a property's claims it may not have journaled yet, signed."""
        ...

    def signed_by(self, site: str, data: bytes, signature: str) -> bool:
        """Whether the linked property's key signed ``data`` (False if it is not linked)."""
        ...

    def keep_head(self, site: str, head: SignedHead) -> bool:
        """Keep ``head`` as the property's mark if it is valid and its highest; whether kept."""
        ...

    def mark_answer(self, site: str, nonce: str) -> CentralMark:
        """Central's answer to the property's hello ``nonce``: the mark it keeps, signed."""
        ...


class SiteChainView(Protocol):
    """A property's chain to central as its journal holds it, its key, and central's key.

    What the property's uplink sends and judges by (docs/wide-area.md, "The link's runtime");
    the service gives it this view of the journal and of the controller key.
    """

    @property
    def site(self) -> str:
        """This property's id to central."""
        ...

    @property
    def grace_s(self) -> float:
        """How long without central before wide-area wagers close."""
        ...

    def sent_high(self) -> int:
        """The last ``site_seq`` journaled (the most that can have been sent)."""
        ...

    def messages_after(self, after: int, limit: int) -> list[SiteMessage]:
        """The journaled messages after ``after``, oldest first, each signed."""
        ...

    def digest_of(self, site_seq: int) -> str | None:
        """This property's digest of its message ``site_seq`` (the genesis for 0); None if none."""
        ...

    def totals(self) -> SiteTotals:
        """What it has sent, and the claims it holds, signed."""
        ...

    def signed_hello(self, hello: SiteHello) -> SiteHello:
        """The hello of a connection to central, signed with this property's key."""
        ...

    def signed_head(self) -> SiteHead | None:
        """The property's latest signed head, for central to keep, signed; None before any."""
        ...

    async def head_beyond(self, seq: int) -> None:
        """Return once a head of a row after ``seq`` is signed."""
        ...

    def central_signed(self, data: bytes, signature: str) -> bool:
        """Whether central's key signed ``data``."""
        ...

    async def beyond(self, site_seq: int) -> None:
        """Return once a message after ``site_seq`` is journaled."""
        ...

    def pools(self) -> list[str]:
        """The wide-area pools this property's tables play."""
        ...

    def show(self, update: MeterUpdate) -> None:
        """Show central's meter of a wide-area pool on this property's signs and displays."""
        ...


class OutboxError(UnavailableError, RuntimeError):
    """The outbox cannot be opened or written."""


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """One message waiting for the broker's acknowledgement; ``row_id`` None if not stored."""

    row_id: int | None
    topic: str
    payload: bytes
    qos: int
    retain: bool


class Outbox(Protocol):
    """A sink's messages kept durable beside the journal until the far end has them.

    The journal backend keeps it (:class:`controller.journal.sqlite.outbox.JournalOutbox` in the
    SQLite file), so that a sink never opens the journal itself; the hits the journal made are
    read through it too (docs/mqtt.md, "The outbox"). Every method raises
    :class:`OutboxError` when the store cannot be read or written.
    """

    def add(self, topic: str, payload: bytes, *, qos: int, retain: bool, created: str) -> int:
        """Store a message; its row id."""
        ...

    def add_hit(self, topic: str, payload: bytes, *, qos: int, created: str, seq: int) -> int:
        """Store the announcement of the hit journaled at row ``seq``, and mark it; its row id."""
        ...

    def hits_stored_through(self) -> int:
        """The journal row of the last hit this sink stored (the journal's end at first use)."""
        ...

    def missed_payouts(self, after: int) -> list[tuple[int, str, PayoutMade]]:
        """The payouts the journal made after row ``after``: (row, time, payout as made)."""
        ...

    def remove(self, row_id: int) -> None:
        """The far end acknowledged a message: forget it."""
        ...

    def pending(self) -> list[OutboxMessage]:
        """This sink's stored messages, oldest first."""
        ...

    def close(self) -> None:
        """Close the store (the rows stay)."""
        ...
