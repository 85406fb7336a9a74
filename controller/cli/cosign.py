"""``jackpotd cosign FILE``: a second operator adds their signature to a saved action, journals it.

Dual control with each operator at their own account: the first signs the action with
``--save FILE`` (any signing command, controller/cli/submit.py), which writes the signed event
and journals nothing; the second reads what they are about to sign, printed in full, and
signs it with their own key file. The signature is bound as every other (the journal, the
target as the state stands now, the window of the event's time), so a file held past its
window, or signed against a state that changed since, is refused by the ledger or the daemon
like any stale signature (docs/operations.md, "Dual control").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from controller.cli.common import CommandError, add_db, command
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.events import decode_event, encode_event
from controller.ledger.binding import target_of
from controller.runtime.operator_desk import ACTIONS
from controller.security.signatures import signatures_of

if TYPE_CHECKING:
    import argparse

    from controller.events import AnyEvent


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``cosign``."""
    cosign = command(
        commands,
        "cosign",
        help="add your signature to an action another operator signed and saved, and journal it",
        examples=(
            "  jackpotd adjust fortune-floor --amount -12.34 --reason '...' --key sam.key "
            "--save adjust.json\n"
            "  jackpotd cosign adjust.json --key lee.key     # the second operator"
        ),
    )
    add_db(cosign)
    cosign.add_argument("file", type=Path, help="the action saved with --save")
    add_signers(cosign)
    cosign.set_defaults(run=run_cosign)


def saved_action(path: Path) -> AnyEvent:
    """The signed action a file holds, refused unless it is one the signing commands make."""
    try:
        event = decode_event(path.read_bytes())
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror}") from error
    except msgspec.MsgspecError as error:
        raise CommandError(f"{path}: not a saved action: {error}") from error
    if not isinstance(event, ACTIONS) or not signatures_of(event):
        raise CommandError(f"{path}: not an operator's action signed by someone")
    return event


def run_cosign(args: argparse.Namespace) -> int:
    """Show the action, sign it, and journal it (or save it again for a third signer)."""
    event = saved_action(args.file)
    kind = type(event).__struct_config__.tag
    shown = encode_event(msgspec.structs.replace(event, signatures=msgspec.UNSET)).decode()
    names = ", ".join(signature.operator for signature in signatures_of(event))
    with open_desk(args) as desk:
        # What the operator signs, before their passphrase is asked (on stderr: --json stays
        # the receipt alone).
        print(f"{args.file}: {kind}, signed by {names}:\n  {shown}", file=sys.stderr)
        print(f"  it acts on {target_of(desk.state, event)}", file=sys.stderr)
        keys = signers(args, desk, str(kind))
        return conclude(args, desk, event, keys)
