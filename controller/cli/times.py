"""Times at the command line: read as ISO dates or times, shown in local time with the zone.

The journal dates its rows in UTC (``2026-12-01T19:03:22.000Z``) and ``--json`` keeps that. A
table shows the local time of the machine the command runs on, with its zone
(``2026-12-01 14:03:22 EST``), as the floor reads a clock. A time given to an option is UTC
unless it carries an offset (``2026-12-01T09:00-05:00``); a bare date is that **gaming day**,
from ``[controller] gaming_day_start`` in ``[controller] time_zone`` of the configuration
(``--config``, else the installed one; controller/config/gaming_day.py), the UTC day if none.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import INSTALLED_CONFIG, CommandError
from controller.config.gaming_day import GamingDay
from controller.config.load import load_config

if TYPE_CHECKING:
    import argparse


def local_time(at: str) -> str:
    """A journal time (ISO, UTC) in local time with the zone's abbreviation."""
    try:
        moment = datetime.fromisoformat(at)
    except ValueError:
        return at  # shown as the journal has it rather than not at all
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def gaming_day(args: argparse.Namespace) -> GamingDay:
    """The gaming day of the configuration a command names, or of the installed one."""
    config: Path | list[Path] | None = getattr(args, "config", None)
    if isinstance(config, list):
        config = config[0] if config else None
    if config is None and INSTALLED_CONFIG.exists():
        config = INSTALLED_CONFIG
    return GamingDay() if config is None else load_config(Path(config)).controller.gaming_day


def moment(
    value: str | None, *, option: str, end: bool = False, day: GamingDay | None = None
) -> datetime | None:
    """An option's ISO time (UTC unless it says), or a bare date's gaming day.

    A bare date gives the start of that gaming day (``end``: its last microsecond), of ``day``
    (the UTC day by default).
    """
    if value is None:
        return None
    try:
        found = datetime.fromisoformat(value)
    except ValueError as error:
        raise CommandError(
            f"{option}: {value!r} is not an ISO date or time like 2026-11-29T18:00Z"
        ) from error
    if len(value) == len("2026-12-01"):  # a bare date: the gaming day
        first, last = (day or GamingDay()).bounds(date.fromisoformat(value))
        return last if end else first
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    return found
