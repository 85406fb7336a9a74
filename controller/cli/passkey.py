"""``jackpotd passkey enroll``: a manager signs, with their key, an enrollment the console drafted.

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
"""

from __future__ import annotations

import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from controller.cli.common import CommandError, add_db, command
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.events import PasskeyEnrolled, decode_event
from controller.security.signatures import signatures_of

if TYPE_CHECKING:
    import argparse

MAX_DRAFT: Final = 64 * 1024
"""A draft is one event: the console answers at most this much."""
FETCH_TIMEOUT_S: Final = 10.0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``passkey enroll``."""
    parser = command(
        commands,
        "passkey",
        help="sign a passkey's enrollment drafted at the supervisors' console",
        examples="  jackpotd passkey enroll --draft URL --key dana.key",
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
