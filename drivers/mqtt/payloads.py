"""The JSON payloads of the MQTT topic tree, schema version 1: table events in, meters out.

Every JSON payload is an object with ``"v": 1``; a payload with another version (or none) is
refused with the reason ``bad-version`` rather than guessed at. Money is integer cents. The
status topics carry the plain strings ``online`` and ``offline``, so that a last will (which is
fixed when a client connects) reads the same as a status published later.

**In, from the tables** (``table/<tid>/event/<type>``), each with the ``device`` that sent it
and the device's ``seq`` (unique per device; resends repeat it, and the event id
``<tid>/<device>/<seq>`` makes a resend harmless)::

    bet        {"v":1,"device":"bs-1","seq":17,"seat":3,"spot":"progressive","present":true,
                "amount_cents":500}                                 -> BetSensed
    lock       {"v":1,"device":"dealer","seq":4,"round":"r-0042"}   -> BetsLocked
    card       {"v":1,"device":"shoe","seq":9,"round":"r-0042","position":0,"card":"As"}
                                                                    -> CardDealt
    done       {"v":1,"device":"shoe","seq":60,"round":"r-0042"}    -> DealComplete
    void       {"v":1,"device":"dealer","seq":5,"round":"r-0042","reason":"misdeal"}
                                                                    -> RoundVoided
    heartbeat  {"v":1,"device":"shoe","seq":61,"last":60}           -> Heartbeat (not journaled)

The fields follow the reference serial protocol (:mod:`drivers.serial.protocol`): ``device``
is 1-32 of ``A-Z a-z 0-9 . _ -``; ``seq`` 0 to 2**32-1; ``seat`` 1-99; ``position`` 0-99 (0 is
the dealer); ``spot`` a registered spot's name (controller/rules/spots.py): ``bonus``,
``ace-high``, ``progressive``, ``dynasty`` (the EZ Pai Gow Dynasty Bonus), ``insurance`` (the
NJ insurance wager);
``amount_cents`` 0 to 10**12 (default 0); ``round`` 1-64 of
``A-Z a-z 0-9 . _ : -``; ``card`` a card code (``As``, ``Td``, ``Jk``) kept as sent; a void's
``reason`` is optional text (default ``misdeal``); a heartbeat's ``last`` is optional (0 to
2**32-1). A device numbers its events 1, 2, 3... and never uses a number twice; its heartbeats
take no event number (their ``seq`` counts apart). Unknown fields are refused, so that a
misspelt ``amount`` is not read as zero cents.

A table agent (``jackpotd agent``, docs/ha.md "Table agents") adds three fields to every event
it forwards, always together: ``"boot"`` (1-64 of ``A-Z a-z 0-9 . _ -``), ``"agent_seq"`` (1
and up; in its heartbeat, the highest stored, 0 before any) and ``"acked"`` (the highest
``agent_seq`` a controller has acknowledged to it). The controller acknowledges them
cumulatively (:mod:`drivers.mqtt.agent_wire`). A payload without them reads as before. An
agent with a key adds ``"agent_signature": {"key_id", "at", "signature"}``, carried into the
event for the ledger to judge (docs/ha.md, "Signed forwarding").

What the controller publishes (meters, hits, table commands, checkpoints) is in
:mod:`drivers.mqtt.outgoing`.

Rejections carry a short ``reason`` token (``bad-json``, ``bad-version``, ``bad-seat``,
``missing-field``...) for counters and the journaled fault, and a ``detail`` for people.

**Hostile payloads** (docs/faults.md, "Poison messages"). A table's devices hold valid broker
credentials, so every payload is read as if an attacker wrote it:

* whatever the decoder raises is a :class:`PayloadError`: deep nesting that exhausts the
  parser's recursion (``RecursionError``, not a ``DecodeError``), a number too long to convert,
  anything else, is the rejection ``undecodable``, journaled and acknowledged like any other,
  never an exception that stops the source and gets the message delivered again;
* an object with the same key twice is refused (``duplicate-key``) instead of the last value
  silently winning (``{"amount_cents":500,"amount_cents":100000000}``);
* a heartbeat may carry ``last``, the ``seq`` of the last event the device sent, so that an
  event lost on the way (a broker queue overflowing, a message published before the
  controller first subscribed) shows as a gap (:mod:`controller.runtime.device_sequences`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, Generic, TypeVar

import msgspec

from controller.agent_events import AgentSignature
from controller.clock import utc_now
from controller.events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    RoundVoided,
    TableStatusChanged,
    device_event_id,
)
from controller.rules.cards import Card, CardError
from controller.rules.spots import Spot
from controller.text import control_refusal
from drivers.mqtt.json_objects import (
    MAX_PAYLOAD,
    PREVIEW,
    SCHEMA_VERSION,
    PayloadError,
    check_unique_keys,
    convert,
    decode_object,
    preview,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

MAX_SEQ: Final = 2**32 - 1

ONLINE: Final = b"online"
OFFLINE: Final = b"offline"

Device = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9._-]{1,32}$")]
Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEQ)]
Boot = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9._-]{1,64}$")]
AgentSeq = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
RoundId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9._:-]{1,64}$")]
Seat = Annotated[int, msgspec.Meta(ge=1, le=99)]
Position = Annotated[int, msgspec.Meta(ge=0, le=99)]
Cents = Annotated[int, msgspec.Meta(ge=0, le=10**12)]
Reason = Annotated[str, msgspec.Meta(max_length=200)]
"""Free text, but one line of it: no control or format character (checked by ``_void``)."""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A device of a table is alive; acknowledged but never journaled."""

    table_id: str
    device: str
    seq: int
    last: int | None = None
    """The ``seq`` of the last event the device sent, if it says (end-to-end gap detection)."""


