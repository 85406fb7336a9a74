"""Central's commands on a wide-area link: ``jackpotd resume-site`` and ``jackpotd site-head``.

docs/wide-area.md, "A halted link". Central halts a property's link when a message the
property signed cannot be applied (a pool its link does not name, a broken chain, a claim the
cards do not make) or its totals do not match what central applied; nothing more of it is
applied until a manager acts. Once the cause is settled (the pool linked, the property's
software fixed), a manager resumes the link with a signed ``SiteResumed``: central takes the
message after its head again, and the property's next totals are reconciled before its
wide-area wagers reopen. The ledger checks the manager's signature whatever path the event
takes (:mod:`controller.ledger.authority`).

``site-head`` writes out the signed head central keeps of a property (its highest, from
``<journal>.site-heads`` beside central's high-water file) as a high-water file: a property
whose own file was lost with its journal, and whose start central's mark refuses, hands it to
``jackpotd accept-restore --mark`` (docs/wide-area.md, "Restoring a property").
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import CommandError, add_db, command
from controller.cli.restore_command import service_mark
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.journal.high_water import (
    HighWaterFileError,
    read_site_heads,
    site_heads_path,
    write_high_water,
)
from controller.wide_events import SiteResumed

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``resume-site``."""
    resume = command(
        commands,
        "resume-site",
        help="resume a property's halted wide-area link (central; a manager's)",
        examples=(
            "  jackpotd report sites            # why the link halted\n"
            "  jackpotd resume-site atlantic --reason 'pool mega linked, ticket 5120' "
            "--key dana.key"
        ),
    )
    add_db(resume)
    resume.add_argument("site", help="the property's id (as in [[wide_area.sites]])")
    resume.add_argument("--reason", required=True, help="what settled the halt, for the journal")
    add_signers(resume)
    resume.set_defaults(run=run_resume)
    head = command(
        commands,
        "site-head",
        help="write out the signed head central keeps of a property, for its accept-restore",
        examples="  jackpotd site-head atlantic --out atlantic.mark   # at central",
    )
    add_db(head)
    head.add_argument("site", help="the property's id (as in [[wide_area.sites]])")
    head.add_argument(
        "--heads",
        type=Path,
        metavar="FILE",
        help="central's file of its properties' heads (default: beside central's high-water "
        "file, where the installed configuration puts it)",
    )
    head.add_argument("--out", type=Path, required=True, metavar="FILE", help="the mark to write")
    head.set_defaults(run=run_site_head)


def run_resume(args: argparse.Namespace) -> int:
    """Journal a manager's resumption of a halted link; exit 1 if the ledger refused it."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "link-site")
        event = SiteResumed(
            f"resume-{uuid.uuid4()}", desk.now(), args.site, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)


def run_site_head(args: argparse.Namespace) -> int:
    """Write the property's signed head as central keeps it; refuse a site it keeps none of."""
    heads_file: Path = args.heads or site_heads_path(service_mark(args))
    try:
        heads = read_site_heads(heads_file)
    except HighWaterFileError as error:
        raise CommandError(str(error)) from error
    head = heads.get(args.site)
    if head is None:
        known = ", ".join(sorted(heads)) or "none"
        raise CommandError(f"{heads_file}: central keeps no head of {args.site} (it has: {known})")
    write_high_water(args.out, head)
    print(f"{args.out}: {args.site}'s head, row {head.seq} signed at {head.at} (key {head.key_id})")
    return 0
