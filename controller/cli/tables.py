"""The tables the command line prints: column headers always, drawn for people or for pipes.

On a terminal a table is drawn by rich, its columns fitted to the width. Piped or redirected,
it is tab-separated, its header the first line and one row a line, tabs and newlines inside a
value turned into spaces, so that ``cut``, ``awk`` and ``sort`` read it as the terminal shows
it (``--json`` gives the same figures exactly, for programs).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import TextIO


@dataclass(frozen=True, slots=True)
class Column:
    """A column's header, and whether its values are figures (aligned right)."""

    header: str
    figures: bool = False


def _cell(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


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
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in columns:
        table.add_column(column.header, justify="right" if column.figures else "left")
    for row in rows:
        # Text, not markup: a value such as "[red]" is shown as it is.
        table.add_row(*(Text(_cell(value)) for value in row))
    Console(file=stream, highlight=False).print(table)
