"""``jackpotd verify --report FILE``: a saved report is what the journal makes of its rows.

It checks the JSON of ``report returns`` and ``report meters``.

A report's JSON names the journal head it was made from (the last row's number and hash) and
everything else it was made with (its period as exact times, its threshold). The check finds
that row in the journal, with that hash, and makes the report again from the rows up to it:
the saved report must be the same, figure for figure. So a report handed to a regulator can be
held to the journal by anyone who has both, and a report edited after it was made (a figure
changed, a group left out), one made from another journal, or a journal rewritten below the
report's head, each fails, naming what differs. (docs/operations.md, "Actual against
theoretical return".)
"""

from __future__ import annotations

import json
from datetime import datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.cli import report_meters, report_returns
from controller.cli.common import CommandError

if TYPE_CHECKING:
    from pathlib import Path

KINDS = (report_returns.KIND, report_meters.KIND)
"""The reports whose JSON can be checked."""
SHOWN = 5
"""How many differences a failed check names."""


def read_report(path: Path) -> dict[str, Any]:
    """A saved report, or a one-line refusal naming the file and why."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror or error}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CommandError(f"{path}: not a report's JSON ({error})") from error
    if not isinstance(document, dict) or document.get("report") not in KINDS:
        kinds = " or ".join(f'"{kind}"' for kind in KINDS)
        raise CommandError(f'{path}: not a report this command checks (no "report": {kinds})')
    return document


def _moment(value: object, path: Path) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError as error:
        raise CommandError(f"{path}: period: {error}") from error


def differences(saved: Any, remade: Any, where: str = "") -> list[str]:  # noqa: ANN401
    """Where two JSON values differ, as ``path: saved X, journal Y``."""
    if isinstance(saved, dict) and isinstance(remade, dict):
        found: list[str] = []
        for key in sorted(set(saved) | set(remade)):
            if key not in remade:
                found.append(f"{where}{key}: in the report, not in the journal's")
            elif key not in saved:
                found.append(f"{where}{key}: missing from the report")
            else:
                found += differences(saved[key], remade[key], f"{where}{key}.")
        return found
    if isinstance(saved, list) and isinstance(remade, list):
        if len(saved) != len(remade):
            return [f"{where.rstrip('.')}: {len(saved)} entries, the journal's {len(remade)}"]
        return [
            line
            for index, (one, other) in enumerate(zip(saved, remade, strict=True))
            for line in differences(one, other, f"{where}{index}.")
        ]
    if saved != remade:
        return [f"{where.rstrip('.')}: the report says {saved!r}, the journal {remade!r}"]
    return []


def check_report(path: Path, rows: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the saved report at ``path`` against ``rows`` (in journal order)."""
    saved = read_report(path)
    head = saved.get("journal_head")
    if not isinstance(head, dict) or not isinstance(head.get("seq"), int):
        return ["the report names no journal head"]
    upto = [row for row in rows if int(row["seq"]) <= head["seq"]]
    if not upto or int(upto[-1]["seq"]) != head["seq"]:
        return [f"the journal has no row {head['seq']}: the report was not made from it"]
    if upto[-1]["hash"] != head.get("hash"):
        problem = (
            f"row {head['seq']} of the journal has hash {upto[-1]['hash']}, the report's head "
            f"{head.get('hash')}: made from another journal, or this one was rewritten"
        )
        return [problem]
    period = saved.get("period")
    if not isinstance(period, dict):
        period = {}
    start, end = _moment(period.get("start"), path), _moment(period.get("end"), path)
    if saved["report"] == report_meters.KIND:
        remade = report_meters.meters_document(upto, start, end)
    else:
        try:
            deviation = Fraction(str(saved.get("deviation_points")))
        except (ValueError, ZeroDivisionError) as error:
            raise CommandError(f"{path}: deviation_points: {error}") from error
        remade = report_returns.returns_document(upto, start, end, deviation)
    # The words the operator typed are kept as typed; the exact times they stood for are checked.
    kept = {key: value for key, value in saved.items() if key not in {"from", "to"}}
    found = differences(kept, remade)
    if len(found) > SHOWN:
        found = [*found[:SHOWN], f"and {len(found) - SHOWN} more differences"]
    return found
