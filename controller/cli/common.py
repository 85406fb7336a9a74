"""What the command modules share: bad-input errors, the journal options, checked values, receipts.

Which journal a command opens, first found wins: ``--db FILE``; the journal named by ``--config
FILE``; ``$JACKPOTD_DB``; the journal named by the installed configuration
(:data:`INSTALLED_CONFIG`) when it exists; ``var/journal.db`` (the demo's folder). Each may
be a ``postgresql://`` URL instead of a file (:mod:`controller.journal.location`): every
command works on either, and never asks which (:mod:`controller.journal.backends` opens it).

Commands that only read open it read only (:func:`controller.ledger_journal.open_reader`):
they never create, migrate or write it, and refuse a file or a database that is not a
journal. Commands that append refuse one too, rather than turn some other SQLite file or
database into a journal.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from controller import ledger_journal
from controller.clock import utc_now
from controller.config.load import load_config
from controller.errors import JackpotError
from controller.journal import location
from controller.provenances import cli

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.journal.location import JournalLocation
    from controller.ledger_journal import LedgerJournal, LedgerReader
    from controller.ports import Receipt

DEFAULT_DB: Final = "var/journal.db"
DB_ENVIRONMENT: Final = "JACKPOTD_DB"
INSTALLED_CONFIG: Final = Path("/etc/jackpotd/jackpotd.toml")


class CommandError(JackpotError, ValueError):
    """Bad input to a command; reported as one line on stderr with exit status 1."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Each option's default after its help, and descriptions and examples as written.

    argparse's ArgumentDefaultsHelpFormatter, except that an option without a default (None, an
    empty list, a flag's False) says nothing rather than "(default: None)"; where such an option
    has a default worked out later (``--db``), its help says which.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "(default" in text or action.default in (None, False, [], argparse.SUPPRESS):
            return text
        if action.option_strings or action.nargs in {argparse.OPTIONAL, argparse.ZERO_OR_MORE}:
            text += " (default: %(default)s)"
        return text


def command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,  # noqa: A002 - argparse's word
    examples: str = "",
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand with its help, its defaults shown, and its examples after the options."""
    return commands.add_parser(
        name,
        help=help,
        description=textwrap.fill(description or help[:1].upper() + help[1:] + ".", width=79),
        epilog=f"examples:\n{examples}" if examples else None,
        formatter_class=HelpFormatter,
    )


def add_db(parser: argparse.ArgumentParser, *, config: bool = True) -> None:
    """The options every journal command takes (``config``: add ``--config`` too)."""
    parser.add_argument(
        "--db",
        metavar="FILE",
        help="the journal file, or a postgresql:// URL (default: the journal of --config, else "
        f"${DB_ENVIRONMENT}, else "
        f"that of {INSTALLED_CONFIG} if it exists, else {DEFAULT_DB})",
    )
    if config:
        parser.add_argument(
            "--config",
            type=Path,
            metavar="FILE",
            help="the configuration whose journal to open, when --db is not given",
        )
    parser.add_argument("--json", action="store_true", help="print JSON")


def journal_location(args: argparse.Namespace) -> JournalLocation:
    """The journal the command opens (the module docstring says which): a file or a URL."""
    if args.db:
        return location.journal_location(args.db)
    config: Path | list[Path] | None = getattr(args, "config", None)
    if isinstance(config, list):  # several nodes' files (manifest approve): the first's journal
        config = config[0] if config else None
    if config is not None:
        return load_config(config).controller.journal
    if environment := os.environ.get(DB_ENVIRONMENT):
        return location.journal_location(environment)
    if INSTALLED_CONFIG.exists():
        return load_config(INSTALLED_CONFIG).controller.journal
    return Path(DEFAULT_DB)


def open_reader(args: argparse.Namespace) -> LedgerReader:
    """The journal, read only: nothing is created, migrated or written, whatever holds it."""
    return ledger_journal.open_reader(journal_location(args))


def open_journal(
    args: argparse.Namespace, *, must_exist: bool = True
) -> contextlib.closing[LedgerJournal]:
    """The journal to append to; it must exist unless events are being fed in.

    Every append names the command (``cli <command> <action>``) unless it names itself
    (``apply``): the journal's provenance of each row (docs/journal.md, "Provenance").
    """
    journal = ledger_journal.append_to(journal_location(args), must_exist=must_exist)
    journal.writer = cli(command_name(args))
    journal.live_clock = utc_now  # a live append: every signature's window must hold now
    return contextlib.closing(journal)


def add_report_db(parser: argparse.ArgumentParser) -> None:
    """A report's own ``--db``, ``--config`` and ``--json``, which ``report`` takes too.

    Given before the report's word (``report --json sites``), they stand: argparse would
    otherwise set them again to their defaults when it parses the word's own options.
    """
    add_db(parser)
    for action in parser._actions:  # noqa: SLF001 - argparse lists a parser's options only there
        if action.dest in {"db", "config", "json"}:
            action.default = argparse.SUPPRESS


def command_name(args: argparse.Namespace) -> str:
    """The command as it was typed: ``operator add``, ``accept-restore``."""
    action = getattr(args, "action", None)
    return f"{args.command} {action}" if isinstance(action, str) else str(args.command)


def checked(
    kind: type[int | float],
    *,
    minimum: float,
    maximum: float | None = None,
    above: bool = False,
) -> Callable[[str], int | float]:
    """An argparse type: a ``kind`` from ``minimum`` (``above``: excluded) to ``maximum``."""

    def convert(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        low = value <= minimum if above else value < minimum
        if low or (maximum is not None and value > maximum):
            bound = (
                f"above {minimum}" if above
                else f"from {minimum} to {maximum}" if maximum is not None
                else f"{minimum} or more"
            )  # fmt: skip
            raise argparse.ArgumentTypeError(f"{text!r}: must be {bound}")
        return value

    convert.__name__ = kind.__name__
    return convert


def read_lines(path: str) -> list[str]:
    """The lines of a text file, or of stdin for ``-``; a file that cannot be read is one line."""
    if path == "-":
        return sys.stdin.read().splitlines()
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: not UTF-8 text ({error.reason})") from error


def receipt_json(receipt: Receipt) -> dict[str, Any]:
    """A receipt as JSON."""
    return {
        "seq": receipt.seq,
        "event_id": receipt.event_id,
        "outcome": receipt.outcome,
        "reason": receipt.reason,
        "duplicate": receipt.duplicate,
        "conflict": receipt.conflict,
    }


def report_receipt(args: argparse.Namespace, receipt: Receipt) -> int:
    """Print what became of an event; exit status 1 if the ledger refused it.

    An event whose id the journal holds for other content is not applied (a conflict,
    :mod:`controller.journal.identity`): that is a refusal too, never a success.
    """
    if receipt.conflict:
        message = f"refused: its id is journaled with other content (row {receipt.seq})"
        print(json.dumps(receipt_json(receipt)) if args.json else message, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(receipt_json(receipt)))
    elif receipt.applied:
        print(f"journaled as row {receipt.seq} ({receipt.event_id})")
    else:
        print(f"refused: {receipt.reason} (journaled as row {receipt.seq})", file=sys.stderr)
    return 0 if receipt.applied else 1
