"""Where each journaled event came from, and the writers a signed journal takes a table's word from.

Every append says where its events came from (docs/journal.md, "Provenance"): one of the
daemon's intakes (``mqtt client=... topic=...``, ``serial port=...``, ``agent table=...
boot=...``, ``simulator``, ``daemon ...``), an operator's command (``cli <command>``), ``jackpotd
apply`` (``apply``) or ``journal copy`` (the source's, or ``copy``). An append that names none
takes its journal's ``writer`` (the command or the service that opened it); one still unnamed
(an in-process caller that does not say) is never taken for the intake. The provenance is
written beside the row and is not part of what the hash chain covers, so old rows and chains
are as they were; archive segments carry it on each row's line (controller/journal/segments.py).

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
from controller.ledger.binding import late
from controller.ledger.identifiers import identifier_refusal
from controller.ledger.voids import DEVICE
from controller.ports import COPY, REJECTED, from_intake
from controller.text import control_character

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from controller.events import AnyEvent
    from controller.journal.row_checks import VerifyReport
    from controller.journal.rows import Row
    from controller.ports import Provenances, Receipt

NOT_FROM_INTAKE: Final = "not-from-intake"
"""The reason of the fault that refuses a table's word from another writer."""
LATE_SIGNATURE: Final = "late-signature"
"""The reason of the fault that refuses a signed event whose window does not hold now."""
CONTROL_CHARACTER: Final = "control-character"
"""The reason of the fault that refuses an identifier or a reason carrying a control character."""


PROVENANCE: Final = "provenance"
"""A row's provenance among its values where it is carried on (archive segments, copies)."""


def with_provenance(
    rows: Iterable[Row], provenances: Iterable[tuple[int, str | None]]
) -> Iterator[Row]:
    """Each row with its provenance among its values (``provenances``: by ``seq``, in order).

    Both are read in order in one snapshot of the journal; a row the provenances do not reach
    (none recorded) carries None.
    """
    known = iter(provenances)
    found: tuple[int, str | None] | None = next(known, None)
    for row in rows:
        seq = int(row.values["seq"])
        while found is not None and found[0] < seq:
            found = next(known, None)
        provenance = found[1] if found is not None and found[0] == seq else None
        yield replace(row, values={**row.values, PROVENANCE: provenance})


UNRECORDED: Final = "unrecorded"
"""Who wrote a row that records no provenance (journaled before it was, schema 14)."""


def writer_of(provenance: str | None) -> str:
    """Who a provenance says journaled a row, as verify counts them.

    The intake's kind (``mqtt``, ``serial``, ``agent``, ``daemon``...), ``cli <command>``,
    ``apply``, ``copy``; :data:`UNRECORDED` for a row that records none.
    """
    if provenance is None:
        return UNRECORDED
    if provenance.startswith("cli "):
        return provenance
    return provenance.partition(" ")[0]


def writers(signed: bool, row: Row, report: VerifyReport) -> None:  # noqa: FBT001 - as found
    """Count the row's writer; a table's word on a signed journal from another is a problem.

    ``signed``: whether the journal's authority was signed as the append found it.

    The append never journals one (:func:`refusal`): its provenance was edited in the file, or
    the row was written into it. The provenance is outside the hash chain, so this says what
    the file claims, not what happened; a row that records none is counted, not judged.
    """
    provenance = row.values.get(PROVENANCE)
    writer = writer_of(provenance)
    report.writers[writer] = report.writers.get(writer, 0) + 1
    event = row.event
    if event is None or provenance is None or not signed:
        return
    if not (from_intake(provenance) or copied(provenance)) and table_word(event):
        kind = type(event).__struct_config__.tag
        report.problem(
            f"row {row.values['seq']}: {kind} for table {getattr(event, 'table_id', '')} says "
            f"it came from {provenance}: a signed journal takes a table's word only from the "
            "daemon's intake (its provenance was edited, or the row written into the file)"
        )


def each_provenance(events: Sequence[AnyEvent], provenance: Provenances) -> list[str | None]:
    """One provenance per event: the one given for all, or the one given for each."""
    if provenance is None or isinstance(provenance, str):
        return [provenance] * len(events)
    if len(provenance) != len(events):
        raise ValueError(f"{len(provenance)} provenances for {len(events)} events")
    return list(provenance)


def copied(provenance: str | None) -> bool:
    """Whether ``journal copy`` appends the row: a verified journal's row, replayed as it was.

    A copy carries each row's provenance; a row its source recorded none for (journaled before
    provenance was) is named :data:`~controller.ports.COPY`, and is taken as the source took it.
    """
    return provenance == COPY


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
