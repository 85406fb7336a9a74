"""``jackpotd operator``: enroll, list and revoke operators; and PIN checks for every action.

A supervisor's command names the operator (``--by``) and proves it with the operator's PIN,
read from ``--pin-file``, from ``$JACKPOTD_PIN`` (for scripts) or typed at a prompt that does
not echo. A wrong PIN is refused and journaled as a fault, so failed attempts are on record.
"""

from __future__ import annotations

import getpass
import os
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import CommandError, add_db, now, open_journal, report_receipt
from controller.events import FaultRecorded, OperatorEnrolled, OperatorRevoked
from controller.operators import PinError, Role, enroll, verify_pin

if TYPE_CHECKING:
    import argparse

    from controller.journal import Journal

PIN_ENVIRONMENT = "JACKPOTD_PIN"


def add_pin(parser: argparse.ArgumentParser) -> None:
    """The option that carries an operator's PIN (besides the environment and the prompt)."""
    parser.add_argument(
        "--pin-file",
        type=Path,
        help=f"a file holding the PIN (else ${PIN_ENVIRONMENT} or a prompt)",
    )


def read_pin(pin_file: Path | None, prompt: str, environment: str = PIN_ENVIRONMENT) -> str:
    """A PIN from a file, the environment or the terminal."""
    if pin_file is not None:
        try:
            return pin_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise CommandError(f"--pin-file: cannot read {pin_file}: {error.strerror}") from None
    if pin := os.environ.get(environment):
        return pin
    if not sys.stdin.isatty():
        raise CommandError(f"no PIN: use --pin-file, ${environment} or a terminal")
    return getpass.getpass(prompt)


def authenticate(journal: Journal, name: str, action: str, pin_file: Path | None) -> None:
    """Check that ``name`` is an operator allowed ``action`` and that the PIN is theirs."""
    operators = journal.state.operators
    if not operators:
        raise CommandError("no operator is enrolled: enroll a manager with jackpotd operator add")
    operator = operators.get(name)
    if operator is None:
        raise CommandError(f"{name!r} is not an enrolled operator")
    if not operator.may(action):
        raise CommandError(f"{name} ({operator.role}) may not {action}")
    if not verify_pin(operator, read_pin(pin_file, f"PIN for {name}: ")):
        journal.append(
            FaultRecorded(f"fault-{uuid.uuid4()}", now(), "auth", "wrong-pin", f"{name} {action}")
        )
        raise CommandError(f"wrong PIN for {name}")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``operator add|list|revoke``."""
    parser = commands.add_parser("operator", help="enroll, list and revoke operators")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    add = actions.add_parser("add", help="enroll an operator (the first must be a manager)")
    add_db(add)
    add.add_argument("name")
    add.add_argument("--role", choices=[role.value for role in Role], required=True)
    add.add_argument("--by", help="the manager enrolling them (not needed for the first)")
    add_pin(add)
    add.add_argument("--new-pin-file", type=Path, help="a file holding the new operator's PIN")
    add.set_defaults(run=run_add)

    listing = actions.add_parser("list", help="the enrolled operators")
    add_db(listing)
    listing.set_defaults(run=run_list)

    revoke = actions.add_parser("revoke", help="an operator may no longer act")
    add_db(revoke)
    revoke.add_argument("name")
    revoke.add_argument("--reason", required=True)
    revoke.add_argument("--by", required=True)
    add_pin(revoke)
    revoke.set_defaults(run=run_revoke)


def run_add(args: argparse.Namespace) -> int:
    """Enroll an operator; after the first, a manager must authenticate."""
    with open_journal(args, must_exist=False) as journal:
        by = "bootstrap"
        if journal.state.operators:
            if not args.by:
                raise CommandError("--by: a manager must enroll new operators")
            authenticate(journal, args.by, "enroll", args.pin_file)
            by = args.by
        pin = read_pin(args.new_pin_file, f"new PIN for {args.name}: ", "JACKPOTD_NEW_PIN")
        typed = args.new_pin_file is None and not os.environ.get("JACKPOTD_NEW_PIN")
        if typed and getpass.getpass("again: ") != pin:
            raise CommandError("the PINs differ")
        try:
            operator = enroll(args.name, Role(args.role), pin)
        except PinError as error:
            raise CommandError(str(error)) from None
        event = OperatorEnrolled(
            f"operator-{uuid.uuid4()}", now(), operator.name, str(operator.role), operator.salt,
            operator.pin_hash, operator.kdf, by,
        )  # fmt: skip
        return report_receipt(args, journal.append(event))


def run_list(args: argparse.Namespace) -> int:
    """Print the operators (never their hashes)."""
    with open_journal(args) as journal:
        operators = sorted(journal.state.operators.values(), key=lambda op: op.name)
    for operator in operators:
        print(f"{operator.name}\t{operator.role}")
    if not operators:
        print("no operators enrolled")
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    """Revoke an operator (a manager's action)."""
    with open_journal(args) as journal:
        authenticate(journal, args.by, "enroll", args.pin_file)
        event = OperatorRevoked(f"operator-{uuid.uuid4()}", now(), args.name, args.by, args.reason)
        return report_receipt(args, journal.append(event))
