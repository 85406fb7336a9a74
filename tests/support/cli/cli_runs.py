"""jackpotd's commands run in-process, with what they printed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from controller.cli import config_command, main

if TYPE_CHECKING:
    import pytest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="jackpotd")
    config_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["config", "check", *argv])
    status: int = args.run(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err
