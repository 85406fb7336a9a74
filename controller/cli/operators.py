"""``jackpotd operator``: signing keys, and enrolling, listing, unlocking and revoking operators.

``operator key NAME --out FILE`` makes an operator's Ed25519 key, sealed under a passphrase
(:mod:`controller.security.keys`), and prints its public key. ``operator add NAME --role ROLE
--public-key FILE --key MANAGER_KEY`` enrolls it, signed by a manager. The first operator with
a key is a manager who signs their own enrollment (``--key`` their own key file); from then
on the site's authority is signed (docs/security.md). Private keys never enter the journal.
"""

from __future__ import annotations

import getpass
import os
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import CommandError, add_db, command, open_reader
from controller.cli.signing import add_signers, read_secret, signers
from controller.cli.submit import conclude, open_desk
from controller.cli.tables import Column, print_table
from controller.cli.times import local_time
from controller.events import OperatorEnrolled, OperatorRevoked, OperatorUnlocked
from controller.ledger.lockouts import lockouts_of
from controller.ledger.operators import Role
from controller.security.keys import (
    KeyFileError,
    PassphraseError,
    check_passphrase,
    generate,
    public_key_text,
    read_key_file,
    seal,
    write_key_file,
)

if TYPE_CHECKING:
    import argparse

    from controller.ledger.operators import Operator
    from controller.ledger.state import LedgerState

