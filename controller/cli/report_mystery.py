"""``jackpotd report`` lists each mystery level's draws: commitments, and the triggers revealed.

docs/operations.md, "Mystery levels in the report"; the draws and their checks are
controller/reports/mystery_draws.py's. For each draw open during the period: its row and time,
the level's floor and ceiling and the commitment; once revealed, the trigger and nonce, the row
of the contribution that hit, what the level paid and whether the reveal checks. A draw still
sealed shows its commitment only. A journal without a mystery level prints nothing here and
adds nothing to the JSON, so its report reads as it always did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.cli.tables import Column, print_table
from controller.cli.times import local_time
from controller.money import format_cents
from controller.reports.mystery_draws import levels_document, mystery_draws

if TYPE_CHECKING:
    from collections.abc import Sequence

SEALED = "not yet: sealed"
"""What the draws' table says of a draw whose trigger is not revealed."""
CHECKS = "checks"
"""What the reveals' table says of a reveal that checks (docs/rules.md § 10)."""

DRAW_COLUMNS = (
    Column("level", whole=True), Column("draw", figures=True), Column("row", figures=True),
    Column("at"), Column("floor", figures=True), Column("must hit by", figures=True),
    Column("commitment", whole=True), Column("revealed"),
)  # fmt: skip
REVEAL_COLUMNS = (
    Column("level", whole=True), Column("draw", figures=True), Column("row", figures=True),
    Column("at"), Column("trigger", figures=True), Column("nonce", whole=True),
    Column("hit at row", figures=True), Column("table", whole=True), Column("seat"),
    Column("paid", figures=True), Column("reveal"),
)  # fmt: skip


def mystery_levels(rows: Sequence[dict[str, Any]], begin: int, stop: int) -> list[dict[str, Any]]:
    """The period's mystery levels as the JSON report gives them (none: no mystery level)."""
    return levels_document(mystery_draws(rows, begin, stop))


def draw_rows(levels: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    """Every draw as the rows of :data:`DRAW_COLUMNS`."""
    return [
        (
            level["level"], draw["draw"], draw["seq"], local_time(draw["at"]),
            format_cents(draw["floor_cents"]), format_cents(draw["ceiling_cents"]),
            draw["commitment"],
            SEALED if draw["revealed"] is None else f"at row {draw['revealed']['seq']}",
        )
        for level in levels
        for draw in level["draws"]
    ]  # fmt: skip


def reveal_rows(levels: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    """Every reveal as the rows of :data:`REVEAL_COLUMNS`: a sealed draw has none."""
    shown: list[tuple[object, ...]] = []
    for level in levels:
        for draw in level["draws"]:
            found = draw["revealed"]
            if found is None:
                continue
            hit = found["hit"] or {"seq": "", "table": "", "seat": ""}
            paid = found["paid_cents"]
            shown.append((
                level["level"], draw["draw"], found["seq"], local_time(found["at"]),
                format_cents(found["trigger_cents"]), found["nonce"], hit["seq"], hit["table"],
                hit["seat"], "" if paid is None else format_cents(paid),
                CHECKS if found["checks"] else f"DOES NOT CHECK: {found['problem']}",
            ))  # fmt: skip
    return shown


def unchecked(levels: list[dict[str, Any]]) -> int:
    """How many of the period's reveals do not check."""
    return sum(
        draw["revealed"] is not None and not draw["revealed"]["checks"]
        for level in levels
        for draw in level["draws"]
    )


def print_mystery(levels: list[dict[str, Any]]) -> None:
    """The draws, then the reveals, as tables; nothing for a journal without a mystery level."""
    if not levels:
        return
    # Each heading fits 80 columns, as the provenance's do: a printout reads it whole.
    print("Mystery levels (docs/rules.md § 10): each draw open in the period, its commitment;")
    print("each trigger revealed, checked against its commitment, range and contributions:")
    print_table(DRAW_COLUMNS, draw_rows(levels), title="Draws")
    reveals = reveal_rows(levels)
    if not reveals:
        print("reveals: none in this period")
        return
    print_table(REVEAL_COLUMNS, reveals, title="Reveals")
