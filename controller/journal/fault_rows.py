"""The faults the journal holds that wait for a supervisor's acknowledgement (docs/faults.md).

The ledger keeps of the faults only its register (controller/ledger/fault_register.py): how
many, the newest and the point acknowledged through. The faults themselves are the journal's
``fault`` rows; those after the row of the fault acknowledged through wait (every one, on a
journal whose register is not open yet). :func:`waiting_faults` reads them from rows in their
canonical form, as every journal reader gives them, for ``jackpotd faults`` and the console;
a reader's ``rows(after)`` gives only the rows after one already read (by the backend's index
on them), so that the console's list is kept up to date without reading the journal again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.events import FaultRecorded, decode_event

if TYPE_CHECKING:
    from collections.abc import Iterable

KIND = "fault"


@dataclass(frozen=True, slots=True)
class WaitingFault:
    """One fault row: where it is, when, from which source, and why."""

    seq: int
    event_id: str
    at: str
    source: str
    reason: str
    detail: str

    def document(self) -> dict[str, Any]:
        """As ``--json`` and the console give it."""
        return {
            "seq": self.seq, "event_id": self.event_id, "at": self.at, "source": self.source,
            "reason": self.reason, "detail": self.detail,
        }  # fmt: skip


def fault_rows(rows: Iterable[dict[str, Any]]) -> list[WaitingFault]:
    """Every fault among ``rows`` (canonical columns), in journal order."""
    found: list[WaitingFault] = []
    for row in rows:
        if row.get("kind") != KIND:
            continue
        event = decode_event(str(row["event"]))
        if isinstance(event, FaultRecorded):
            at, source, reason = event.at, event.source, event.reason
            found.append(
                WaitingFault(int(row["seq"]), event.event_id, at, source, reason, event.detail)
            )
    found.sort(key=lambda fault: fault.seq)
    return found


def waiting_faults(faults: list[WaitingFault], through: str | None) -> list[WaitingFault]:
    """The faults after the one acknowledged through: every fault while none was acknowledged.

    ``through``: the id of the fault the register was acknowledged through (None: no register).
    """
    if through is None:
        return faults
    for index, fault in enumerate(faults):
        if fault.event_id == through:
            return faults[index + 1 :]
    return faults
