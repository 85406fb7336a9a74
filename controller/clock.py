"""The wall-clock time as every event's ``at`` carries it: UTC, ISO 8601, milliseconds, ``Z``.

One definition, so that the sequencer, the drivers and the CLI date events alike and the
journal's ``at`` column sorts as text.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_iso(moment: datetime) -> str:
    """``moment`` (an aware datetime) in the events' format."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> str:
    """The current time in the events' format."""
    return utc_iso(datetime.now(UTC))
