"""Where each journaled event came from, and the writers a signed journal takes a table's word from.

Every append says where its events came from (docs/journal.md, "Provenance"): one of the
daemon's intakes (``mqtt client=... topic=...``, ``serial port=...``, ``agent table=...
boot=...``, ``simulator``, ``daemon ...``), an operator's command (``cli <command>``) or
``jackpotd apply`` (``apply``). It is written beside the row and is not part of what the hash
chain covers, so old rows and chains are as they were.

A device's input (bet-sensed, bets-locked, card-dealt, deal-complete, a device's void) and a
table's status are the table's word: on a journal whose authority is signed (as the append
finds it), only the daemon's intake may journal them. From any other writer the event is not
applied: a ``FaultRecorded`` row says which kind was refused, from whom and why, and the writer
is answered with a refusal (NY 9 NYCRR 5321.18(c): a table's progressive is unplayable while
the controller does not hear the table, and only the controller decides that).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

import msgspec

from controller.events import (
    DeviceEvent,
    FaultRecorded,
    RoundVoided,
    TableStatusChanged,
    encode_event,
)
from controller.ledger.voids import DEVICE
from controller.ports import REJECTED, from_intake

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import AnyEvent
    from controller.ports import Provenances, Receipt

NOT_FROM_INTAKE: Final = "not-from-intake"
"""The reason of the fault that refuses a table's word from another writer."""


def each_provenance(events: Sequence[AnyEvent], provenance: Provenances) -> list[str | None]:
    """One provenance per event: the one given for all, or the one given for each."""
    if provenance is None or isinstance(provenance, str):
        return [provenance] * len(events)
    if len(provenance) != len(events):
        raise ValueError(f"{len(provenance)} provenances for {len(events)} events")
    return list(provenance)


def table_word(event: AnyEvent) -> bool:
    """Whether the event is a table's own word: a device's input, a device's void, a status."""
    if isinstance(event, (DeviceEvent, TableStatusChanged)):
        return True
    return isinstance(event, RoundVoided) and event.by.startswith(DEVICE)


@dataclass(frozen=True, slots=True)
class Refused:
    """An event refused for its writer: the fault journaled instead, and the answer."""

    fault: FaultRecorded
    kind: str
    reason: str

    def receipt(self, journaled: Receipt) -> Receipt:
        """The writer's answer: the event refused, at the fault's row."""
        return replace(journaled, outcome=REJECTED, reason=self.reason, effects=())


def refusal(signed: bool, event: AnyEvent, provenance: str | None) -> Refused | None:  # noqa: FBT001
    """The refusal of ``event`` from ``provenance``; None: take it.

    ``signed``: the journal's authority was signed when the append began. A journal that is
    not (a lab's, or a new file a whole journal is replayed into, its first enrollment among
    the events) takes any writer's events, as the ledger does any unsigned action there.
    """
    if not signed or from_intake(provenance) or not table_word(event):
        return None
    kind = type(event).__struct_config__.tag
    table_id = getattr(event, "table_id", "")
    reason = (
        f"{kind} for table {table_id} from {provenance}: refused; on a signed journal a "
        "device's input and a table's status come only from the daemon's intake, which "
        'hears the table (docs/journal.md, "Provenance")'
    )
    content = encode_event(msgspec.structs.replace(event, at=""))
    digest = hashlib.sha256(content).hexdigest()[:16]
    fault = FaultRecorded(
        f"{event.event_id}#{NOT_FROM_INTAKE}-{digest}",
        event.at,
        f"table {table_id}" if table_id else "journal",
        NOT_FROM_INTAKE,
        f"{reason}: {content.decode()[:400]}",
    )
    return Refused(fault, str(kind), reason)
