"""A stored device message as the table event the controller reads, with the agent's stamp.

The outbox keeps what a device sent over its serial line (the reference protocol's payload,
:mod:`drivers.serial.protocol`); the agent publishes it as the matching JSON table event of
docs/mqtt.md (the same fields: one device firmware can speak both), with ``boot``,
``agent_seq`` and ``acked`` added (:mod:`drivers.mqtt.payloads`). The agent's own heartbeat is
a ``heartbeat`` event of device ``agent`` with the same three fields: the boot, the highest
``seq`` it has stored, and the highest acknowledged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete, RoundVoided
from drivers.mqtt.agent_wire import AGENT_DEVICE
from drivers.mqtt.json_objects import SCHEMA_VERSION, PayloadError
from drivers.mqtt.payloads import Heartbeat as HeardHeartbeat
from drivers.mqtt.payloads import decode_table_message
from drivers.serial.protocol import Heartbeat, ProtocolError, decode_message, parse_header

if TYPE_CHECKING:
    from controller.agent_signature import AgentSigner
    from drivers.serial.protocol import Header

_ENCODER: Final = msgspec.json.Encoder()


def forwarded(  # noqa: PLR0913 - the stored row's fields and the agent's stamp
    payload: str,
    table_id: str,
    boot: str,
    seq: int,
    acked: int,
    *,
    signer: AgentSigner | None = None,
    stored: str = "",
) -> tuple[str, bytes]:
    """The event type and JSON payload of a stored device message; raises ProtocolError.

    ``acked`` is the highest ``seq`` a controller has acknowledged so far; ``signer`` signs
    it, stored at ``stored``.
    """
    header = parse_header(payload)
    message = decode_message(header, table_id)
    fields: dict[str, Any] = {"v": SCHEMA_VERSION, "device": header.device, "seq": header.seq}
    match message:
        case BetSensed():
            kind = "bet"
            fields |= {"seat": message.seat, "spot": message.spot, "present": message.present}
            fields["amount_cents"] = message.amount_cents
        case BetsLocked():
            kind, fields["round"] = "lock", message.round_id
        case CardDealt():
            kind = "card"
            fields |= {"round": message.round_id, "position": message.position}
            fields["card"] = message.card
        case DealComplete():
            kind, fields["round"] = "done", message.round_id
        case RoundVoided():
            kind = "void"
            fields |= {"round": message.round_id, "reason": message.reason}
        case Heartbeat():
            raise ProtocolError("heartbeat-stored", header.device, header.seq)
    fields |= {"boot": boot, "agent_seq": seq, "acked": acked}
    if signer is not None:
        fields["agent_signature"] = _signature(
            signer, table_id, kind, fields, stored=stored, header=header
        )
    return kind, _ENCODER.encode(fields)


def _signature(  # noqa: PLR0913 - what is signed, and what names the row in an error
    signer: AgentSigner,
    table_id: str,
    kind: str,
    fields: dict[str, Any],
    *,
    stored: str,
    header: Header,
) -> dict[str, str]:
    """The agent's signature over the event the controller will read from ``fields``."""
    try:
        event, _ = decode_table_message(table_id, kind, _ENCODER.encode(fields))
    except PayloadError as error:  # a stored message the controller would refuse anyway
        raise ProtocolError(error.reason, header.device, header.seq) from error
    if isinstance(event, HeardHeartbeat):  # pragma: no cover - a heartbeat is never stored
        raise ProtocolError("heartbeat-stored", header.device, header.seq)
    return msgspec.to_builtins(signer.signature(event, stored))  # type: ignore[no-any-return]


def heartbeat(count: int, boot: str, stored_high: int, acked: int) -> bytes:
    """The agent's ``count``-th heartbeat: its boot, the highest ``seq`` stored and acked."""
    fields = {
        "v": SCHEMA_VERSION,
        "device": AGENT_DEVICE,
        "seq": count,
        "boot": boot,
        "agent_seq": stored_high,
        "acked": acked,
    }
    return _ENCODER.encode(fields)
