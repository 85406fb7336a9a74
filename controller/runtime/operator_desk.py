"""The operator socket's requests and answers, and what the daemon checks before journaling one.

An operator signs with their own account and key file on the controller's box (or beside it);
the service user never reads the key. The CLI asks the running daemon, on its operator socket
(controller/service/operator_socket.py), for what it needs to sign and then hands it the signed
event to journal (docs/operations.md, "Signing as the operator"). Two requests, each one framed
JSON :class:`OperatorRequest` (a 4-byte big-endian length, then the body) on a connection of
its own, answered with one framed :class:`OperatorAnswer`:

* ``state``, "what do I sign": the ledger's state as the daemon runs it (the snapshot a
  checkpoint signs, controller/ledger/snapshot.py), its head, and the controller's clock. The
  CLI drafts the event from that state and binds each signature with the ledger's own
  :func:`controller.ledger.binding.binding_for`: the journal's identity, the target as the
  ledger names it (the pending payout and its amount, the pool's revision, the halt of a
  link...) and a window that opens at the controller's time.
* ``submit``, "journal this signed event": the daemon hands it to the sequencer, the one
  writer, with a provenance naming the socket and the peer's uid (:func:`provenance`), and
  answers with the receipt: applied, or the ledger's reason for refusing it.

The socket is only a transport. The ledger checks every signature, binding, role and dual
control as on any other path. What is checked here is what only the daemon can check, or what
keeps the socket from being a way in for other input: a request's size and form, an event of a
kind the signing commands make (:data:`ACTIONS`; a table's word never comes this way), and
signatures whose window holds the controller's clock now (the ledger has no clock: a signature
kept past its window would otherwise still apply on an unchanged state). Anything else is
refused with a reason (:class:`DeskRefusal`), which the socket journals as a fault.
"""

from __future__ import annotations

import re
import struct
from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from controller.agent_events import TableAgentEnrolled, TableAgentRevoked
from controller.errors import InputError
from controller.events import (
    AuthenticationFailed,
    ConfigurationApproved,
    FaultsAcknowledged,
    HistoryRestored,
    HitVerified,
    JournalIdentified,
    ManifestApproved,
    MeterAdjusted,
    OperatorEnrolled,
    OperatorRevoked,
    OperatorUnlocked,
    PasskeyEnrolled,
    PasskeyRevoked,
    RoundVoided,
    decode_event,
)
from controller.pool_events import PoolResumed, PoolRetired, PoolSuspended, PoolTransferred
from controller.security.signatures import binding_of, signatures_of
from controller.wide_events import SiteResumed

if TYPE_CHECKING:
    from controller.events import AnyEvent

VERSION: Final = 1
MAX_REQUEST: Final = 1 << 20
"""The largest request body taken, in bytes (a manifest's approval is some 40 KiB)."""
MAX_ANSWER: Final = 1 << 26
"""The largest answer a client reads (the ledger's state grows with the signed actions kept)."""
LENGTH: Final = struct.Struct(">I")
SOURCE: Final = "operator-socket"
"""The first word of the provenance of what comes through the socket (docs/journal.md)."""

ACTIONS: Final = (
    HitVerified, RoundVoided, MeterAdjusted, OperatorEnrolled, OperatorRevoked, OperatorUnlocked,
    ConfigurationApproved, ManifestApproved, HistoryRestored, JournalIdentified, SiteResumed,
    TableAgentEnrolled, TableAgentRevoked, AuthenticationFailed, PasskeyEnrolled, PasskeyRevoked,
    PoolSuspended, PoolResumed, PoolTransferred, PoolRetired, FaultsAcknowledged,
)  # fmt: skip
"""What the signing commands journal (and a wrong passphrase's failed authentication), and
the passkeys' enrollments and revocations the supervisors' console relays (controller/web/
console.py): a manager's signed actions like any other."""

MALFORMED: Final = "operator-malformed"
TOO_LARGE: Final = "operator-too-large"
NOT_AN_ACTION: Final = "operator-not-an-action"
EXPIRED: Final = "operator-signature-expired"
BUSY: Final = "operator-busy"
TIMEOUT: Final = "operator-timeout"
REASONS: Final = (MALFORMED, TOO_LARGE, NOT_AN_ACTION, EXPIRED, BUSY, TIMEOUT)
"""The reasons of the faults the socket journals (``jackpotd_rejected_inputs_total{reason}``)."""

_COMMAND: Final = re.compile(r"[a-z][a-z-]{0,29}( [a-z][a-z-]{0,29})?")
"""A command as typed, with its action: ``verify-hit``, ``operator add``."""