TableMessage = BetSensed | BetsLocked | CardDealt | DealComplete | RoundVoided | Heartbeat
"""What a valid table event payload decodes to."""


@dataclass(frozen=True, slots=True)
class AgentStamp:
    """A table agent's (boot, seq) on a message, and what it was acknowledged through."""

    boot: str
    seq: int
    acked: int
    """The highest ``seq`` a controller has acknowledged to the agent in this boot."""


# Table event payloads (in).


class AgentSignaturePayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``agent_signature``: the table agent's signature of the event (docs/ha.md).

    Carried into the journaled event as it is; only the ledger judges it
    (controller/ledger/table_agents.py).
    """

    key_id: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16}$")]
    at: Annotated[str, msgspec.Meta(max_length=40)]
    signature: Annotated[str, msgspec.Meta(max_length=100)]


class TablePayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Fields of every table event payload.

    ``boot``, ``agent_seq`` and ``acked`` come together, from a table agent (docs/ha.md, "Table
    agents"): the agent's boot, its own number for the message (which the controller
    acknowledges cumulatively on ``table/<tid>/cmd/ack``) and the highest number a controller
    has acknowledged to it. A table that speaks MQTT itself sends none of them.
    """

    v: int
    device: Device
    seq: Seq
    boot: Boot | None = None
    agent_seq: AgentSeq | None = None
    acked: AgentSeq | None = None
    agent_signature: AgentSignaturePayload | None = None


class BetPayload(TablePayload, frozen=True):
    """``event/bet``: a chip arrived on (or left) a side-bet spot."""

    seat: Seat
    spot: Spot  # a registered spot (controller/rules/spots.py), one registered later too
    present: bool
    amount_cents: Cents = 0


class LockPayload(TablePayload, frozen=True):
    """``event/lock``: no more bets; the round begins."""

    round: RoundId


class CardPayload(TablePayload, frozen=True):
    """``event/card``: a card dealt to a position (0 is the dealer)."""

    round: RoundId
    position: Position
    card: str


class DonePayload(TablePayload, frozen=True):
    """``event/done``: every hand of the round is dealt."""

    round: RoundId


class VoidPayload(TablePayload, frozen=True):
    """``event/void``: a misdeal; the round's wagers are returned."""

    round: RoundId
    reason: Reason = "misdeal"


class HeartbeatPayload(TablePayload, frozen=True):
    """``event/heartbeat``: the device is alive, and the last event it sent was ``last``."""

    last: Seq | None = None


@dataclass(frozen=True, slots=True)
class _Head:
    table_id: str
    device: str
    seq: int
    at: str

    @property
    def event_id(self) -> str:
        return device_event_id(self.table_id, self.device, self.seq)


def _bet(head: _Head, bet: BetPayload) -> BetSensed:
    return BetSensed(
        head.event_id,
        head.at,
        head.table_id,
        head.device,
        head.seq,
        seat=bet.seat,
        spot=bet.spot.value,
        present=bet.present,
        amount_cents=bet.amount_cents,
    )


def _lock(head: _Head, lock: LockPayload) -> BetsLocked:
    return BetsLocked(
        head.event_id, head.at, head.table_id, head.device, head.seq, round_id=lock.round
    )


def _card(head: _Head, card: CardPayload) -> CardDealt:
    try:
        Card.parse(card.card)
    except CardError as error:
        raise PayloadError("bad-card", str(error)) from error
    return CardDealt(
        head.event_id,
        head.at,
        head.table_id,
        head.device,
        head.seq,
        round_id=card.round,
        position=card.position,
        card=card.card,
    )


def _done(head: _Head, done: DonePayload) -> DealComplete:
    return DealComplete(
        head.event_id, head.at, head.table_id, head.device, head.seq, round_id=done.round
    )


def _void(head: _Head, void: VoidPayload) -> RoundVoided:
    if (why := control_refusal("reason", void.reason)) is not None:
        raise PayloadError("bad-reason", why)  # the ledger's rule too (controller/text.py)
    return RoundVoided(
        head.event_id,
        head.at,
        head.table_id,
        round_id=void.round,
        by=f"device {head.device}",
        reason=void.reason.strip() or "misdeal",
        refund_contributions=True,
    )


