"""Where a signing command's event goes: the running daemon's operator socket, or the journal.

Every signing command (verify-hit, void, adjust, operator add|unlock|revoke, config approve,
manifest approve, accept-restore, table-agent enroll|revoke, resume-site, identify-journal,
cosign) builds its event once, from a :class:`Desk`: the ledger's state to draft and bind it
against, the time to give it, and where to hand it when it is signed. Two desks:

* :class:`SocketDesk`, the running daemon's operator socket (controller/service/
  operator_socket.py): the operator runs the command with their own account and key file, the
  state and the time are the daemon's, and the daemon journals the signed event through its
  sequencer. The service user never reads the operator's key (docs/operations.md, "Signing as
  the operator").
* :class:`JournalDesk`, the journal itself, opened by whoever runs the command: the service
  user while the daemon is stopped, a lab, the tests (``--direct``, or ``--db FILE``).

Which one (:func:`open_desk`): ``--direct`` or ``--db`` the journal; ``--socket PATH`` that
socket; else the socket named by ``$JACKPOTD_OPERATOR_SOCKET``, by ``--config``'s
``[controller] operator_socket`` or :data:`DEFAULT_SOCKET`, when it exists; else the journal.
A signature made on either is the same bytes, bound the same way
(:func:`controller.ledger.binding.signed_by`), and the ledger checks it the same way.

``--save FILE`` signs and writes the event to FILE instead of journaling it: a second operator
adds their signature with ``jackpotd cosign FILE --key THEIR_KEY``, which journals it (dual
control with each operator at their own account).
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import msgspec

from controller.cli.common import CommandError, open_journal, report_receipt
from controller.clock import utc_now
from controller.config.load import load_config
from controller.errors import JackpotError
from controller.events import encode_event
from controller.ledger.binding import binding_for, signed_by
from controller.ledger.snapshot import state_from_text
from controller.ports import Receipt
from controller.provenances import cli
from controller.runtime.operator_desk import (
    LENGTH,
    MAX_ANSWER,
    VERSION,
    OperatorAnswer,
    OperatorRequest,
    answer_of,
    frame,
)
from controller.security.signatures import signatures_of

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState
    from controller.ledger_journal import LedgerJournal

DEFAULT_SOCKET: Final = Path("/run/jackpotd/operator.sock")
SOCKET_ENVIRONMENT: Final = "JACKPOTD_OPERATOR_SOCKET"
TIMEOUT_S: Final = 60.0
"""How long the daemon may take to answer (a commit waits at most ``commit_hang_s``)."""


class Desk(Protocol):
    """What a signing command drafts against and hands its signed event to."""

    @property
    def state(self) -> LedgerState:
        """The ledger's state the event is drafted and bound against."""

    @property
    def head(self) -> tuple[int, str]:
        """The journal's last row: its seq and hash."""

    def now(self) -> str:
        """The time to give the event (the controller's, through the socket)."""

    def submit(self, event: AnyEvent, command: str) -> Receipt:
        """Journal ``event``, made by ``command``; what became of it."""


class JournalDesk:
    """The journal itself, appended to by whoever runs the command."""

    def __init__(self, journal: LedgerJournal) -> None:
        self.journal = journal

    @property
    def state(self) -> LedgerState:
        """The journal's state now (after anything this command appended)."""
        return self.journal.state

    @property
    def head(self) -> tuple[int, str]:
        """The journal's last row."""
        return self.journal.head

    def now(self) -> str:
        """This machine's clock."""
        return utc_now()

    def submit(self, event: AnyEvent, command: str) -> Receipt:
        """Append ``event`` with the provenance ``cli <command>``."""
        return self.journal.append(event, provenance=cli(command))


