"""``jackpotd version`` and ``jackpotd manifest``: the software and configuration digests.

``jackpotd version --verbose`` prints every digest the start-up self-check compares;
``jackpotd manifest approve`` journals them as approved (a manager's action, signed with their
key: ``--key``);
``jackpotd manifest check`` says whether what is installed matches what was approved.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller import __version__
from controller.cli.common import (
    CommandError,
    add_db,
    command,
    open_reader,
)
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.cli.tables import Column, print_table
from controller.config.load import load_config
from controller.events import ManifestApproved
from controller.security.manifest import CONFIGURATIONS_SEPARATOR, current

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``version`` and ``manifest approve|check``."""
    version = command(
        commands,
        "version",
        help="the version, and with --verbose every digest",
        examples=(
            "  jackpotd version\n  jackpotd version --verbose --config /etc/jackpotd/jackpotd.toml"
        ),
    )
    version.add_argument("--verbose", action="store_true", help="print the digests")
    version.add_argument("--config", type=Path, help="also the digest of this configuration")
    version.add_argument("--json", action="store_true", help="print JSON")
    version.set_defaults(run=run_version)

    manifest = command(
        commands,
        "manifest",
        help="approve or check the installed software",
        examples="  jackpotd manifest check --config /etc/jackpotd/jackpotd.toml",
    )
    actions = manifest.add_subparsers(dest="action", metavar="ACTION", required=True)
    approve = command(
        actions,
        "approve",
        help="journal the current digests as approved",
        examples=(
            "  jackpotd manifest approve --config /etc/jackpotd/jackpotd.toml --key manager.key"
        ),
    )
    add_db(approve, config=False)
    approve.add_argument(
        "--config",
        type=Path,
        required=True,
        action="append",
        help="the configuration the service runs; once per node of a cluster, each node's file "
        "(one approval covers them all, and replaces the last: docs/ha.md)",
    )
    add_signers(approve)
    approve.set_defaults(run=run_approve)
    check = command(
        actions,
        "check",
        help="compare the installed software with the approved",
        examples="  jackpotd manifest check --config /etc/jackpotd/jackpotd.toml",
    )
    add_db(check, config=False)
    check.add_argument(
        "--config", type=Path, required=True, help="the configuration the service runs"
    )
    check.set_defaults(run=run_check)


def _config_digest(path: Path | None) -> str:
    return load_config(path).digest if path is not None else ""


def run_version(args: argparse.Namespace) -> int:
    """Print the version and, verbosely, the digests."""
    manifest = current(_config_digest(args.config))
    if args.json:
        document: dict[str, object] = {"version": __version__, "software": manifest.software}
        if args.config:
            document["configuration"] = manifest.configuration
        if args.verbose:
            document["files"] = dict(manifest.files)
        print(json.dumps(document, indent=2))
        return 0
    print(f"jackpotd {__version__}")
    if args.verbose:
        print(f"software sha256: {manifest.software}")
        if args.config:
            print(f"configuration sha256: {manifest.configuration}  ({args.config})")
        print_table(
            [Column("sha256", whole=True), Column("file", whole=True)],
            [(digest, path) for path, digest in manifest.files],
        )
    return 0


def run_approve(args: argparse.Namespace) -> int:
    """Journal the installed software and the configuration (each node's) as approved."""
    digests = sorted({_config_digest(path) for path in args.config})
    manifest = current(CONFIGURATIONS_SEPARATOR.join(digests))
    with open_desk(args, must_exist=False) as desk:
        keys = signers(args, desk, "approve-manifest")
        event = ManifestApproved(
            f"manifest-{uuid.uuid4()}", desk.now(), manifest.version, manifest.software,
            manifest.configuration, list(manifest.files), keys[0][0],
        )  # fmt: skip
        return conclude(args, desk, event, keys)


def run_check(args: argparse.Namespace) -> int:
    """Exit 0 when the installed software and configuration are the approved ones."""
    manifest = current(_config_digest(args.config))
    with open_reader(args) as journal:
        approved = journal.state.manifest
    if approved is None:
        raise CommandError("no manifest has been approved in this journal")
    problems = manifest.itemized(approved)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"software and configuration match the manifest approved by {approved.by}")
    return 1 if problems else 0
