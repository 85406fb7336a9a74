"""Central's manager commands on a wide-area link: ``jackpotd resume-site``.

docs/wide-area.md, "A halted link". Central halts a property's link when a message the
property signed cannot be applied (a pool its link does not name, a broken chain, a claim the
cards do not make) or its totals do not match what central applied; nothing more of it is
applied until a manager acts. Once the cause is settled (the pool linked, the property's
software fixed), a manager resumes the link with a signed ``SiteResumed``: central takes the
message after its head again, and the property's next totals are reconciled before its
wide-area wagers reopen. The ledger checks the manager's signature whatever path the event
takes (:mod:`controller.ledger.authority`).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from controller.cli.common import add_db, command
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
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


def run_resume(args: argparse.Namespace) -> int:
    """Journal a manager's resumption of a halted link; exit 1 if the ledger refused it."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "link-site")
        event = SiteResumed(
            f"resume-{uuid.uuid4()}", desk.now(), args.site, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)
