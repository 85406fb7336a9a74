"""``jackpotd pool suspend|resume|transfer|retire``: a pool's life after it opened, signed.

``pool suspend POOL --reason ... --key KEY`` takes a pool out of play (a supervisor's or a
manager's signature: it protects); ``pool resume POOL --reason ... --key KEY`` puts it back (a
manager's); ``pool transfer POOL --to OTHER --reason ... --key A --key B`` moves its money onto
another pool (two managers); ``pool retire POOL --disposition ... --key A --key B`` closes it
for good with the disposition of every cent (two managers). Each drafts the event against the
journal as it stands, signs it as every signing command does (``--key``, ``--save`` for a
second signer's ``jackpotd cosign``), and journals it; the ledger decides
(controller/ledger/pool_life.py, docs/operations.md "A pool's life").
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, TypeVar

import msgspec

from controller.cli.common import add_db, command
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.ledger.jurisdictions import CAUSES
from controller.pool_events import (
    DISPOSITIONS,
    PoolResumed,
    PoolRetired,
    PoolSuspended,
    PoolTransferred,
)

if TYPE_CHECKING:
    import argparse

E = TypeVar("E", PoolTransferred, PoolRetired)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``pool suspend|resume|transfer|retire``."""
    parser = command(
        commands,
        "pool",
        help="a pool's life: take it out of play, put it back, move its money, retire it",
        examples=(
            "  jackpotd pool suspend fortune-floor --reason 'meter sign dark' --key sam.key\n"
            "  jackpotd pool resume fortune-floor --reason 'sign replaced' --key dana.key"
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    suspend = command(
        actions,
        "suspend",
        help="take a pool out of play: its meters stay, its wagers are refused",
        examples="  jackpotd pool suspend fortune-floor --reason 'meter sign dark' --key sam.key",
    )
    add_db(suspend)
    suspend.add_argument("pool", help="the pool to take out of play")
    suspend.add_argument("--reason", required=True, help="why, for the journal")
    add_signers(suspend)
    suspend.set_defaults(run=run_suspend)

    resume = command(
        actions,
        "resume",
        help="put a suspended pool back in play (a manager)",
        examples="  jackpotd pool resume fortune-floor --reason 'sign replaced' --key dana.key",
    )
    add_db(resume)
    resume.add_argument("pool", help="the suspended pool")
    resume.add_argument("--reason", required=True, help="why, for the journal")
    add_signers(resume)
    resume.set_defaults(run=run_resume)

    transfer = command(
        actions,
        "transfer",
        help="move a pool's meter, reserve and overflow onto another pool (two managers)",
        examples=(
            "  jackpotd pool transfer fortune-floor --to fortune-annex --reason 'T3 removed' "
            "--key dana.key --save /tmp/transfer.json\n"
            "  jackpotd cosign /tmp/transfer.json --key lee.key"
        ),
    )
    add_db(transfer)
    transfer.add_argument("pool", help="the pool whose money moves (left suspended, empty)")
    transfer.add_argument("--to", required=True, help="the pool that receives it")
    transfer.add_argument("--reason", required=True, help="why, for the journal")
    add_cause(transfer)
    add_signers(transfer, dual=True)
    transfer.set_defaults(run=run_transfer)

    retire = command(
        actions,
        "retire",
        help="close a pool for good, with the disposition of every cent (two managers)",
        examples=(
            "  jackpotd pool retire fortune-floor --disposition orphaned --reason 'floor closed' "
            "--key dana.key --key lee.key\n"
            "  jackpotd pool retire fortune-floor --disposition final-award --award 'seat 2 of "
            "T3, slip 9001' --reason 'floor closed' --key dana.key --key lee.key"
        ),
    )
    add_db(retire)
    retire.add_argument("pool", help="the pool to close")
    retire.add_argument(
        "--disposition", required=True, choices=DISPOSITIONS, help="where every cent it holds goes"
    )
    retire.add_argument("--award", default="", help="a final award's record: who, how paid")
    retire.add_argument("--reason", required=True, help="why, for the journal")
    add_cause(retire)
    add_signers(retire, dual=True)
    retire.set_defaults(run=run_retire)


def run_suspend(args: argparse.Namespace) -> int:
    """Journal a pool's suspension, signed."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "suspend-pool")
        event = PoolSuspended(
            f"suspend-{uuid.uuid4()}", desk.now(), args.pool, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)


def add_cause(parser: argparse.ArgumentParser) -> None:
    """``--cause``: the documented cause a jurisdiction profile may ask for."""
    parser.add_argument(
        "--cause",
        choices=CAUSES,
        help="the documented cause (a jurisdiction profile may ask for one: docs/rules.md)",
    )


def _with_cause(event: E, cause: str | None) -> E:
    return event if cause is None else msgspec.structs.replace(event, cause=cause)


def run_transfer(args: argparse.Namespace) -> int:
    """Journal a transfer between pools, signed by two managers (or saved for the second)."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "transfer-pool")
        event = PoolTransferred(
            f"transfer-{uuid.uuid4()}", desk.now(), args.pool, args.to, keys[0][0], args.reason
        )
        return conclude(args, desk, _with_cause(event, args.cause), keys)


def run_retire(args: argparse.Namespace) -> int:
    """Journal a pool's retirement with its disposition, signed by two managers."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "retire-pool")
        event = PoolRetired(
            f"retire-{uuid.uuid4()}", desk.now(), args.pool, args.disposition, keys[0][0],
            args.reason, args.award,
        )  # fmt: skip
        return conclude(args, desk, _with_cause(event, args.cause), keys)


def run_resume(args: argparse.Namespace) -> int:
    """Journal a suspended pool's resumption, signed."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "resume-pool")
        event = PoolResumed(
            f"resume-{uuid.uuid4()}", desk.now(), args.pool, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)
