"""``jackpotd accept-restore``: two managers accept the rows a restore of the journal loses.

docs/operations.md, "Back up and restore the journal". The controller refuses to start on a
journal behind the head it signed last (docs/security.md, "History never goes back"). After a
restore from a back-up, two managers name the mark they accept to lose (the controller's
high-water file, or a copy of the head the broker retains) and why; the ledger checks both
signatures and keeps the accepted mark (controller/ledger/restores.py), and the controller then
starts on the restored journal, signing its head from there.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import (
    INSTALLED_CONFIG,
    CommandError,
    add_db,
    command,
    journal_location,
)
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.config.load import load_config
from controller.errors import JackpotError
from controller.events import HistoryRestored
from controller.journal.high_water import HighWaterFileError, high_water_path, read_high_water

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``accept-restore``."""
    accept = command(
        commands,
        "accept-restore",
        help="two managers accept the rows a restore of the journal loses",
        examples=(
            "  jackpotd accept-restore --reason 'disk lost, restored the 06:00 back-up, "
            "incident 2211' --key dana.key --key lee.key"
        ),
    )
    add_db(accept)
    accept.add_argument(
        "--mark",
        type=Path,
        help="the signed head to accept (default: the journal's high-water file, where the "
        "installed configuration's high_water_file puts it; or a copy of the retained "
        "controller/<id>/head payload, if the broker's is the higher)",
    )
    accept.add_argument("--reason", required=True, help="the incident, for the journal")
    add_signers(accept, dual=True)
    accept.set_defaults(run=run_accept)


def service_mark(args: argparse.Namespace) -> Path:
    """The high-water file the service keeps for the journal (controller/runtime/heads.py).

    Where the installed configuration puts it (``high_water_file``, as deploy/jackpotd.toml
    sets it) when the journal is that configuration's, else the one beside the journal.
    """
    journal = journal_location(args)
    try:
        installed = load_config(INSTALLED_CONFIG).controller if INSTALLED_CONFIG.exists() else None
    except (JackpotError, OSError):
        installed = None  # unreadable here: the file beside the journal, or --mark
    if installed is not None and str(installed.journal) == str(journal):
        if installed.high_water_file:
            return Path(installed.high_water_file)
        return high_water_path(str(journal), installed.node)
    return high_water_path(str(journal))


def run_accept(args: argparse.Namespace) -> int:
    """Journal the managers' acceptance of the mark; exit 1 if the ledger refused it."""
    mark_file: Path = args.mark or service_mark(args)
    try:
        mark = read_high_water(mark_file)
    except HighWaterFileError as error:
        raise CommandError(str(error)) from error
    if mark is None:
        raise CommandError(f"{mark_file}: no high-water mark to accept")
    with open_desk(args) as desk:
        head = desk.head[0]
        if mark.seq <= head:
            raise CommandError(
                f"the journal holds row {mark.seq} already (its head is row {head}): "
                "nothing went back, nothing to accept"
            )
        print(
            f"accepting the loss of rows {head + 1} to {mark.seq}: the controller signed row "
            f"{mark.seq} at {mark.at}; the journal now ends at row {head}"
        )
        keys = signers(args, desk, "accept-restore")
        event = HistoryRestored(
            f"restore-{uuid.uuid4()}", desk.now(), mark.seq, mark.hash, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)
