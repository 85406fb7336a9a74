"""The ``jackpotd`` command line: one small module per subcommand, assembled here."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import msgspec

from controller import __version__
from controller.cards import CardError, HandError
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
from controller.cli.common import CommandError
from controller.config import ConfigError
from controller.controller_key import ControllerKeyError
from controller.journal import JournalError
from controller.journal.anchors import AnchorError
from controller.money import MoneyError
from controller.paytable_files import PaytableError
from controller.service import StartupError

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
    """Run one command; bad input is reported on stderr with exit status 1, never a traceback."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except (
        CardError,
        HandError,
        PaytableError,
        MoneyError,
        JournalError,
        analyze.PlotUnavailableError,
        msgspec.ValidationError,
        msgspec.DecodeError,
        CommandError,
        ConfigError,
        StartupError,
        ControllerKeyError,
        AnchorError,
    ) as error:
        print(f"jackpotd: {error}", file=sys.stderr)
        return EXIT_INPUT
    return status
