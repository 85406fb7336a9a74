"""Signing at the command line: operators' key files, passphrases, and failed attempts.

A command that moves money or authority takes ``--key FILE`` once per operator who signs it
(twice for dual control: two people, each with their own key file and passphrase). Each
passphrase is read from the matching ``--passphrase-file``, else from
``$JACKPOTD_PASSPHRASE`` (scripts; with two signers ``$JACKPOTD_PASSPHRASE_1`` and ``_2``),
else typed at a prompt that does not echo.

A wrong passphrase is journaled as a failed authentication of that operator, with the public
key the key file carries, before the command gives up, so that repeated guesses with the
operator's own key file lock the operator out in the ledger (:mod:`controller.ledger.lockouts`)
whichever command they came through. Nothing here decides
anything: the ledger checks every signature again, whatever path the event takes.
"""

from __future__ import annotations

import getpass
import os
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import CommandError
from controller.cli.submit import add_desk, typed
from controller.events import AuthenticationFailed
from controller.security.keys import KeyFileError, open_key, read_key_file

if TYPE_CHECKING:
    import argparse

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.cli.submit import Desk

PASSPHRASE_ENVIRONMENT = "JACKPOTD_PASSPHRASE"  # noqa: S105 - a variable name


def add_signers(
    parser: argparse.ArgumentParser, *, dual: bool = False, required: bool = True
) -> None:
    """The options naming who signs (``--key``), their passphrases, and where the event goes.

    ``required`` false: the command checks for ``--key`` itself (one that can also run
    without signing, as ``config approve --dry-run``). Where the signed event goes (the daemon's
    operator socket, the journal, a file for a second signer) is :func:`controller.cli.submit.
    add_desk`'s.
    """
    what = "once per operator signing (twice: dual control)" if dual else "the operator's"
    parser.add_argument(
        "--key", type=Path, action="append", required=required, help=f"a key file, {what}"
    )
    parser.add_argument(
        "--passphrase-file",
        type=Path,
        action="append",
        default=[],
        help=f"a file holding a key's passphrase, in the order of --key (else "
        f"${PASSPHRASE_ENVIRONMENT} or a prompt)",
    )
    add_desk(parser)


def read_secret(path: Path | None, prompt: str, environment: str) -> str:
    """A passphrase from a file, the environment or the terminal."""
    if path is not None:
        try:
            return path.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as error:
            raise CommandError(f"{path}: cannot read the passphrase: {error.strerror}") from error
        except UnicodeDecodeError as error:
            raise CommandError(f"{path}: the passphrase is not UTF-8 text") from error
    if secret := os.environ.get(environment):
        return secret
    if not sys.stdin.isatty():
        raise CommandError(f"no passphrase: use --passphrase-file, ${environment} or a terminal")
    return getpass.getpass(prompt)


def signers(
    args: argparse.Namespace, desk: Desk, action: str
) -> list[tuple[str, Ed25519PrivateKey]]:
    """Open each ``--key`` with its passphrase; journal a failed attempt and refuse."""
    files: list[Path] = args.key
    passphrases: list[Path] = args.passphrase_file
    if len(passphrases) > len(files):
        raise CommandError("--passphrase-file: more passphrase files than --key files")
    opened: list[tuple[str, Ed25519PrivateKey]] = []
    for index, path in enumerate(files):
        try:
            record = read_key_file(path)
        except KeyFileError as error:
            raise CommandError(str(error)) from error
        name = record.operator
        passphrase_file = passphrases[index] if index < len(passphrases) else None
        environment = PASSPHRASE_ENVIRONMENT
        if len(files) > 1:
            environment += f"_{index + 1}"
        secret = read_secret(passphrase_file, f"passphrase of {name} ({path}): ", environment)
        try:
            opened.append(open_key(path, secret))
        except KeyFileError as error:
            if name in desk.state.operators:
                # With the key file's public key (in the clear): the ledger counts the failure
                # only if it is the key enrolled for ``name``, not a file made under their name.
                failure = AuthenticationFailed(
                    f"auth-{uuid.uuid4()}", desk.now(), name, action, str(error),
                    public_key=record.public_key,
                )  # fmt: skip
                desk.submit(failure, typed(args))
            raise CommandError(str(error)) from error
    return opened
