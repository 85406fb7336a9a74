"""Progress of long work (``verify``, ``analyze``) on stderr, never on stdout.

On a terminal, a rich progress bar per step, with the count, the share done and the time it
has taken. Elsewhere (a pipe, a file, a cron job's mail) nothing while it runs: the command's
result says the rest. The bar is redrawn when the work reports, never by a thread of its own
(the controller's one thread is the journal's commit: docs/architecture.md), and only when the
share done has moved by a percent, so that a slow terminal or a log of it stays small.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TextIO


def bar(stream: TextIO) -> Progress:
    """A progress display on ``stream`` (a terminal), redrawn only when told."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=stream, highlight=False),
        auto_refresh=False,
    )


@contextmanager
def counting(
    description: str, stream: TextIO | None = None
) -> Iterator[Callable[[int, int], None] | None]:
    """A ``progress(done, total)`` callback drawing a bar when ``stream`` is a terminal.

    Elsewhere it gives ``None``: the work runs without reporting.
    """
    shown = stream or sys.stderr
    if not shown.isatty():
        yield None
        return
    with bar(shown) as progress:
        steps = Steps(progress)
        steps(description)
        yield steps.counted
        steps.done()


class Steps:
    """The analyzer's progress (controller/analyzer/report.py ``Progress``) as one bar a step."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None
        self.percent = -1
        """The share of the step done when the bar was last drawn."""

    def _finish(self) -> None:
        if self.task is not None:
            task = self.progress.tasks[self.task]
            total = task.total if task.total is not None else 1
            self.progress.update(self.task, completed=total, total=total, refresh=True)

    def __call__(self, step: str) -> None:
        """A step begins: the one before is done."""
        self._finish()
        self.task, self.percent = self.progress.add_task(step, total=None), -1
        self.progress.refresh()

    def counted(self, done: int, total: int) -> None:
        """``done`` of the step's ``total`` (hands, rows) are done: drawn at each percent."""
        if self.task is None:
            return
        percent = done * 100 // total if total else 100
        self.progress.update(self.task, completed=done, total=total, refresh=percent > self.percent)
        self.percent = max(percent, self.percent)

    def done(self) -> None:
        """The last step is done."""
        self._finish()