def _heartbeat(head: _Head, beat: HeartbeatPayload) -> Heartbeat:
    return Heartbeat(head.table_id, head.device, head.seq, beat.last)


_P = TypeVar("_P", bound=TablePayload)


class _EventType(Generic[_P]):
    """How one ``event/<type>`` payload is read, and what it becomes."""

    def __init__(self, payload: type[_P], event: Callable[[_Head, _P], TableMessage]) -> None:
        self.payload = payload
        self.event = event
        self._strict = msgspec.json.Decoder(payload)

    def read(self, data: bytes) -> _P:
        """The payload, or :class:`PayloadError` with the reason of the first thing wrong.

        A valid payload (nearly all of them) is decoded straight into its struct. Anything
        else is read again step by step (JSON, version, device and seq, then the type's own
        fields) so that the reason names the first problem the same way for every type.
        """
        if len(data) <= MAX_PAYLOAD:
            try:
                payload = self._strict.decode(data)
            except msgspec.DecodeError:
                pass
            else:
                if payload.v == SCHEMA_VERSION:
                    check_unique_keys(data)
                    return payload
        value = decode_object(data)
        convert(value, _HeadFields)
        return convert(value, self.payload)

    def decode(self, table_id: str, data: bytes, at: str) -> tuple[TableMessage, AgentStamp | None]:
        """The event (or heartbeat) of a payload, and the agent's stamp if it has one."""
        payload = self.read(data)
        message = self.event(_Head(table_id, payload.device, payload.seq, at), payload)
        signed = payload.agent_signature
        if signed is not None and not isinstance(message, Heartbeat):
            signature = AgentSignature(signed.key_id, signed.at, signed.signature)
            message = msgspec.structs.replace(message, agent_signature=signature)
        boot, seq, acked = payload.boot, payload.agent_seq, payload.acked
        if boot is None and seq is None and acked is None:
            return message, None
        if boot is None or seq is None or acked is None:
            raise PayloadError("missing-field", "boot, agent_seq and acked go together")
        return message, AgentStamp(boot, seq, acked)


_EVENT_TYPES: Final[dict[str, _EventType[Any]]] = {
    "bet": _EventType(BetPayload, _bet),
    "lock": _EventType(LockPayload, _lock),
    "card": _EventType(CardPayload, _card),
    "done": _EventType(DonePayload, _done),
    "void": _EventType(VoidPayload, _void),
    "heartbeat": _EventType(HeartbeatPayload, _heartbeat),
}


def decode_table_event(
    table_id: str, event_type: str, data: bytes, *, at: str | None = None
) -> TableMessage:
    """The event (or heartbeat) a table published on ``event/<event_type>``, stamped ``at``.

    ``at`` defaults to now: the controller's clock, not the device's, dates what it journals.
    Raises :class:`PayloadError`.
    """
    return decode_table_message(table_id, event_type, data, at=at)[0]


def decode_table_message(
    table_id: str, event_type: str, data: bytes, *, at: str | None = None
) -> tuple[TableMessage, AgentStamp | None]:
    """As :func:`decode_table_event`, with a table agent's (boot, seq) when the payload has it."""
    kind = _EVENT_TYPES.get(event_type)
    if kind is None:
        known = ", ".join(sorted(_EVENT_TYPES))
        raise PayloadError("unknown-type", f"event type {event_type!r} is not one of {known}")
    with undecodable_as_rejection(data):
        return kind.decode(table_id, data, at or utc_now())


@contextlib.contextmanager
def undecodable_as_rejection(data: bytes) -> Iterator[None]:
    """Turn anything a decoder raises, other than :class:`PayloadError`, into one.

    A payload is input, and no input may stop the source: ``RecursionError`` from deep
    nesting, ``ValueError`` from a number too long to convert, or an error nobody foresaw in a
    parser are all the rejection ``undecodable``, journaled and acknowledged.
    """
    try:
        yield
    except PayloadError:
        raise
    except Exception as error:  # hostile input: every failure is a rejection
        detail = f"{type(error).__name__}: {str(error)[:PREVIEW]} in {preview(data)}"
        raise PayloadError("undecodable", detail) from error


class _HeadFields(msgspec.Struct, frozen=True):
    # Unknown fields are allowed here: they are the type's own, checked by its decoder.
    device: Device
    seq: Seq


def decode_status(data: bytes) -> bool:
    """Whether a status payload says ``online`` (True) or ``offline`` (False)."""
    text = data.strip() if len(data) <= MAX_PAYLOAD else b""
    if text == ONLINE:
        return True
    if text == OFFLINE:
        return False
    raise PayloadError("bad-status", f"expected online or offline, got {preview(data)}")


def table_status_event(
    table_id: str, *, online: bool, event_id: str, at: str
) -> TableStatusChanged:
    """The event of a table's status topic changing (to ``offline``: its last will, usually)."""
    reason = "mqtt status online" if online else "mqtt status offline (last will or shutdown)"
    return TableStatusChanged(event_id, at, table_id, online=online, reason=reason)