class DeskRefusal(InputError):  # noqa: N818 - a refusal, answered, not a failure
    """A request refused before the sequencer: ``reason`` is one of :data:`REASONS`.

    Bad input from a client of the operator socket, so one of the package's errors
    (controller/errors.py): whatever catches those catches it too.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class OperatorRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One request: ``state``, or ``submit`` of ``event`` made by the CLI's ``command``."""

    v: int
    kind: Literal["state", "submit"]
    command: str = ""
    event: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    """The signed event of a ``submit``, as the journal encodes it (msgspec takes no Raw | None)."""


class ReceiptFields(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What became of a submitted event (controller.ports.Receipt, without its effects)."""

    seq: int
    event_id: str
    outcome: str
    reason: str
    duplicate: bool = False
    conflict: bool = False


class OperatorAnswer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An answer: a refusal (``ok`` false, ``reason``), the state, or a receipt."""

    ok: bool
    reason: str = ""
    at: str = ""
    """The controller's clock when it answered ``state``: the time of the event to sign."""
    head_seq: int = 0
    head_hash: str = ""
    state: str = ""
    """The ledger's state as the daemon runs it (controller/ledger/snapshot.py)."""
    receipt: ReceiptFields | None = None


_REQUESTS: Final = msgspec.json.Decoder(OperatorRequest)
_ANSWERS: Final = msgspec.json.Decoder(OperatorAnswer)


def frame(message: OperatorRequest | OperatorAnswer) -> bytes:
    """``message`` as JSON behind its 4-byte length."""
    body = msgspec.json.encode(message)
    return LENGTH.pack(len(body)) + body


def body_length(header: bytes, most: int) -> int:
    """The length a header announces; refused above ``most``."""
    (length,) = LENGTH.unpack(header)
    if length > most:
        raise DeskRefusal(TOO_LARGE, f"a request of {length:,} bytes (at most {most:,})")
    return int(length)


def request_of(body: bytes) -> OperatorRequest:
    """The request ``body`` holds, or a refusal saying what is wrong with it."""
    try:
        request = _REQUESTS.decode(body)
    except msgspec.MsgspecError as error:
        raise DeskRefusal(MALFORMED, f"not an operator request: {error}") from None
    if request.v != VERSION:
        raise DeskRefusal(MALFORMED, f"request version {request.v} (this controller reads 1)")
    if request.kind == "submit" and not _COMMAND.fullmatch(request.command):
        raise DeskRefusal(MALFORMED, f"command {request.command[:40]!r} is not a command's name")
    return request


def answer_of(body: bytes) -> OperatorAnswer:
    """The answer ``body`` holds (the client's side)."""
    return _ANSWERS.decode(body)


def action_of(request: OperatorRequest) -> AnyEvent:
    """The event a ``submit`` carries, refused unless it is an operator's action."""
    if bytes(request.event) == b"null":
        raise DeskRefusal(MALFORMED, "a submit without its event")
    try:
        event = decode_event(bytes(request.event))
    except msgspec.MsgspecError as error:
        raise DeskRefusal(MALFORMED, f"not an event: {error}") from None
    if not isinstance(event, ACTIONS):
        kind = type(event).__struct_config__.tag
        raise DeskRefusal(
            NOT_AN_ACTION,
            f"{kind} is not an operator's action: the socket takes only what the signing "
            "commands journal",
        )
    return event


def expired(event: AnyEvent, now: datetime) -> None:
    """Refuse a signature whose window does not hold the controller's clock ``now``.

    An unbound signature (a journal founded before bindings) has no window: the ledger judges it
    as it always did. A window that does not parse is the ledger's to refuse, in its words.
    """
    for signature in signatures_of(event):
        binding = binding_of(signature)
        if binding is None:
            continue
        try:
            start = datetime.fromisoformat(binding.not_before)
            end = datetime.fromisoformat(binding.not_after)
            inside = start <= now <= end
        except (ValueError, TypeError):
            continue
        if not inside:
            raise DeskRefusal(
                EXPIRED,
                f"{signature.operator}'s signature is valid from {binding.not_before} to "
                f"{binding.not_after}, and the controller's clock says {now.isoformat()}: "
                "sign it again",
            )


def provenance(uid: int | None, command: str) -> str:
    """Where a submitted event came from: the socket, the peer's uid and the CLI's command."""
    who = "unknown" if uid is None else str(uid)
    return f"{SOURCE} uid={who} command={command}"
