"""What the command modules share: bad-input errors, the journal options, receipts."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from controller.errors import JackpotError
from controller.journal import Journal, JournalError

if TYPE_CHECKING:
    import argparse

    from controller.ports import Receipt

DEFAULT_DB = "var/journal.db"


class CommandError(JackpotError, ValueError):
    """Bad input to a command; reported as one line on stderr with exit status 1."""


def add_db(parser: argparse.ArgumentParser) -> None:
    """The options every journal command takes."""
    parser.add_argument(
        "--db",
        default=os.environ.get("JACKPOTD_DB", DEFAULT_DB),
        help=f"the journal file (default {DEFAULT_DB}, or $JACKPOTD_DB)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def open_journal(args: argparse.Namespace, *, must_exist: bool = True) -> Journal:
    """The journal named by ``--db``; it must exist unless events are being fed in."""
    if must_exist and not os.path.exists(args.db):  # noqa: PTH110 - a plain string path
        raise JournalError(f"{args.db}: no such journal (use --db)")
    os.makedirs(os.path.dirname(args.db) or ".", exist_ok=True)  # noqa: PTH103, PTH120
    return Journal(args.db)


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
