"""Supervisors' commands that append to the journal: verify-hit, adjust, void, apply.

Every command takes ``--db FILE`` or a ``postgresql://`` URL (or ``--config FILE``;
controller/cli/common.py says which journal is found without them) and ``--json``. Commands
that change something append an event with who and why; the journal records a refusal as
faithfully as an acceptance.
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import TYPE_CHECKING

import msgspec

from controller.cli.common import (
    CommandError,
    add_db,
    command,
    journal_location,
    open_journal,
    read_lines,
)
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.events import HitVerified, MeterAdjusted, RoundVoided, decode_event
from controller.ledger.pool import ACCOUNTS
from controller.ledger.screen import table_word
from controller.ledger_journal import writable
from controller.money import MoneyError, parse_dollars
from controller.provenances import APPLY

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the journal commands."""
    verify_hit = command(
        commands,
        "verify-hit",
        help="verify a pending pay so that it is paid",
        examples=(
            "  jackpotd hits --pending\n"
            "  jackpotd verify-hit t3/r-0042/2/progressive --key sam.key\n"
            "  jackpotd verify-hit t3/r-0042/2/progressive --key sam.key --key lee.key"
            "   # dual control"
        ),
    )
    add_db(verify_hit)
    verify_hit.add_argument("hit", help="the pay's id (see jackpotd hits --pending)")
    add_signers(verify_hit, dual=True)
    verify_hit.set_defaults(run=run_verify_hit)

    adjust = command(
        commands,
        "adjust",
        help="a documented correction to a pool",
        examples=(
            "  jackpotd adjust fortune-floor --amount -12.34 --reason 'sign test, ticket 4711' "
            "--key dana.key --key sam.key"
        ),
    )
    add_db(adjust)
    adjust.add_argument("pool", help="the pool to correct")
    adjust.add_argument("--amount", required=True, help="signed dollars, e.g. -12.34 or +$5")
    adjust.add_argument(
        "--account", choices=ACCOUNTS, default="meter", help="which of the pool's accounts"
    )
    adjust.add_argument("--reason", required=True, help="why, for the journal")
    add_signers(adjust, dual=True)
    adjust.set_defaults(run=run_adjust)

    void = command(
        commands,
        "void",
        help="void a round (a misdeal, or a held round)",
        examples="  jackpotd void t3 r-0042 --reason 'misdeal: two cards exposed' --key sam.key",
    )
    add_db(void)
    void.add_argument("table", help="the table's id")
    void.add_argument("round", help="the round's id")
    void.add_argument("--reason", required=True, help="why, for the journal")
    add_signers(void)
    void.set_defaults(run=run_void)

    feed = command(
        commands,
        "apply",
        help="append events from a JSON-lines file (labs, tests)",
        examples="  jackpotd apply events.jsonl --db lab.db\n  make-events | jackpotd apply -",
    )
    add_db(feed)
    feed.add_argument("events", help="a file of one JSON event per line, or - for stdin")
    feed.set_defaults(run=run_apply)


def run_verify_hit(args: argparse.Namespace) -> int:
    """Mark a pending payout verified (two signers at or above the dual-control amount)."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "verify-hit")
        event = HitVerified(f"verify-{uuid.uuid4()}", desk.now(), args.hit, keys[0][0])
        return conclude(args, desk, event, keys)


def run_void(args: argparse.Namespace) -> int:
    """Void a round: its wagers are returned and their contributions reversed."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "void-round")
        event = RoundVoided(
            f"void-{uuid.uuid4()}", desk.now(), args.table, args.round, keys[0][0], args.reason,
            refund_contributions=True,
        )  # fmt: skip
        return conclude(args, desk, event, keys)


def run_adjust(args: argparse.Namespace) -> int:
    """Journal a documented correction."""
    text = args.amount.strip()
    sign = -1 if text.startswith("-") else 1
    amount = text.lstrip("+-").strip()
    try:
        cents = sign * parse_dollars(amount if amount.startswith("$") else f"${amount}")
    except MoneyError as error:
        raise MoneyError(f"--amount: {error}") from error
    with open_desk(args) as desk:
        keys = signers(args, desk, "adjust")
        event = MeterAdjusted(
            f"adjust-{uuid.uuid4()}",
            desk.now(),
            args.pool,
            args.account,
            cents,
            keys[0][0],
            args.reason,
        )
        return conclude(args, desk, event, keys)


def run_apply(args: argparse.Namespace) -> int:
    """Append JSON-lines events; exit 1 if any was refused.

    On a signed journal a device's input and a table's status are the daemon's intake's to
    journal, never this command's: a file holding any is refused whole, each such event
    journaled as the fault that refuses it, and nothing else appended
    (:mod:`controller.journal.provenance`).
    """
    writable(journal_location(args))  # a journal that cannot take them is said before reading them
    lines = read_lines(args.events)
    try:
        events = [decode_event(line) for line in lines if line.strip()]
    except msgspec.MsgspecError as error:
        raise CommandError(f"{args.events}: {error}") from error
    with open_journal(args, must_exist=False) as journal:
        if journal.state.authority.signed:
            tables_word = [event for event in events if table_word(event)]
            events = tables_word or events
        receipts = journal.append_many(events, provenance=APPLY)
    refused = 0
    for receipt in receipts:
        refused += not receipt.applied
        if args.json:
            print(
                json.dumps(
                    {
                        "seq": receipt.seq,
                        "event_id": receipt.event_id,
                        "outcome": receipt.outcome,
                        "reason": receipt.reason,
                        "duplicate": receipt.duplicate,
                    }
                )
            )
        elif not receipt.applied:
            print(
                f"row {receipt.seq} {receipt.event_id}: refused: {receipt.reason}", file=sys.stderr
            )
    if not args.json:
        print(f"{len(receipts)} events, {refused} refused")
    return 1 if refused else 0