NEW_PASSPHRASE_ENVIRONMENT = "JACKPOTD_NEW_PASSPHRASE"  # noqa: S105 - a variable name
TYPED_ATTEMPTS = 3  # a weak or mistyped passphrase at the prompt is asked again, this often


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``operator key|add|list|unlock|revoke``."""
    parser = command(
        commands,
        "operator",
        help="operators' keys, enrollment and revocation",
        examples="  jackpotd operator list\n  jackpotd operator key sam --out sam.key",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    key = command(
        actions,
        "key",
        help="make an operator's signing key file",
        examples="  jackpotd operator key 'Sam Supervisor' --out sam.key   # asks a passphrase",
    )
    key.add_argument("name", help="the operator's name, as they will be enrolled")
    key.add_argument("--out", type=Path, required=True, help="the key file to write (0600)")
    key.add_argument(
        "--passphrase-file",
        type=Path,
        help=f"a file holding the new passphrase (else ${NEW_PASSPHRASE_ENVIRONMENT} or a prompt)",
    )
    key.set_defaults(run=run_key)

    add = command(
        actions,
        "add",
        help="enroll an operator (the first: a manager, self-signed)",
        examples=(
            "  jackpotd operator add 'Sam Supervisor' --role supervisor --public-key sam.key "
            "--key manager.key"
        ),
    )
    add_db(add)
    add.add_argument("name", help="the operator's name, as in their key file")
    add.add_argument(
        "--role", choices=[role.value for role in Role], required=True, help="what they may do"
    )
    add.add_argument(
        "--public-key", type=Path, required=True, help="the new operator's key file (public half)"
    )
    add_signers(add)
    add.set_defaults(run=run_add)

    listing = command(
        actions, "list", help="the enrolled operators", examples="  jackpotd operator list"
    )
    add_db(listing)
    listing.set_defaults(run=run_list)

    for name, what, run in (
        ("unlock", "let an operator locked out after failed attempts act again", run_unlock),
        ("revoke", "an operator may no longer act", run_revoke),
    ):
        action = command(
            actions,
            name,
            help=what,
            examples=f"  jackpotd operator {name} 'Sam Supervisor' --reason '...' --key mgr.key",
        )
        add_db(action)
        action.add_argument("name", help="the operator's name")
        action.add_argument("--reason", required=True, help="why, for the journal")
        add_signers(action)
        action.set_defaults(run=run)


def run_key(args: argparse.Namespace) -> int:
    """Make a key file; print the public key to keep with the enrollment papers.

    At a terminal, a weak passphrase or a mistyped second entry is said and asked again, up
    to :data:`TYPED_ATTEMPTS` times; from a file or the environment it is refused at once.
    """
    typed = (
        args.passphrase_file is None
        and not os.environ.get(NEW_PASSPHRASE_ENVIRONMENT)
        and sys.stdin.isatty()
    )
    passphrase = _new_passphrase(args, TYPED_ATTEMPTS if typed else 1, typed=typed)
    key = generate()
    try:
        write_key_file(args.out, seal(key, args.name, passphrase))
    except (PassphraseError, KeyFileError) as error:
        raise CommandError(str(error)) from error
    print(f"{args.out}: key of {args.name}, public key {public_key_text(key)}")
    return 0


def _new_passphrase(args: argparse.Namespace, attempts: int, *, typed: bool) -> str:
    for left in range(attempts - 1, 0, -1):
        try:
            return _passphrase_once(args, typed=typed)
        except CommandError as error:
            print(f"{error}; try again ({left} left)", file=sys.stderr)
    return _passphrase_once(args, typed=typed)


def _passphrase_once(args: argparse.Namespace, *, typed: bool) -> str:
    prompt = f"new passphrase for {args.name}: "
    passphrase = read_secret(args.passphrase_file, prompt, NEW_PASSPHRASE_ENVIRONMENT)
    try:
        check_passphrase(passphrase, args.name)
    except PassphraseError as error:
        raise CommandError(str(error)) from error
    if typed and getpass.getpass("again: ") != passphrase:
        raise CommandError("the passphrases differ")
    return passphrase


def run_add(args: argparse.Namespace) -> int:
    """Enroll an operator with the public half of their key file, signed by a manager."""
    try:
        record = read_key_file(args.public_key)
    except KeyFileError as error:
        raise CommandError(str(error)) from error
    if record.operator != args.name:
        raise CommandError(f"{args.public_key} is the key of {record.operator}, not {args.name}")
    with open_desk(args, must_exist=False) as desk:
        keys = signers(args, desk, "enroll")
        event = OperatorEnrolled(
            f"operator-{uuid.uuid4()}", desk.now(), args.name, args.role, "", "", "ed25519",
            keys[0][0], public_key=record.public_key,
        )  # fmt: skip
        return conclude(args, desk, event, keys)


def run_list(args: argparse.Namespace) -> int:
    """Print the operators: role, key and whether they are locked out (never a secret)."""
    with open_reader(args) as journal:
        state = journal.state
    operators = sorted(state.operators.values(), key=lambda op: op.name)
    if not operators:
        print("no operators enrolled")
        return 0
    print_table(
        [Column("operator", whole=True), Column("role"), Column("key"), Column("state")],
        (
            (
                operator.name,
                operator.role,
                operator.public_key[:12] + "..." if operator.public_key else "no key (PIN)",
                _lock_state(state, operator),
            )
            for operator in operators
        ),
    )
    return 0


def _lock_state(state: LedgerState, operator: Operator) -> str:
    """``LOCKED OUT`` (until the last window's end, on a journal with an identity), or failures."""
    if not operator.locked:
        return f"{operator.failures} failed attempts"
    windows = lockouts_of(state, operator.name).windows
    if not windows:
        return "LOCKED OUT"
    return f"LOCKED OUT until {local_time(max(end for _, end in windows))}"


def run_unlock(args: argparse.Namespace) -> int:
    """A manager lifts a lockout."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "unlock")
        event = OperatorUnlocked(
            f"operator-{uuid.uuid4()}", desk.now(), args.name, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)


def run_revoke(args: argparse.Namespace) -> int:
    """A manager revokes an operator."""
    with open_desk(args) as desk:
        keys = signers(args, desk, "enroll")
        event = OperatorRevoked(
            f"operator-{uuid.uuid4()}", desk.now(), args.name, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)
