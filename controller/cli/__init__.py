"""The ``jackpotd`` command line: one small module per subcommand, assembled here."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from controller import __version__
from controller.cli import (
    analyze,
    anchors,
    config_command,
    hand,
    manifest_command,
    operators,
    paytables,
    report,
    run,
    supervisor,
)
from controller.errors import JackpotError

if TYPE_CHECKING:
    from collections.abc import Sequence

EXIT_USAGE = 2
EXIT_INPUT = 1


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="jackpotd",
        description="Progressive jackpot controller for networked Pai Gow Poker tables.",
    )
    parser.add_argument("--version", action="version", version=f"jackpotd {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    paytables.register(commands)
    hand.register(commands)
    analyze.register(commands)
    supervisor.register(commands)
    anchors.register(commands)
    operators.register(commands)
    manifest_command.register(commands)
    report.register(commands)
    config_command.register(commands)
    run.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; bad input is reported on stderr with exit status 1, never a traceback.

    Every error the package raises on purpose is a :class:`JackpotError` (controller/errors.py);
    anything else is a bug and keeps its traceback.
    """
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except JackpotError as error:
        print(f"jackpotd: {error}", file=sys.stderr)
        return EXIT_INPUT
    return status
