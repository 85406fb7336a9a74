"""What the reports under ``jackpotd report`` share: their period's options and the rows read.

A report under ``report`` (``report returns``, ``report meters``) takes ``--from`` and ``--to``
after its own word, or before it as ``report``'s own; either way a bare date is a gaming day
(controller/cli/times.py) and the period is a run of rows (controller/reports/period.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.cli.common import CommandError, add_report_db, open_reader
from controller.cli.times import gaming_day, local_time, moment

if TYPE_CHECKING:
    import argparse
    from datetime import datetime


@dataclass(frozen=True, slots=True)
class Period:
    """The period as typed and the exact times it stands for (None: the journal's end)."""

    since: str | None
    until: str | None
    start: datetime | None
    end: datetime | None

    def words(self) -> str:
        """``from ... to ...`` as a report's first line says it."""
        start = local_time(self.start.isoformat()) if self.start is not None else "the start"
        end = local_time(self.end.isoformat()) if self.end is not None else "now"
        return f"from {start} to {end}"


def add_period(parser: argparse.ArgumentParser) -> None:
    """A report's ``--db``, ``--config``, ``--json``, ``--from`` and ``--to``."""
    add_report_db(parser)
    parser.add_argument(
        "--from", dest="period_from", metavar="WHEN", help="as for report: a time or a gaming day"
    )
    parser.add_argument(
        "--to", dest="period_to", metavar="WHEN", help="as for report: a time or a gaming day"
    )


def period_of(args: argparse.Namespace) -> Period:
    """The period the options give; ``--from`` after ``--to`` is refused in one line."""
    day = gaming_day(args)
    # Given before the report's word (``report --from X returns``), they are report's own.
    since = args.period_from or getattr(args, "start", None)
    until = args.period_to or getattr(args, "end", None)
    start = moment(since, option="--from", day=day)
    end = moment(until, option="--to", end=True, day=day)
    if start is not None and end is not None and start > end:
        raise CommandError(f"--from {since} is after --to {until}")
    return Period(since, until, start, end)


def journal_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every row of the journal the options name, in journal order."""
    with open_reader(args) as journal:
        return sorted(journal.rows(), key=lambda row: int(row["seq"]))


def document_of(
    kind: str,
    rows: list[dict[str, Any]],
    bounds: tuple[int, int],
    start: datetime | None,
    end: datetime | None,
) -> dict[str, Any]:
    """What every report's JSON opens with: its kind, its period, its journal head and rows.

    ``bounds`` are the period's rows as list indexes (controller/reports/period.py ``span``).
    """
    covered = rows[bounds[0] : bounds[1]]
    first, last = (covered[0]["seq"], covered[-1]["seq"]) if covered else (None, None)
    return {
        "report": kind,
        "period": {
            "start": None if start is None else start.isoformat(),
            "end": None if end is None else end.isoformat(),
        },
        "journal_head": head_of(rows),
        "rows": {"first_seq": first, "last_seq": last},
    }


def print_opening(title: str, report: dict[str, Any], period: Period) -> None:
    """A report's first lines: its title and period, the rows covered, the head it was made from."""
    first, last = report["rows"]["first_seq"], report["rows"]["last_seq"]
    print(f"{title} {period.words()}")
    print(
        "journal rows: none in this period" if first is None else f"journal rows {first} to {last}"
    )
    head = report["journal_head"]
    if head is not None:
        print(f"made from the journal's head: row {head['seq']}, hash {head['hash']}")


def head_of(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The journal head a report is made from: its last row's number and hash."""
    return {"seq": rows[-1]["seq"], "hash": rows[-1]["hash"]} if rows else None