class SocketDesk:
    """The running daemon's operator socket: its state, its clock, its sequencer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        answer = self.exchange(OperatorRequest(VERSION, "state"))
        try:
            self._state = state_from_text(answer.state)
        except (JackpotError, ValueError) as error:
            raise CommandError(f"{path}: the daemon's state does not read: {error}") from error
        self._at = answer.at
        self._head = (answer.head_seq, answer.head_hash)

    @property
    def state(self) -> LedgerState:
        """The state the daemon ran when asked."""
        return self._state

    @property
    def head(self) -> tuple[int, str]:
        """The daemon's journal head when asked."""
        return self._head

    def now(self) -> str:
        """The controller's clock when it was asked: the signature's window opens there."""
        return self._at

    def submit(self, event: AnyEvent, command: str) -> Receipt:
        """Hand the signed event to the daemon; its receipt."""
        request = OperatorRequest(VERSION, "submit", command, msgspec.Raw(encode_event(event)))
        receipt = self.exchange(request).receipt
        if receipt is None:
            raise CommandError(f"{self.path}: the daemon answered without a receipt")
        return Receipt(
            receipt.seq, receipt.event_id, receipt.outcome, receipt.reason, (),
            duplicate=receipt.duplicate, conflict=receipt.conflict,
        )  # fmt: skip

    def exchange(self, request: OperatorRequest) -> OperatorAnswer:
        """One request on a connection of its own, and its answer; a refusal is an error."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.settimeout(TIMEOUT_S)
                connection.connect(str(self.path))
                connection.sendall(frame(request))
                (length,) = LENGTH.unpack(_read(connection, LENGTH.size))
                if length > MAX_ANSWER:
                    raise CommandError(f"{self.path}: an answer of {length:,} bytes")
                answer = answer_of(_read(connection, length))
        except (ConnectionRefusedError, FileNotFoundError) as error:
            raise CommandError(
                f"{self.path}: the daemon does not answer ({error.strerror}): is jackpotd "
                "running? While it is stopped, the service user runs the command with --direct"
            ) from error
        except TimeoutError as error:
            raise CommandError(f"{self.path}: no answer within {TIMEOUT_S:g} s") from error
        except OSError as error:
            raise CommandError(f"{self.path}: {error.strerror or error}") from error
        if not answer.ok:
            raise CommandError(f"the controller refused it: {answer.reason}")
        return answer


def _read(connection: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = connection.recv(min(count - len(data), 1 << 16))
        if not chunk:
            raise CommandError("the daemon closed the connection before it answered")
        data += chunk
    return data


def add_desk(parser: argparse.ArgumentParser) -> None:
    """The options that say where the signed event goes (the module docstring)."""
    way = parser.add_mutually_exclusive_group()
    way.add_argument(
        "--socket",
        type=Path,
        metavar="PATH",
        help=f"the running daemon's operator socket (default: ${SOCKET_ENVIRONMENT}, the "
        f"configuration's operator_socket, or {DEFAULT_SOCKET}, if it exists)",
    )
    way.add_argument(
        "--direct",
        action="store_true",
        help="write the journal itself, not through the daemon (the service user, the daemon "
        "stopped)",
    )
    parser.add_argument(
        "--save",
        type=Path,
        metavar="FILE",
        help="write the signed event to FILE instead of journaling it, for a second operator's "
        "jackpotd cosign FILE",
    )


def socket_of(args: argparse.Namespace) -> Path | None:
    """The operator socket to use, None for the journal (the module docstring says which)."""
    if getattr(args, "direct", False):
        return None
    if (given := getattr(args, "socket", None)) is not None:
        return Path(given)
    if getattr(args, "db", None):
        return None
    if candidate := os.environ.get(SOCKET_ENVIRONMENT):
        path = Path(candidate)
    else:
        config: Path | list[Path] | None = getattr(args, "config", None)
        first = config[0] if isinstance(config, list) and config else config
        path = _configured(first if isinstance(first, Path) else None) or DEFAULT_SOCKET
    try:
        return path if stat.S_ISSOCK(path.stat().st_mode) else None
    except OSError:
        return None


def _configured(config: Path | None) -> Path | None:
    """The ``operator_socket`` a configuration file names, if it can be read."""
    if config is None:
        return None
    try:
        named = load_config(config).controller.operator_socket
    except (JackpotError, OSError):
        return None  # an operator may not read the service's file: the default then
    return None if named is None else Path(named)


@contextlib.contextmanager
def open_desk(args: argparse.Namespace, *, must_exist: bool = True) -> Iterator[Desk]:
    """The desk the command drafts against and submits to."""
    path = socket_of(args)
    if path is not None:
        yield SocketDesk(path)
        return
    with open_journal(args, must_exist=must_exist) as journal:
        yield JournalDesk(journal)


def typed(args: argparse.Namespace) -> str:
    """The command as it was typed (``operator add``, ``verify-hit``), for the provenance."""
    action = getattr(args, "action", None)
    return f"{args.command} {action}" if isinstance(action, str) else str(args.command)


def conclude(
    args: argparse.Namespace,
    desk: Desk,
    event: AnyEvent,
    keys: list[tuple[str, Ed25519PrivateKey]],
) -> int:
    """Sign ``event`` with ``keys`` against the desk's state; journal it, or ``--save`` it."""
    event = signed_by(desk.state, event, keys)
    saved: Path | None = getattr(args, "save", None)
    if saved is None:
        return report_receipt(args, desk.submit(event, typed(args)))
    try:
        saved.write_bytes(encode_event(event) + b"\n")
    except OSError as error:
        raise CommandError(f"{saved}: cannot write: {error.strerror}") from error
    names = ", ".join(signature.operator for signature in signatures_of(event))
    binding = binding_for(desk.state, event)
    until = "" if binding is None else f", valid until {binding.not_after}"
    print(
        f"{saved}: {event.event_id}, signed by {names}{until}; not journaled: "
        f"the next operator runs jackpotd cosign {saved} --key KEY_FILE"
    )
    return 0
