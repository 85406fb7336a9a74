"""What an event id promises: one id names one event, and a device numbers its events.

**Resends and conflicts** (docs/faults.md, "Reused sequence numbers"). The journal applies an
id once. A device event's id is ``<table>/<device>/<seq>``, so a device that resends a frame
(it was not acknowledged in time) sends the same id with the same content: a *duplicate*,
answered with the original receipt. A device that sends *different* content under an id it
already used (its counter was reset by a firmware update, or a second device was cloned from
it) is not resending: acknowledging it with the old receipt would drop the new message without
a trace. :func:`same_event` tells the two apart, ignoring only ``at`` (the controller's clock
dates each arrival, so a resend arrives with a new time), and :func:`conflict_fault` is what the
journal records for a conflict instead: a fault under an id derived from the new content, so
that resends of the conflicting message are themselves duplicates of that one fault.

**Device sequence numbers.** :func:`device_origin` reads the table, device and ``seq`` of
anything a device sent, for the per-device high-water marks the journal keeps
(``device_seqs``) and the gap detection of :mod:`controller.runtime.device_sequences`.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import msgspec

from controller.events import (
    DeviceEvent,
    FaultRecorded,
    RoundVoided,
    decode_event,
    device_event_id,
    encode_event,
)

if TYPE_CHECKING:
    from controller.events import AnyEvent

SEQUENCE_REUSED: Final = "sequence-reused"
"""The reason of the fault a conflicting reuse of an event id is journaled as."""
_DETAIL: Final = 400
"""How much of each version a conflict's detail quotes."""


def same_event(journaled: str, event: AnyEvent) -> bool:
    """Whether ``event`` is the journaled event again (a resend), whatever its ``at``."""
    try:
        before = decode_event(journaled)
    except (msgspec.MsgspecError, ValueError):
        return False
    return type(before) is type(event) and msgspec.structs.replace(event, at=before.at) == before


def conflict_fault(seq: int, journaled: str, event: AnyEvent) -> FaultRecorded:
    """The fault recorded for ``event``, which reuses the id of the event journaled at ``seq``."""
    content = encode_event(msgspec.structs.replace(event, at=""))
    digest = hashlib.sha256(content).hexdigest()[:16]
    table_id = getattr(event, "table_id", "")
    detail = (
        f"event id {event.event_id!r} was journaled at row {seq} as {journaled[:_DETAIL]}; "
        f"received again with other content: {content.decode()[:_DETAIL]}"
    )
    return FaultRecorded(
        f"{event.event_id}#conflict-{digest}",
        event.at,
        f"table {table_id}" if table_id else "journal",
        SEQUENCE_REUSED,
        detail,
    )


def device_origin(event: AnyEvent) -> tuple[str, str, int] | None:
    """The table, device and ``seq`` of an event a device sent; None for any other event."""
    if isinstance(event, DeviceEvent):
        return event.table_id, event.device, event.seq
    if isinstance(event, RoundVoided) and event.by.startswith("device "):
        device = event.by.removeprefix("device ")
        table_and_device, _, seq = event.event_id.rpartition("/")
        if (
            seq.isascii()
            and seq.isdigit()
            and table_and_device == f"{event.table_id}/{device}"
            and event.event_id == device_event_id(event.table_id, device, int(seq))
        ):
            return event.table_id, device, int(seq)
    return None
