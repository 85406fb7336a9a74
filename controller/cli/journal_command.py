"""``jackpotd journal copy``: move a journal into an empty one of another backend, verified.

``jackpotd journal copy --from FILE --to postgresql://...`` verifies the file, appends its
rows' events to the database in order through the database's own journal (each batch's head
checked against the file's row and hash), then verifies both and prints the head they share
(:mod:`controller.journal.copying`; docs/ha.md, "Moving a journal to PostgreSQL"). Stop the
service first, and point its configuration at the database once the copy verifies. The other
way round (``--from postgresql://... --to FILE``) moves a database back into a file.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from controller.cli.anchors import add_trust, trust, verify_document
from controller.cli.common import command
from controller.cli.progress import counting
from controller.journal.location import journal_location
from controller.ledger_journal.copying import copy_journal
from controller.money import format_cents

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``journal copy``."""
    journal = command(
        commands,
        "journal",
        help="move the journal between backends",
        examples="  jackpotd journal copy --from /var/lib/jackpotd/journal.db --to postgresql://...",
    )
    actions = journal.add_subparsers(dest="action", metavar="ACTION", required=True)
    copy = command(
        actions,
        "copy",
        help="copy a journal into an empty one (an SQLite file into PostgreSQL, or back), verified",
        examples=(
            "  systemctl stop jackpotd    # the service stopped first\n"
            "  jackpotd journal copy --from /var/lib/jackpotd/journal.db \\\n"
            "      --to postgresql://jackpotd@db1/jackpot --controller-key controller.pub"
        ),
    )
    copy.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="JOURNAL",
        help="the journal copied: its SQLite file, or a postgresql:// URL",
    )
    copy.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="JOURNAL",
        help="the copy: a PostgreSQL database (postgresql://...) or a file, empty or new",
    )
    add_trust(copy)
    copy.add_argument("--json", action="store_true", help="print JSON")
    copy.set_defaults(run=run_copy)


def run_copy(args: argparse.Namespace) -> int:
    """Copy, verify both, print the head they share."""
    source, target = journal_location(args.source), journal_location(args.target)
    trusted = trust(args.anchor, args.controller_key)
    with counting("copying the journal (rows)") as progress:
        copied = copy_journal(
            source, target, keys=trusted.keys, anchors=trusted.heads, progress=progress
        )
    seq, digest = copied.head
    if args.json:
        document = {
            "rows": copied.target.rows,
            "head": {"seq": seq, "hash": digest},
            "source": verify_document(copied.source),
            "target": verify_document(copied.target),
        }
        print(json.dumps(document, indent=2))
        return 0
    meters = ", ".join(
        f"{pool} {format_cents(cents)}" for pool, cents in copied.target.pools.items()
    )
    print(f"copied {copied.target.rows:,} rows from {source} to {target}")
    print(f"head: row {seq} {digest} in both")
    print(f"both verify: chain intact, replay matches ({meters or 'no pools'})")
    checkpoints = copied.target.checkpoints
    if checkpoints:
        signatures = checkpoints[-1].signature
        print(f"checkpoints: {len(checkpoints)} in both, signatures {signatures}")
    print(
        f"point [controller] journal at {target} and check it with: jackpotd verify --db {target}"
    )
    return 0
