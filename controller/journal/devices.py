"""The highest event ``seq`` journaled from each device: where gap detection starts again.

A device numbers its events 1, 2, 3... (docs/faults.md, "Lost events"). The controller
watches the numbers as they arrive (:mod:`controller.runtime.device_sequences`), and after a
restart it must know where each device had got to without reading the whole journal again.
It is bookkeeping for finding lost events, not money: nothing the ledger decides depends on it.

The table ``device_seqs`` keeps, per table and device, the highest ``seq`` of a journaled
event (applied or refused) **up to a journal row**, the ``meta`` value :data:`MARK` (schema
15 on); the rows after it give the rest. So the table is not written with every commit, which
cost a page of the WAL each time (docs/benchmarks.md, "Writes per event"), but every
:data:`FLUSH_ROWS` rows or so, in the transaction of the rows that reach it, and with each
checkpoint's snapshot. Whoever reads the highs (the daemon, another
process) takes the table and the rows after the mark: at most :data:`FLUSH_ROWS` or so rows,
the same answer as a table written with every commit.

The highs only rise (``max``), so reading a row twice is harmless: a mark that is missing,
unreadable or beyond the journal's last row (an edited file) is read as 0, and the whole
journal gives the highs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from controller.journal.identity import device_origin

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.events import AnyEvent

Highs = dict[tuple[str, str], int]
"""The highest ``seq`` of each (table, device)."""

MARK: Final = "device_seqs_through"
"""The ``meta`` key of the last journal row whose devices ``device_seqs`` holds."""
FLUSH_ROWS: Final = 1000
"""Rows past the mark after which an append writes the table again (and moves the mark)."""


class DeviceHighs:
    """The highest ``seq`` per device among some events."""

    def __init__(self) -> None:
        self.highs: Highs = {}

    def note(self, event: AnyEvent) -> None:
        """An event written in this transaction."""
        origin = device_origin(event)
        if origin is not None:
            table_id, device, seq = origin
            key = (table_id, device)
            if seq > self.highs.get(key, -1):
                self.highs[key] = seq


def merged(*all_highs: Mapping[tuple[str, str], int]) -> Highs:
    """The highest of each device's marks."""
    out: Highs = {}
    for highs in all_highs:
        for key, high in highs.items():
            if high > out.get(key, -1):
                out[key] = high
    return out


@dataclass(frozen=True, slots=True)
class DeviceMarks:
    """``device_seqs`` as written up to row ``through``, and the highs of the rows after it."""

    through: int
    pending: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def after(self, batch: DeviceHighs, tail: int, *, flush: bool) -> tuple[DeviceMarks, Highs]:
        """The marks once a batch ending at row ``tail`` commits, and what it must write.

        The table is written (the second value not empty) when ``flush`` says so or the rows
        past the mark reach :data:`FLUSH_ROWS`; otherwise the batch's highs wait in memory.
        """
        highs = merged(self.pending, batch.highs)
        if flush or tail - self.through >= FLUSH_ROWS:
            return DeviceMarks(tail), highs
        return DeviceMarks(self.through, highs), {}
