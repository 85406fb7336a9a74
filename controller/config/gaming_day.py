"""The gaming day: when a site's business day begins, in its own time zone.

Regulators count a day's drop and win over the **gaming day** (docs/operations.md, "7. Reconcile
the meters"): from ``[controller] gaming_day_start`` ("HH:MM") in ``[controller] time_zone``
(an IANA name, such as ``America/New_York``) to the same time on the next calendar day. The
journal dates its rows in UTC; a date given to ``jackpotd report`` or ``hits`` is the gaming
day of that date, and its bounds in UTC move with daylight saving time (a day of 23 or 25
hours). The defaults, 00:00 in UTC, are the calendar day in UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_HH_MM: Final = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
_MICROSECOND: Final = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class GamingDay:
    """When each gaming day begins: a local time of day in a time zone."""

    start: time = time(0, 0)
    time_zone: str = "UTC"

    def bounds(self, day: date) -> tuple[datetime, datetime]:
        """The gaming day of ``day``: its first and last microsecond, in UTC."""
        zone = ZoneInfo(self.time_zone)
        begins = datetime.combine(day, self.start, tzinfo=zone)
        after = datetime.combine(day + timedelta(days=1), self.start, tzinfo=zone)
        return begins.astimezone(UTC), after.astimezone(UTC) - _MICROSECOND


def start_of(text: str) -> time:
    """``"HH:MM"`` as a time of day; ValueError saying why not."""
    found = _HH_MM.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} is not a time of day as HH:MM (00:00 to 23:59), e.g. 06:00")
    return time(int(found.group(1)), int(found.group(2)))


def zone_of(name: str) -> str:
    """An IANA time zone's name, checked against the system's zone database; ValueError if not."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(
            f"{name!r} is not a time zone of the system's database (an IANA name such as "
            "America/New_York or Europe/Paris)"
        ) from error
    return name
