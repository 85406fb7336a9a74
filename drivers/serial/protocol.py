"""Payloads of the reference serial protocol: device messages in, ACK and NAK out.

A payload (the text between ``$`` and ``*``, see :mod:`drivers.serial.framing`) is a line of
comma-separated fields, ``TYPE,device,seq,fields...``. Devices send (docs/architecture.md)::

    BET,<dev>,<seq>,<seat>,<spot>,<0|1>[,<amount_cents>]    -> BetSensed
    LOCK,<dev>,<seq>,<round>                                -> BetsLocked
    CARD,<dev>,<seq>,<round>,<position>,<card>              -> CardDealt
    HB,<dev>,<seq>[,<last>]                                 -> a heartbeat (not an event)

and, as two extensions of the reference protocol that the ledger needs to close a round::

    DONE,<dev>,<seq>,<round>                                -> DealComplete
    VOID,<dev>,<seq>,<round>[,<reason>]                     -> RoundVoided (reason "misdeal")

The host answers ``ACK,<dev>,<seq>`` once the message is durable (or was a heartbeat), and
``NAK,<dev>,<seq>,<reason>`` to a frame whose checksum was good but whose payload is not a
valid message, so the device stops resending something that will never be accepted.

A device numbers its events 1, 2, 3... and never uses a number twice; a heartbeat's ``seq``
counts apart from them (it takes no event number), and its optional ``last`` is the ``seq``
of the last event the device sent, so that a lost event shows as a gap
(:mod:`controller.runtime.device_sequences`). Whatever a decoder raises on a payload is a
:class:`ProtocolError` (``undecodable``): no input stops the link.

Fields: ``dev`` is 1-32 of ``A-Z a-z 0-9 . _ -`` (it becomes part of the event id
``table/dev/seq``, so it has no ``/``); ``seq`` is a decimal number below 2**32, unique per
device (the ACK echoes it without leading zeros); ``seat`` is 1-99 and ``position`` 0-99 (0 is
the dealer); ``spot`` is a registered spot's name (controller/rules/spots.py): ``bonus``,
``ace-high``, ``progressive``, ``dynasty`` (the EZ Pai Gow Dynasty Bonus) or ``insurance``
(the NJ insurance wager);
``amount_cents`` a decimal count of cents; ``round`` is 1-64 of
``A-Z a-z 0-9 . _ : -``; ``card`` a card code such as ``As``, ``Td`` or ``Jk`` (kept as sent);
a VOID reason is free text without a comma.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from controller.clock import utc_now
from controller.errors import InputError
from controller.events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    RoundVoided,
    device_event_id,
)
from controller.rules.cards import Card, CardError
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_SEQ: Final = 2**32 - 1

_DEVICE: Final = re.compile(r"[A-Za-z0-9._-]{1,32}")
_ROUND: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_NUMBER: Final = re.compile(r"[0-9]{1,12}")


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A device of a table is alive; acknowledged but never journaled."""

    table_id: str
    device: str
    seq: int
    last: int | None = None
    """The ``seq`` of the last event the device sent, if it says (end-to-end gap detection)."""


DeviceMessage = BetSensed | BetsLocked | CardDealt | DealComplete | RoundVoided | Heartbeat
"""What a valid payload decodes to: an event for the intake, or a heartbeat."""


