"""``jackpotd faults`` and ``jackpotd fault ack``: the faults waiting, and their acknowledgement.

``faults`` lists the faults journaled since the last acknowledgement (bad frames, device faults,
input refused before the ledger; ``--all``: every one), with the register the ledger keeps
(controller/ledger/fault_register.py). ``fault ack --through ID --note TEXT --key FILE``
acknowledges every fault through ``ID``, the newest waiting: one signed event
(controller/fault_events.py), drafted against the daemon's state and handed in through its
operator socket as every signing command's (controller/cli/submit.py), or journaled directly
with ``--db`` / ``--direct`` while the daemon is stopped. The ledger checks the signature, the
role and that ``ID`` is the newest fault waiting (docs/security.md, "Acknowledging faults").
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from controller.cli.common import CommandError, add_db, checked, command, open_reader
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.cli.tables import Column, print_table
from controller.cli.times import local_time
from controller.fault_events import FaultsAcknowledged
from controller.journal.fault_rows import fault_rows, waiting_faults
from controller.ledger.faults import ACTION, register_of

if TYPE_CHECKING:
    import argparse

    from controller.journal.fault_rows import WaitingFault
    from controller.ledger.state import LedgerState


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``faults`` and ``fault ack``."""
    listing = command(
        commands,
        "faults",
        help="list the faults journaled and not yet acknowledged",
        examples="  jackpotd faults\n  jackpotd faults --all --json\n  jackpotd faults --newest",
    )
    add_db(listing)
    shown = listing.add_mutually_exclusive_group()
    shown.add_argument("--all", action="store_true", help="every fault, acknowledged or not")
    shown.add_argument(
        "--newest",
        action="store_true",
        help="print only the newest waiting fault's id (for fault ack --through)",
    )
    listing.set_defaults(run=run_faults)

    parser = command(
        commands,
        "fault",
        help="acknowledge the faults journaled",
        examples="  jackpotd fault ack --through FAULT_ID --note 'shoe reseated' --key sam.key",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    ack = command(
        actions,
        "ack",
        help="acknowledge every fault through the newest waiting, with a note",
        examples=(
            "  jackpotd faults\n"
            "  jackpotd fault ack --through fault-1d2e... --note 'shoe reseated' --key sam.key"
        ),
    )
    add_db(ack)
    ack.add_argument("--through", required=True, help="the newest fault's id (jackpotd faults)")
    ack.add_argument("--note", required=True, help="what was found or done, for the journal")
    ack.add_argument(
        "--count",
        type=checked(int, minimum=1),
        help="the faults acknowledged (default: those waiting, from the ledger or the journal)",
    )
    add_signers(ack)
    ack.set_defaults(run=run_ack)


def _faults(args: argparse.Namespace) -> tuple[LedgerState, list[WaitingFault]]:
    with open_reader(args) as journal:
        return journal.state, fault_rows(journal.rows())


def run_faults(args: argparse.Namespace) -> int:
    """Print the faults waiting (or every one), oldest first."""
    state, faults = _faults(args)
    register = register_of(state)
    through = register.through if register else None
    shown = faults if args.all else waiting_faults(faults, through)
    if args.newest:
        if not shown:
            raise CommandError("no fault waiting: nothing to acknowledge")
        print(shown[-1].event_id)
        return 0
    if args.json:
        print(
            json.dumps(
                {
                    "faults": [fault.document() for fault in shown],
                    "acknowledged_through": register.through if register else None,
                    "acknowledged_by": register.by if register else None,
                }
            )
        )
        return 0
    if register is not None:
        print(f"acknowledged through {register.through} by {register.by}")
    if not shown:
        print("no fault waiting" if not args.all else "no fault journaled")
        return 0
    print_table(
        [Column("row", figures=True), Column("at"), Column("source"), Column("reason"),
         Column("fault", whole=True)],
        ((fault.seq, local_time(fault.at), fault.source, fault.reason, fault.event_id)
         for fault in shown),
    )  # fmt: skip
    newest = shown[-1].event_id
    print(
        f"{len(shown)} fault(s); acknowledge them all with: jackpotd fault ack --through "
        f"{newest} --note TEXT --key KEY_FILE"
    )
    return 0


def _count(args: argparse.Namespace, state: LedgerState) -> int:
    """The faults the acknowledgement covers: the ledger's count, or on a first one the journal's.

    The ledger counts nothing before a journal's first acknowledgement, so its count is taken
    from the journal's fault rows (or given with ``--count``), and ``--through`` must be the
    newest of them.
    """
    if args.count is not None:
        return int(args.count)
    register = register_of(state)
    if register is not None:
        if not register.waiting:
            raise CommandError(f"no fault waiting: acknowledged through {register.through}")
        return register.waiting
    _, faults = _faults(args)
    ids = [fault.event_id for fault in faults]
    if args.through not in ids:
        raise CommandError(f"--through: no fault {args.through!r} in the journal (jackpotd faults)")
    if ids[-1] != args.through:  # the ledger cannot tell on a first one: said here
        raise CommandError(f"--through: {args.through} is not the newest fault ({ids[-1]} is)")
    return len(ids)


def run_ack(args: argparse.Namespace) -> int:
    """Acknowledge every fault through ``--through``, signed by ``--key``."""
    if not args.note.strip():
        raise CommandError("--note: say what was found or done")
    with open_desk(args) as desk:
        count = _count(args, desk.state)
        keys = signers(args, desk, ACTION)
        event = FaultsAcknowledged(
            f"faults-ack-{uuid.uuid4()}", desk.now(), args.through, count, args.note, keys[0][0]
        )
        return conclude(args, desk, event, keys)
