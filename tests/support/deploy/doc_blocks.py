"""The shell blocks a page marks as a path to run, in page order, as they are written.

docs/operations.md marks each block of the operator's path with an HTML comment on the line
just before its fence (the page's opening says so, for its writers):

    <!-- operator-path: STEP -->            root runs it, in the clone of the repository
    <!-- operator-path: STEP as=ACCOUNT --> the operator ACCOUNT runs it, at their own account

:func:`marked_blocks` reads them, the text of each block with the indentation of its fence
removed (a block inside a list item is indented). A marker that is not followed at once by a
```` ```sh ```` fence, or a marker it cannot read, is an error: a writer's slip fails the test
that runs the path rather than leaving a step out of it silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

MARK: Final = re.compile(r"<!-- operator-path:(?P<words>.*?)-->")
WORDS: Final = re.compile(r"^ (?P<step>[a-z][a-z0-9-]*)(?: as=(?P<account>[a-z][a-z0-9_-]*))? $")
FENCE: Final = re.compile(r"^(?P<indent> *)```sh$")
ROOT_ACCOUNT: Final = "root"


class MarkError(ValueError):
    """A marker the page's convention does not allow."""


@dataclass(frozen=True, slots=True)
class Block:
    """One marked shell block: its step, who runs it, its text and where it is."""

    step: str
    account: str
    text: str
    line: int
    """The line of its marker, counted from 1."""

    def where(self) -> str:
        """``docs/operations.md:LINE (STEP, as ACCOUNT)``, for a failure's message."""
        return f"line {self.line} ({self.step}, as {self.account})"


def marked_blocks(page: Path, mark: re.Pattern[str] = MARK) -> list[Block]:
    """Every marked block of ``page``, in page order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    for number, line in enumerate(lines, start=1):
        found = mark.match(line.strip())
        if found is None:
            continue  # prose may name the marker (in backticks): only a line it opens is one
        words = WORDS.match(found.group("words"))
        if words is None or line.strip() != found.group(0):
            shown = line.strip()
            raise MarkError(f"{page.name}:{number}: a marker reads <!-- operator-path: STEP "
                            f"[as=ACCOUNT] --> alone on its line, not {shown!r}")  # fmt: skip
        fence = FENCE.match(lines[number]) if number < len(lines) else None
        if fence is None:
            raise MarkError(f"{page.name}:{number}: the marker's next line is not a ```sh fence")
        indent = len(fence.group("indent"))
        body: list[str] = []
        for text in lines[number + 1 :]:
            if text.strip() == "```":
                break
            body.append(text[indent:] if text[:indent].strip() == "" else text)
        else:
            raise MarkError(f"{page.name}:{number}: the block is never closed")
        account = words.group("account") or ROOT_ACCOUNT
        blocks.append(Block(words.group("step"), account, "\n".join(body) + "\n", number))
    return blocks
