"""The refusals a writer's event meets before the ledger applies it: the journal's screen.

In this order, as the append always took them:

1. **A table's word from another writer.** A device's input (bet-sensed, bets-locked,
   card-dealt, deal-complete, a device's void) and a table's status are the table's word: on a
   journal whose authority is signed (as the append finds it), only the daemon's intake may
   journal them (NY 9 NYCRR 5321.18(c): a table's progressive is unplayable while the
   controller does not hear the table, and only the controller decides that).
2. **At a live append, a control character or a late signature.** An identifier or a reason
   carrying a control character (:mod:`controller.ledger.identifiers`), and a signed event
   whose window does not hold the live clock (:func:`controller.ledger.binding.late`).
3. **A table agent's missing word.** The ledger refuses a device event of a table with an
   enrolled agent that its agent did not sign (:mod:`controller.ledger.table_agents`).
   Journaled as a refused row under the event's own id, the forgery would take that id
   (``table/device/seq``): the genuine event, arriving after it, would be answered as its
   duplicate or refused as a reuse of the id, and lost (docs/ha.md, "Signed forwarding").

Each refused event is journaled as a ``FaultRecorded`` under an id of its own made from the
refused content (a resend of the same refusal is a duplicate of that fault), which says why,
and the writer is answered with the refusal: the event's id stays free, and nothing moves.
The journal takes :func:`screened` through the domain
(:meth:`controller.journal.domain.Domain.screen`, :data:`controller.ledger.domain.LEDGER`), so
that it imports none of the rules it consults (docs/journal.md, "Provenance").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec

from controller.agent_signature import AGENT_SIGNATURE
from controller.events import (
    DeviceEvent,
    FaultRecorded,
    RoundVoided,
    TableStatusChanged,
    encode_event,
)
from controller.ledger.binding import late
from controller.ledger.identifiers import identifier_refusal
from controller.ledger.table_agents import agent_refusal
from controller.ledger.voids import DEVICE
from controller.provenances import copied, from_intake
from controller.text import control_character

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState

NOT_FROM_INTAKE: Final = "not-from-intake"
"""The reason of the fault that refuses a table's word from another writer."""
LATE_SIGNATURE: Final = "late-signature"
"""The reason of the fault that refuses a signed event whose window does not hold now."""
CONTROL_CHARACTER: Final = "control-character"
"""The reason of the fault that refuses an identifier or a reason carrying a control character."""


def screened(
    signed: bool,  # noqa: FBT001 - the authority as the append found it
    state: LedgerState,
    event: AnyEvent,
    origin: str | None,
    now: str | None,
) -> Refused | None:
    """The first refusal ``event`` meets (see the module docstring); None: apply it."""
    return (
        refusal(signed, event, origin)
        or live_refusal(signed, event, now)
        or agent_word_refusal(state, event)
    )


def table_word(event: AnyEvent) -> bool:
    """Whether the event is a table's own word: a device's input, a device's void, a status."""
    if isinstance(event, (DeviceEvent, TableStatusChanged)):
        return True
    return isinstance(event, RoundVoided) and event.by.startswith(DEVICE)


@dataclass(frozen=True, slots=True)
class Refused:
    """An event refused for its writer: the fault journaled instead, and why (the answer)."""

    fault: FaultRecorded
    kind: str
    reason: str


def refusal(signed: bool, event: AnyEvent, provenance: str | None) -> Refused | None:  # noqa: FBT001
    """The refusal of ``event`` from ``provenance``; None: take it.

    ``signed``: the journal's authority was signed when the append began. A journal that is
    not (a lab's, or a new file a whole journal is replayed into, its first enrollment among
    the events) takes any writer's events, as the ledger does any unsigned action there.
    """
    if not signed or from_intake(provenance) or copied(provenance) or not table_word(event):
        return None
    kind = type(event).__struct_config__.tag
    table_id = getattr(event, "table_id", "")
    writer = provenance or "a writer that did not name itself"
    reason = (
        f"{kind} for table {table_id} from {writer}: refused; on a signed journal a "
        "device's input and a table's status come only from the daemon's intake, which "
        'hears the table (docs/journal.md, "Provenance")'
    )
    return _refused(event, NOT_FROM_INTAKE, reason, f"table {table_id}" if table_id else "journal")


def live_refusal(signed: bool, event: AnyEvent, now: str | None) -> Refused | None:  # noqa: FBT001
    """The refusal a signed journal's live append gives ``event``: a control character, or late.

    A signed ``event`` whose signature's window does not hold ``now`` is refused as late.

    ``now``: the controller's clock at a live append (None: a replay or a copy, which go by the
    journaled time, and an in-process writer that gives no clock). Only on a journal whose
    authority is signed as the append finds it, like :func:`refusal`
    (controller/ledger/binding.py ``late``). At the same live append an event whose identifiers
    or reasons carry a control character is refused (``control-character``,
    controller/ledger/identifiers.py): the one check of the live clock's appends.
    """
    if not signed or now is None:
        return None
    kind = type(event).__struct_config__.tag
    if (why := identifier_refusal(event)) is not None:
        # Old journals may hold such text and replay as written: refused live only (the
        # ledger's rule, controller/ledger/identifiers.py), the id quoted escaped.
        reason = f"{kind} {event.event_id!r}: refused: {why}"
        return _refused(event, CONTROL_CHARACTER, reason, "journal")
    why = late(event, now)
    if why is None:
        return None
    reason = f"{kind} {event.event_id}: refused at {now}: {why}"
    return _refused(event, LATE_SIGNATURE, reason, "journal", salt=now)


def agent_word_refusal(state: LedgerState, event: AnyEvent) -> Refused | None:
    """The refusal of ``event`` by the ledger's rule on ``state``; None: take it."""
    reason = agent_refusal(state, event)
    if reason is None:
        return None
    content = encode_event(msgspec.structs.replace(event, at=""))
    digest = hashlib.sha256(content).hexdigest()[:16]
    table_id = str(getattr(event, "table_id", ""))
    fault = FaultRecorded(
        f"{event.event_id}#{AGENT_SIGNATURE}-{digest}",
        event.at,
        f"table {table_id}",
        AGENT_SIGNATURE,
        f"{reason}: {content.decode()[:600]}",
    )
    return Refused(fault, str(type(event).__struct_config__.tag), reason)


def _refused(event: AnyEvent, code: str, reason: str, where: str, salt: str = "") -> Refused:
    """The fault journaled instead of ``event``, under an id of its own (the event's stays free)."""
    kind = type(event).__struct_config__.tag
    content = encode_event(msgspec.structs.replace(event, at=""))
    digest = hashlib.sha256(content + salt.encode()).hexdigest()[:16]
    named = event.event_id
    if control_character(named) is not None:  # the fault's own id is one line of text
        named = named.encode("unicode_escape").decode("ascii")
    fault = FaultRecorded(
        f"{named}#{code}-{digest}",
        event.at,
        where,
        code,
        f"{reason}: {content.decode()[:400]}",
    )
    return Refused(fault, str(kind), reason)
