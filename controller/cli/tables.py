"""The tables the command line prints: column headers always, drawn for people or for pipes.

On a terminal a table is drawn by rich, its columns fitted to the width. Piped or redirected,
it is tab-separated, its header the first line and one row a line, tabs and newlines inside a
value turned into spaces, so that ``cut``, ``awk`` and ``sort`` read it as the terminal shows
it (``--json`` gives the same figures exactly, for programs).

Money and ids are never cut on a terminal (docs/operations.md, "Verify a jackpot"): a
supervisor reads an amount as a whole and copies a pay id into ``jackpotd verify-hit``, and
an amount cut to ``$1,2…`` or an id cut to ``T1/s…`` is neither. A column of figures, or one
marked ``whole``, is as wide as its widest value and never wraps; only the other columns
wrap, down to :data:`NARROWEST` characters. A terminal too narrow for that gets one block per
row instead, one ``header  value`` line per column, each whole value on one line.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import TextIO

NARROWEST: Final = 10
"""The fewest characters a column of words is wrapped to before the rows are shown as blocks."""
GAP: Final = 2
"""Spaces between a header and its value in a block."""


@dataclass(frozen=True, slots=True)
class Column:
    """A column's header, whether its values are figures (aligned right), and kept whole.

    ``whole``: never cut nor wrapped on a terminal, for what is copied into another command
    (a pay id, a table, a pool, an operator). Figures are always whole.
    """

    header: str
    figures: bool = False
    whole: bool = False

    @property
    def kept_whole(self) -> bool:
        """Whether a value is shown whole on one line (figures and ``whole`` columns)."""
        return self.figures or self.whole


def _cell(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _shown(value: str) -> str:
    """The value as a terminal shows it: a control character never reaches the terminal."""
    return "".join(char if char.isprintable() else "\N{REPLACEMENT CHARACTER}" for char in value)


def print_table(
    columns: Sequence[Column],
    rows: Iterable[Sequence[object]],
    *,
    title: str | None = None,
    file: TextIO | None = None,
) -> None:
    """Print ``rows`` under ``columns``: drawn on a terminal, tab-separated otherwise.

    ``title`` is shown above a drawn table only: a pipe gets the header and the rows alone.
    """
    stream = file or sys.stdout
    if not stream.isatty():
        print("\t".join(column.header for column in columns), file=stream)
        for row in rows:
            print("\t".join(_cell(value) for value in row), file=stream)
        return
    columns = [replace(column, header=_shown(column.header)) for column in columns]
    cells = [[_shown(_cell(value)) for value in row] for row in rows]
    console = Console(file=stream, highlight=False)
    widths = fitted(columns, cells, console.width)
    if widths is None:
        print_blocks(columns, cells, width=console.width, title=title, file=stream)
        return
    table = Table(title=title, title_justify="left", header_style="bold")
    for column, width in zip(columns, widths, strict=True):
        table.add_column(
            column.header,
            justify="right" if column.figures else "left",
            width=width,  # a whole column's is its widest value's: it never wraps
            overflow="fold",
        )
    for row in cells:
        # Text, not markup: a value such as "[red]" is shown as it is.
        table.add_row(*(Text(value) for value in row))
    console.print(table)


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def fitted(
    columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int
) -> list[int] | None:
    """Each column's width in a drawn table ``width`` wide, or None if it cannot be drawn.

    A whole column is as wide as its widest value (its header wraps between words); the
    others as wide as theirs if all fits, else the widest of them narrowed first, none below
    :data:`NARROWEST` (or its widest value, if less). Rich's box adds three characters a
    column and one more: a space either side of each value, and the rules between and around.
    """
    natural = [
        max(
            _longest_word(column.header),
            *(cell_len(row[index]) for row in cells),
            1,
        )
        for index, column in enumerate(columns)
    ]
    room = width - (3 * len(columns) + 1)
    floors = [
        size if column.kept_whole else min(size, NARROWEST)
        for column, size in zip(columns, natural, strict=True)
    ]
    if sum(floors) > room:
        return None
    widths = list(natural)
    excess = sum(widths) - room
    while excess > 0:
        # The widest column that may still give: wrapping it costs the fewest extra lines.
        narrowed = max(
            (index for index, size in enumerate(widths) if size > floors[index]),
            key=lambda index: widths[index],
        )
        widths[narrowed] -= 1
        excess -= 1
    return widths


def print_blocks(
    columns: Sequence[Column],
    cells: Sequence[Sequence[str]],
    *,
    width: int,
    title: str | None,
    file: TextIO,
) -> None:
    """Each row as a block of ``header  value`` lines, a blank line between blocks.

    A whole value stays on its line even wider than the terminal (which then folds it on
    screen, where it still copies whole); another value wraps under itself.
    """
    key_width = max(cell_len(column.header) for column in columns)
    indent = " " * (key_width + GAP)
    room = max(width - len(indent), NARROWEST)
    if title:
        print(title, file=file)
    for number, row in enumerate(cells):
        if number or title:
            print(file=file)
        for column, value in zip(columns, row, strict=True):
            key = column.header + " " * (key_width + GAP - cell_len(column.header))
            if column.kept_whole or cell_len(value) <= room:
                print(f"{key}{value}".rstrip(), file=file)
                continue
            lines = textwrap.wrap(value, room, break_on_hyphens=False) or [""]
            print(key + lines[0], file=file)
            for line in lines[1:]:
                print(indent + line, file=file)
