"""``jackpotd config approve``: a manager signs what a configuration file changes.

It compares the file with the journal (as the daemon does at start-up), wraps every change
that moves money (pools opened, terms changed, tables configured) and the authority settings
(``dual_control_amount``, ``lockout_after``) with the file's digest in one
``configuration-approved`` event, has it signed (``--key``) and journals it. The daemon then
starts on that file; with a file changed since, it refuses until a manager approves it again
(docs/operations.md, "Approving a configuration"). ``--dry-run`` prints what would be
approved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from controller.cli.common import add_db, command, open_journal, report_receipt
from controller.cli.signing import add_signers, signed, signers
from controller.clock import utc_now
from controller.config.approval import configuration_approval
from controller.config.load import load_config
from controller.events import encode_event

if TYPE_CHECKING:
    import argparse


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``config approve``."""
    approve = command(
        actions,
        "approve",
        help="sign what a configuration changes (a manager)",
        examples=(
            "  jackpotd config approve --config /etc/jackpotd/jackpotd.toml --dry-run\n"
            "  jackpotd config approve --config /etc/jackpotd/jackpotd.toml --key manager.key"
        ),
    )
    add_db(approve, config=False)
    approve.add_argument("--config", type=Path, required=True, help="the configuration file")
    approve.add_argument("--dry-run", action="store_true", help="show the changes; sign nothing")
    add_signers(approve)
    approve.set_defaults(run=run_approve)


def run_approve(args: argparse.Namespace) -> int:
    """Sign and journal the approval the configuration needs, if it needs one."""
    config = load_config(args.config)
    with open_journal(args, must_exist=False) as journal:
        approval = configuration_approval(config, journal.state, utc_now(), "")
        if approval is None:
            print(f"{args.config}: nothing to approve, the journal runs it already")
            return 0
        if args.dry_run:
            for change in approval.changes:
                print(encode_event(change).decode())
            settings = {"dual_control_cents": approval.dual_control_cents}
            print(json.dumps(settings | {"lockout_after": approval.lockout_after}))
            return 0
        keys = signers(args, journal, "approve-config")
        approval = msgspec.structs.replace(approval, by=keys[0][0])
        return report_receipt(args, journal.append(signed(approval, keys, journal)))
