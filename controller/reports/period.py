"""A report's period: a run of journal rows in journal order, chosen by the rows' times.

Times (``at``) come from the controller's wall clock, which can step (docs/faults.md, "Clock
steps"), so they are not always in order. The times only choose where the run starts and ends:
the period opens at the first row dated ``start`` or later, and closes before the first row
dated after ``end``. Every row in between belongs to it whatever its time says, and no row
belongs to two periods: consecutive reports (one gaming day after another) cover every row
exactly once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


def row_time(row: dict[str, Any]) -> datetime:
    """When the row says it was journaled."""
    return datetime.fromisoformat(row["at"])


def span(
    rows: list[dict[str, Any]], start: datetime | None, end: datetime | None
) -> tuple[int, int]:
    """Where the period lies in ``rows`` (in journal order): ``rows[begin:stop]``.

    It begins at the first row dated ``start`` or later and stops before the first row dated
    after ``end``: a row's place, not its time, decides the period it is in.
    """
    stop = next(
        (i for i, row in enumerate(rows) if end is not None and row_time(row) > end), len(rows)
    )
    begin = next((i for i, row in enumerate(rows) if start is None or row_time(row) >= start), stop)
    return min(begin, stop), stop
