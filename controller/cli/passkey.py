"""``jackpotd passkey``: enroll (a manager signs a drafted enrollment), list and revoke passkeys.

At the supervisors' console a manager starts a passkey's enrollment and the operator's device
registers it (controller/web/console.py); the page then names the draft. Any manager the
enrollment needs signs it, with their passkey at the page or with their operator key file
here, at their own account: ``--draft`` is the draft's address the page shows
(``https://pit.example:8080/console/api/drafts/draft-…``) or a file it was saved to. The
command shows what is signed (the operator, the label, the relying party id and origins, the
credential) before it asks the passphrase, signs it bound to the ledger's state as every
signing command does (controller/cli/signing.py), and hands it in through the operator socket
(controller/cli/submit.py), the door the console and the CLI share. The ledger checks the
registration, the managers and the relying party itself (docs/operations.md, "The
supervisors' console").

``list`` shows every passkey the journal enrolled, its operator, label, relying party, sign
count and whether it is live, revoked or suspected cloned (the alert a count that went back
raises); ``revoke`` is a manager's signed withdrawal of one, named by its credential id or a
prefix of it that names one passkey alone.
"""

from __future__ import annotations

import json
import ssl
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from controller.cli.common import CommandError, add_db, command, open_reader
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.cli.tables import Column, print_table
from controller.events import PasskeyEnrolled, PasskeyRevoked, decode_event
from controller.ledger.passkeys import passkeys_of
from controller.security.signatures import signatures_of

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from controller.ledger.operators import Passkey

MIN_PREFIX: Final = 6
"""The shortest prefix of a credential id that may name it (it must name one alone)."""
MAX_DRAFT: Final = 64 * 1024
"""A draft is one event: the console answers at most this much."""
FETCH_TIMEOUT_S: Final = 10.0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``passkey enroll``, ``passkey list`` and ``passkey revoke``."""
    parser = command(
        commands,
        "passkey",
        help="the operators' passkeys: sign an enrollment the console drafted, list, revoke",
        examples=(
            "  jackpotd passkey enroll --draft URL --key dana.key\n"
            "  jackpotd passkey list\n"
            "  jackpotd passkey revoke 3q2-9f --reason 'tablet lost, ticket 118' --key dana.key"
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    enroll = command(
        actions,
        "enroll",
        help="sign, as a manager with your key file, the enrollment the console drafted",
        examples=(
            "  jackpotd passkey enroll --draft "
            "https://pit.example:8080/console/api/drafts/draft-1f2e --key dana.key\n"
            "  jackpotd passkey enroll --draft enrollment.json --key dana.key"
        ),
    )
    enroll.add_argument(
        "--draft",
        required=True,
        metavar="URL|FILE",
        help="the draft's address the console shows, or a file holding it",
    )
    enroll.add_argument(
        "--ca",
        type=Path,
        metavar="FILE",
        help="the CA certificate (PEM) the console's certificate is checked against (default: "
        "the system's)",
    )
    add_db(enroll)
    add_signers(enroll)
    enroll.set_defaults(run=run_enroll)
    listed = command(
        actions,
        "list",
        help="every passkey enrolled: operator, label, relying party, sign count, state",
        examples="  jackpotd passkey list\n  jackpotd passkey list --json",
    )
    add_db(listed)
    listed.set_defaults(run=run_list)
    revoke = command(
        actions,
        "revoke",
        help="withdraw a passkey (a manager's signature): none of its assertions is taken again",
        examples=(
            "  jackpotd passkey revoke 3q2-9f --reason 'tablet lost, ticket 118' --key dana.key\n"
            "  jackpotd passkey revoke --credential=-Xq7 --reason 'tablet lost' --key dana.key"
        ),
    )
    add_db(revoke)
    revoke.add_argument(
        "credential",
        nargs="?",
        help="the credential id (jackpotd passkey list), or a prefix naming one",
    )
    revoke.add_argument(
        "--credential",
        dest="credential_option",
        metavar="ID",
        help="the same, for an id that begins with '-' (base64url): --credential=-AbC...",
    )
    revoke.add_argument("--reason", required=True, help="why, for the journal")
    add_signers(revoke)
    revoke.set_defaults(run=run_revoke)


def run_enroll(args: argparse.Namespace) -> int:
    """Show the drafted enrollment, sign it, and hand it in."""
    where: str = args.draft
    event = drafted_enrollment(where, _read_draft(where, args.ca))
    with open_desk(args) as desk:
        # What the manager signs, before their passphrase is asked (stderr: --json stays the
        # receipt alone).
        print(_shown(where, event), file=sys.stderr)
        keys = signers(args, desk, "passkey-enrolled")
        return conclude(args, desk, event, keys)


def drafted_enrollment(where: str, body: bytes) -> PasskeyEnrolled:
    """The registered, unsigned enrollment ``body`` holds, or one line saying why not."""
    try:
        event = decode_event(body)
    except msgspec.MsgspecError as error:
        refused = _refusal(body)
        if refused:  # the console's answer for a draft it no longer holds
            raise CommandError(f"{where}: the console says: {refused}") from error
        raise CommandError(f"{where}: not a drafted enrollment: {error}") from error
    if not isinstance(event, PasskeyEnrolled):
        kind = type(event).__struct_config__.tag
        raise CommandError(f"{where}: a {kind} event, not a passkey's enrollment")
    if isinstance(event.registration, msgspec.UnsetType):
        raise CommandError(
            f"{where}: the passkey is not registered yet: the operator registers it at the "
            "console first"
        )
    if signatures_of(event):
        names = ", ".join(signature.operator for signature in signatures_of(event))
        raise CommandError(
            f"{where}: signed already by {names}: the console's draft is signed here unsigned"
        )
    return event


def _refusal(body: bytes) -> str:
    """The console's refusal in ``body`` (``{"status": "refused", "plain": ...}``), else ''."""
    try:
        answer = msgspec.json.decode(body, type=dict[str, object])
    except msgspec.MsgspecError:
        return ""
    plain = answer.get("plain")
    return plain if answer.get("status") == "refused" and isinstance(plain, str) else ""


