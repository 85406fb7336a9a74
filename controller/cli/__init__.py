"""The ``jackpotd`` command line: one small module per subcommand, assembled here.

The subcommands are imported when the parser is built, not with this package: ``jackpotd
--version`` answers from the package's version alone, without importing the service, the
journal or the web display (about a second on a small host).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from controller import __version__
from controller.security.bytecode import restart_uncached, uncached

if TYPE_CHECKING:
    from collections.abc import Sequence

DEBUG_ENVIRONMENT = "JACKPOTD_DEBUG"


def build_parser(*, service_only: bool = False) -> argparse.ArgumentParser:
    """The parser with every subcommand registered; ``service_only``: ``run``'s (and ``demo``).

    The service builds its parser twice (the approval's check before the ``.pth`` lines run,
    controller/cli/launch.py, then the command) in a process that compiles every module from
    its source: with the service's subcommand alone, the twenty others and what they import
    (rich's tables and progress bars among them) are never compiled (docs/benchmarks.md,
    "Where start-up's time goes").
    """
    parser = argparse.ArgumentParser(
        prog="jackpotd",
        description="Progressive jackpot controller for networked Pai Gow Poker tables.",
    )
    parser.add_argument("--version", action="version", version=f"jackpotd {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        default=bool(os.environ.get(DEBUG_ENVIRONMENT)),
        help=f"show the traceback of an internal error (or set ${DEBUG_ENVIRONMENT}=1)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if service_only:
        from controller.cli import run  # noqa: PLC0415 - see the module docstring

        run.register(commands)
        return parser
    from controller.cli import (  # noqa: PLC0415 - see the module docstring
        agent,
        analyze,
        anchors,
        archive,
        config_command,
        cosign,
        evidence,
        faults,
        hand,
        identify_command,
        journal_command,
        manifest_command,
        meters,
        operators,
        passkey,
        pays,
        paytables,
        pool_life,
        report,
        restore_command,
        run,
        sign,
        signer,
        site_commands,
        supervisor,
        table_agents,
    )

    paytables.register(commands)
    hand.register(commands)
    analyze.register(commands)
    meters.register(commands)
    pays.register(commands)
    supervisor.register(commands)
    faults.register(commands)
    pool_life.register(commands)
    cosign.register(commands)
    site_commands.register(commands)
    restore_command.register(commands)
    identify_command.register(commands)
    anchors.register(commands)
    archive.register(commands)
    journal_command.register(commands)
    operators.register(commands)
    passkey.register(commands)
    manifest_command.register(commands)
    report.register(commands)
    evidence.register(commands)
    config_command.register(commands)
    run.register(commands)
    agent.register(commands)
    table_agents.register(commands)
    sign.register(commands)
    signer.register(commands)
    return parser


def _serves(words: Sequence[str]) -> bool:
    """Whether the words run the service: ``run`` is the first that is not an option.

    The options before a command (``--debug``) take no value, so the first other word is it.
    """
    return next((word for word in words if not word.startswith("-")), None) == "run"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status (controller/cli/exits.py lists them).

    Bad input is one line on stderr and status 1, never a traceback: every error the package
    raises on purpose is a :class:`controller.errors.JackpotError`, and a file or socket the
    system refuses is an ``OSError``. Anything else is a bug: status 70, one line and a hint.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:  # before the subcommands are imported (the module docstring)
        print(f"jackpotd {__version__}")
        return 0
    if argv is None and _serves(words) and not uncached():
        # The service starts itself again without a bytecode cache before it does anything
        # (controller/security/bytecode.py); done here, before the parser imports every
        # subcommand, that import is not paid twice (0.8 s of a 1,000-table start-up,
        # docs/benchmarks.md "Where start-up's time goes"). The new process parses the words.
        restart_uncached()
    from controller.cli import exits  # noqa: PLC0415 - see the module docstring

    args = build_parser(service_only=_serves(words)).parse_args(words)
    try:
        status: int = args.run(args)
        sys.stdout.flush()  # here, not at exit: a reader gone away is seen while it can be said
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - every failure ends here
        return exits.report(error, debug=args.debug, logged=getattr(args, "logs", False))
    return status