class ProtocolError(InputError, ValueError):
    """A payload that is no valid message; ``device``/``seq`` are set when they were readable.

    ``reason`` is a short token (``unknown-type``, ``bad-seat``...) that goes into the NAK and
    the journaled fault.
    """

    def __init__(self, reason: str, device: str | None = None, seq: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.device = device
        self.seq = seq


def ack(device: str, seq: int) -> str:
    """The payload acknowledging a device's message."""
    return f"ACK,{device},{seq}"


def nak(device: str, seq: int, reason: str) -> str:
    """The payload refusing a device's message, with the reason token."""
    return f"NAK,{device},{seq},{reason}"


def _number(text: str, reason: str, low: int, high: int) -> int:
    # int() alone would accept "+5", " 5" and "5_0"; the wire format is plain digits.
    if not _NUMBER.fullmatch(text) or not low <= int(text) <= high:
        raise ProtocolError(reason)
    return int(text)


def _round(text: str) -> str:
    if not _ROUND.fullmatch(text):
        raise ProtocolError("bad-round")
    return text


@dataclass(frozen=True, slots=True)
class Header:
    """The common fields of a payload: its type, the device, its seq, and the rest."""

    kind: str
    device: str
    seq: int
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Stamp:
    """What every event built from one payload shares."""

    table_id: str
    device: str
    seq: int
    at: str

    @property
    def event_id(self) -> str:
        return device_event_id(self.table_id, self.device, self.seq)


def _bet(head: _Stamp, fields: tuple[str, ...]) -> BetSensed:
    if len(fields) not in {3, 4}:
        raise ProtocolError("field-count")
    seat = _number(fields[0], "bad-seat", 1, 99)
    try:
        Spot(fields[1])  # a registered spot (controller/rules/spots.py), by its name
    except ValueError:
        raise ProtocolError("bad-spot") from None
    if fields[2] not in {"0", "1"}:
        raise ProtocolError("bad-present")
    amount = _number(fields[3], "bad-amount", 0, 10**12) if len(fields) == 4 else 0
    return BetSensed(
        head.event_id,
        head.at,
        head.table_id,
        head.device,
        head.seq,
        seat=seat,
        spot=fields[1],
        present=fields[2] == "1",
        amount_cents=amount,
    )


def _lock(head: _Stamp, fields: tuple[str, ...]) -> BetsLocked:
    if len(fields) != 1:
        raise ProtocolError("field-count")
    return BetsLocked(
        head.event_id, head.at, head.table_id, head.device, head.seq, round_id=_round(fields[0])
    )


def _card(head: _Stamp, fields: tuple[str, ...]) -> CardDealt:
    if len(fields) != 3:
        raise ProtocolError("field-count")
    round_id = _round(fields[0])
    position = _number(fields[1], "bad-position", 0, 99)
    try:
        Card.parse(fields[2])
    except CardError as error:
        raise ProtocolError("bad-card") from error
    return CardDealt(
        head.event_id,
        head.at,
        head.table_id,
        head.device,
        head.seq,
        round_id=round_id,
        position=position,
        card=fields[2],
    )


def _done(head: _Stamp, fields: tuple[str, ...]) -> DealComplete:
    if len(fields) != 1:
        raise ProtocolError("field-count")
    return DealComplete(
        head.event_id, head.at, head.table_id, head.device, head.seq, round_id=_round(fields[0])
    )


def _void(head: _Stamp, fields: tuple[str, ...]) -> RoundVoided:
    if len(fields) not in {1, 2}:
        raise ProtocolError("field-count")
    reason = fields[1].strip() if len(fields) == 2 else ""
    return RoundVoided(
        head.event_id,
        head.at,
        head.table_id,
        round_id=_round(fields[0]),
        by=f"device {head.device}",
        reason=reason or "misdeal",
        refund_contributions=True,
    )


def _heartbeat(head: _Stamp, fields: tuple[str, ...]) -> Heartbeat:
    if len(fields) > 1:
        raise ProtocolError("field-count")
    last = _number(fields[0], "bad-last", 0, MAX_SEQ) if fields else None
    return Heartbeat(head.table_id, head.device, head.seq, last)


_DECODERS: Final[dict[str, Callable[[_Stamp, tuple[str, ...]], DeviceMessage]]] = {
    "BET": _bet,
    "LOCK": _lock,
    "CARD": _card,
    "DONE": _done,
    "VOID": _void,
    "HB": _heartbeat,
}


def parse_header(payload: str) -> Header:
    """Split a payload and read its device and seq; raises :class:`ProtocolError`.

    The error carries the device and seq when they could be read, so that the caller can NAK.
    """
    kind, *rest = payload.split(",")
    if len(rest) < 2:
        raise ProtocolError("field-count" if kind in _DECODERS else "unknown-type")
    device_text, seq_text, *fields = rest
    device = device_text if _DEVICE.fullmatch(device_text) else None
    seq = int(seq_text) if _NUMBER.fullmatch(seq_text) and int(seq_text) <= MAX_SEQ else None
    if device is None or seq is None:
        raise ProtocolError("bad-device" if device is None else "bad-seq", device, seq)
    if kind not in _DECODERS:
        raise ProtocolError("unknown-type", device, seq)
    return Header(kind, device, seq, tuple(fields))


def decode_message(header: Header, table_id: str, at: str | None = None) -> DeviceMessage:
    """The message of a parsed payload from a device of ``table_id``, stamped ``at`` (or now).

    Raises :class:`ProtocolError` (with the header's device and seq) if a field is invalid.
    """
    stamp = _Stamp(table_id, header.device, header.seq, at or utc_now())
    try:
        return _DECODERS[header.kind](stamp, header.fields)
    except ProtocolError as error:
        raise ProtocolError(error.reason, header.device, header.seq) from error
    except Exception as error:  # hostile input: every failure is a rejection
        raise ProtocolError("undecodable", header.device, header.seq) from error


def decode_payload(payload: str, table_id: str, at: str | None = None) -> DeviceMessage:
    """The message of a payload from a device of ``table_id``: an event or a heartbeat.

    Raises :class:`ProtocolError`, with the device and seq when they could be read.
    """
    try:
        header = parse_header(payload)
    except ProtocolError:
        raise
    except Exception as error:  # hostile input: every failure is a rejection
        raise ProtocolError("undecodable") from error
    return decode_message(header, table_id, at)
