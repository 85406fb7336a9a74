"""``jackpotd config approve``: a manager signs what a configuration file changes.

It compares the file with the journal (as the daemon does at start-up), wraps every change
that moves money (pools opened, terms changed, tables configured) and the authority settings
(``dual_control_amount``, ``lockout_after``) with the file's digest in one
``configuration-approved`` event, has it signed (``--key``) and journals it. The daemon then
starts on that file; with a file changed since, it refuses until a manager approves it again
(docs/operations.md, "Approving the configuration"). ``--dry-run`` prints what would be
approved: each pool, table and setting that changes, old → new
(:mod:`controller.cli.config_changes`), without a key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from controller.cli.common import (
    add_db,
    command,
    journal_location,
    open_reader,
)
from controller.cli.config_changes import change_document, change_lines
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.clock import utc_now
from controller.config.approval import configuration_approval
from controller.config.load import load_config
from controller.journal.location import sqlite_file
from controller.ledger.apply import LedgerState
from controller.security.manifest import approved_configurations

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
    add_signers(approve, required=False)  # required unless --dry-run: checked in run_approve
    approve.set_defaults(run=run_approve, usage_error=approve.error)


def run_approve(args: argparse.Namespace) -> int:
    """Sign and journal the approval the configuration needs, if it needs one."""
    if args.dry_run:
        return _dry_run(args)
    if not args.key:
        args.usage_error("the following arguments are required: --key (or --dry-run)")
    config = load_config(args.config)
    with open_desk(args, must_exist=False) as desk:
        approval = configuration_approval(config, desk.state, desk.now(), "")
        if approval is None:
            print(f"{args.config}: nothing to approve, the journal runs it already")
            return 0
        keys = signers(args, desk, "approve-config")
        approval = msgspec.structs.replace(approval, by=keys[0][0])
        status = conclude(args, desk, approval, keys)
        manifest = desk.state.manifest
        covered = manifest is not None and config.digest in approved_configurations(manifest)
        if status == 0 and not args.json and not covered and args.save is None:
            # The manifest covers the file's digest: the one order (docs/operations.md).
            print(
                "next, what is installed with this file: jackpotd manifest approve "
                f"--config {args.config} --db {journal_location(args)} --key KEY_FILE"
            )
        return status


def _dry_run(args: argparse.Namespace) -> int:
    """What the approval would change, old → new; nothing is signed, opened to write or made."""
    config = load_config(args.config)
    where = journal_location(args)
    state = LedgerState()
    file = sqlite_file(where)  # a file not made yet holds nothing; a database's reader says
    if file is None or file.exists():
        with open_reader(args) as reader:
            state = reader.state
    approval = configuration_approval(config, state, utc_now(), "")
    if approval is None:
        print(f"{args.config}: nothing to approve, the journal runs it already")
        return 0
    if args.json:
        print(json.dumps(change_document(approval, state), indent=2))
        return 0
    print(f"{args.config}: what a manager's approval changes (nothing is signed):")
    for line in change_lines(approval, state):
        print(f"  {line}")
    return 0
