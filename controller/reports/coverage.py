"""Which journal rows a report's period covers, and what the controller's clock did among them.

A period is a run of journal rows in journal order (controller/reports/period.py); the
rows' times come from a wall clock that can step (docs/faults.md, "Clock steps"), so the
report names the clock steps journaled in the period and how many rows are dated earlier
than the row before them, so that a step is never silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from controller.events import FaultRecorded, decode_event
from controller.journal import JournalError
from controller.journal.checkpoints import KIND as CHECKPOINT_KIND
from controller.reports.period import row_time, span
from controller.runtime.clock_watch import BACKWARD_TOLERANCE_S, CLOCK_STEP, FAULT_SOURCE

if TYPE_CHECKING:
    from datetime import datetime


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which journal rows a period covers, and what the clock did among them."""

    first_seq: int | None
    last_seq: int | None
    clock_steps: list[tuple[int, str, str]]
    """Each clock-step fault journaled in the period: its row, time and detail."""
    dated_back: int
    """Rows dated more than 1 ms (the clock watch's tolerance) earlier than the row before
    them, a checkpoint aside (a clock step, journaled or not)."""

    def document(self) -> dict[str, Any]:
        """The coverage as the JSON report gives it."""
        return {
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "clock_steps": [f"row {seq} at {at}: {detail}" for seq, at, detail in self.clock_steps],
            "dated_back": self.dated_back,
        }


def coverage(rows: list[dict[str, Any]], start: datetime | None, end: datetime | None) -> Coverage:
    """The rows of the period (see :func:`span`) and the clock steps among them."""
    rows = sorted(rows, key=lambda row: int(row["seq"]))
    begin, stop = span(rows, start, end)
    inside = rows[begin:stop]
    steps = []
    for row in inside:
        if row["kind"] != "fault":
            continue
        try:
            event = decode_event(row["event"])
        except msgspec.MsgspecError as error:
            raise JournalError(f"row {row['seq']}: {error}") from error
        if isinstance(event, FaultRecorded) and (event.source, event.reason) == (
            FAULT_SOURCE,
            CLOCK_STEP,
        ):
            steps.append((int(row["seq"]), str(row["at"]), event.detail))
    back, before = 0, None
    for row in inside:
        at = row_time(row)
        if before is not None and (before - at).total_seconds() > BACKWARD_TOLERANCE_S:
            back += 1
        # A checkpoint is dated when it is signed, after the row it covers, so the rows dated
        # before it may be journaled after it: the next row is compared with the row before.
        if row["kind"] != CHECKPOINT_KIND:
            before = at
    first, last = (inside[0]["seq"], inside[-1]["seq"]) if inside else (None, None)
    return Coverage(first, last, steps, back)
