"""``jackpotd identify-journal``: a manager names a journal founded before identities existed.

docs/security.md, "Bound signatures". From the event on, every signature on the journal is
bound to it, and the rules that hold on journals with an identity hold there too
(controller/ledger/identity.py).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from controller.cli.common import CommandError, add_db, command
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.events import JournalIdentified
from controller.ledger.binding import new_identity

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``identify-journal``."""
    identify = command(
        commands,
        "identify-journal",
        help="give a journal founded before identities existed its identity (a manager's)",
        examples="  jackpotd identify-journal --reason 'upgrade, change 4410' --key dana.key",
    )
    add_db(identify)
    identify.add_argument("--reason", required=True, help="why now, for the journal")
    add_signers(identify)
    identify.set_defaults(run=run_identify)


def run_identify(args: argparse.Namespace) -> int:
    """Journal the identity a manager signs for; exit 1 if the ledger refused it."""
    with open_desk(args) as desk:
        if (binding := desk.state.binding) is not None:
            raise CommandError(f"the journal has an identity already: {binding.journal}")
        keys = signers(args, desk, "identify")
        event = JournalIdentified(
            f"identify-{uuid.uuid4()}", desk.now(), new_identity(), keys[0][0], args.reason
        )
        print(f"identity {event.journal}")
        return conclude(args, desk, event, keys)