def _shown(where: str, event: PasskeyEnrolled) -> str:
    registration = event.registration
    credential = "" if isinstance(registration, msgspec.UnsetType) else registration.credential_id
    return (
        f"{where}: passkey-enrolled {event.event_id}, drafted by {event.by} at {event.at}:\n"
        f"  operator {event.operator}, label {event.label!r}\n"
        f"  relying party {event.rp_id}, origins {', '.join(event.origins)}\n"
        f"  credential {credential}"
    )


def _read_draft(where: str, ca: Path | None) -> bytes:
    """The draft's bytes, from the console's address or a file."""
    if not where.startswith(("https://", "http://")):
        try:
            with Path(where).open("rb") as opened:
                body = opened.read(MAX_DRAFT + 1)
        except OSError as error:
            raise CommandError(f"{where}: cannot read: {error.strerror}") from error
        return _bounded(where, body)
    context = None
    if where.startswith("https://"):
        try:
            context = ssl.create_default_context(cafile=str(ca) if ca is not None else None)
        except (OSError, ssl.SSLError) as error:
            raise CommandError(f"--ca {ca}: not a CA certificate: {error}") from error
    try:
        with urllib.request.urlopen(  # noqa: S310 - the scheme is checked above
            urllib.request.Request(where, headers={"Accept": "application/json"}),  # noqa: S310
            timeout=FETCH_TIMEOUT_S,
            context=context,
        ) as response:
            body = response.read(MAX_DRAFT + 1)
    except urllib.error.HTTPError as error:
        raise CommandError(f"{where}: the console answered {error.code} {error.reason}") from error
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise CommandError(f"{where}: cannot fetch the draft: {reason}") from error
    return _bounded(where, body)


def _bounded(where: str, body: bytes) -> bytes:
    if len(body) > MAX_DRAFT:
        raise CommandError(f"{where}: more than {MAX_DRAFT} bytes: not a drafted enrollment")
    return body


def _state_of(passkey: Passkey) -> str:
    if passkey.revoked:
        return "revoked"
    if passkey.clone_suspected is not None:
        return f"CLONE SUSPECTED (a count went back to {passkey.clone_suspected})"
    return "live"


def run_list(args: argparse.Namespace) -> int:
    """Print every passkey the journal enrolled (never a secret: public keys are not shown)."""
    with open_reader(args) as journal:
        passkeys = passkeys_of(journal.state)
    rows = sorted(passkeys.items(), key=lambda item: (item[1].operator, item[1].label, item[0]))
    if getattr(args, "json", False):
        document = [
            {
                "credential_id": credential, "operator": passkey.operator,
                "label": passkey.label, "rp_id": passkey.rp_id,
                "origins": list(passkey.origins), "sign_count": passkey.sign_count,
                "revoked": passkey.revoked, "clone_suspected": passkey.clone_suspected,
            }
            for credential, passkey in rows
        ]  # fmt: skip
        print(json.dumps(document, indent=2))
        return 0
    if not rows:
        print("no passkeys enrolled")
        return 0
    print_table(
        [Column("operator", whole=True), Column("label"), Column("credential", whole=True),
         Column("relying party"), Column("sign count", figures=True), Column("state")],
        [
            (passkey.operator, passkey.label, credential, passkey.rp_id, passkey.sign_count,
             _state_of(passkey))
            for credential, passkey in rows
        ],
    )  # fmt: skip
    return 0


def credential_named(passkeys: Mapping[str, Passkey], named: str) -> str:
    """The one credential id ``named`` is, or begins; a clear refusal otherwise."""
    if named in passkeys:
        return named
    found = [credential for credential in passkeys if credential.startswith(named)]
    if len(named) >= MIN_PREFIX and len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise CommandError(f"{named!r} begins {len(found)} passkeys' ids: give more of it")
    raise CommandError(f"no passkey enrolled has the id {named!r} (jackpotd passkey list)")


def _named(args: argparse.Namespace) -> str:
    """The credential the command names, whichever way it was given."""
    given = [str(name) for name in (args.credential, args.credential_option) if name is not None]
    if len(given) != 1:
        raise CommandError(
            "name one passkey: jackpotd passkey revoke ID, or --credential=ID for an id that "
            "begins with '-'"
        )
    return given[0]


def run_revoke(args: argparse.Namespace) -> int:
    """Journal a manager's revocation of one passkey; exit 1 if the ledger refused it."""
    with open_desk(args) as desk:
        passkeys = passkeys_of(desk.state)
        credential = credential_named(passkeys, _named(args))
        passkey = passkeys[credential]
        print(
            f"revoking {passkey.operator}'s passkey {passkey.label!r} ({credential})",
            file=sys.stderr,
        )
        keys = signers(args, desk, "passkey-revoked")
        event = PasskeyRevoked(
            f"passkey-revoke-{uuid.uuid4()}", desk.now(), credential, keys[0][0], args.reason
        )
        return conclude(args, desk, event, keys)
