"""Times at the command line: read as ISO dates or times, shown in local time with the zone.

The journal dates its rows in UTC (``2026-12-01T19:03:22.000Z``) and ``--json`` keeps that. A
table shows the local time of the machine the command runs on, with its zone
(``2026-12-01 14:03:22 EST``), as the floor reads a clock. A date or time given to an option is
UTC unless it carries an offset (``2026-12-01T09:00-05:00``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from controller.cli.common import CommandError


def local_time(at: str) -> str:
    """A journal time (ISO, UTC) in local time with the zone's abbreviation."""
    try:
        moment = datetime.fromisoformat(at)
    except ValueError:
        return at  # shown as the journal has it rather than not at all
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def moment(value: str | None, *, option: str, end: bool = False) -> datetime | None:
    """An option's ISO date or time (UTC unless it says); a bare date ``end`` covers its day."""
    if value is None:
        return None
    try:
        found = datetime.fromisoformat(value)
    except ValueError as error:
        raise CommandError(
            f"{option}: {value!r} is not an ISO date or time like 2026-11-29T18:00Z"
        ) from error
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    if end and len(value) == 10:  # a bare date covers the whole day
        found = found.replace(hour=23, minute=59, second=59, microsecond=999_999)
    return found
