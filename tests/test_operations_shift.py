"""docs/operations.md, "A shift, start to end": every jackpotd command there is one the CLI takes.

The page is what a supervisor follows on the floor; a command it prints that the command line
refuses (an option renamed, a subcommand gone) would fail them mid-shift. Each ``jackpotd``
line of the section's shell blocks is parsed by the real argument parser, as typed.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from controller.cli import build_parser

PAGE = Path(__file__).resolve().parents[1] / "docs" / "operations.md"


def shift_commands() -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## A shift, start to end", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "jackpotd":
                commands.append(words[1:])
    return commands


def test_the_shift_prints_every_step_and_each_command_parses() -> None:
    commands = shift_commands()
    steps = {words[0] for words in commands}
    assert {
        "meters",
        "hits",
        "hand",
        "verify-hit",
        "report",
        "verify",
        "anchor",
        "archive",
    } <= steps
    parser = build_parser()
    for words in commands:
        parsed = parser.parse_args(words)
        assert callable(parsed.run), words
