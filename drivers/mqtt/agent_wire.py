"""Acknowledgements to table agents: ``table/<tid>/cmd/ack``, written by the controller.

A table agent (docs/ha.md, "Table agents") forwards its devices' messages as the table events
of docs/mqtt.md with ``boot`` and ``agent_seq`` added (:mod:`drivers.mqtt.payloads`), and a
heartbeat with them too (the boot, and the highest ``seq`` it has stored). The controller
answers on ``table/<tid>/cmd/ack``, QoS 1, not retained, only once the journal has committed::

    {"v":1,"table":"t1","boot":"9f3a0c1d2b4e5f60","agent_seq":118,"journal_seq":48211,
     "epoch":3,"at":"2025-06-01T21:14:03.118Z","agent_first":1}

``agent_seq`` is cumulative: every ``seq`` of that boot from ``agent_first`` (1 if absent) up to
it is journaled, each one answered for by the journal (a controller that has just started, or
that did not lead meanwhile, starts its run after what the agent says it was acknowledged, and
says so, so that the agent trims nothing that run does not cover). ``journal_seq``
is the journal row of the last of them (0 when this controller has journaled none of them since
it started) and ``epoch`` the sequencer epoch the journal writes under
(``controller/journal/port.py``), so that an agent can refuse an older leader's answer.
"""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

from controller.agent.acks import Ack
from drivers.mqtt.json_objects import SCHEMA_VERSION, convert, decode_object
from drivers.mqtt.payloads import Boot, undecodable_as_rejection

AGENT_DEVICE: Final = "agent"
"""The ``device`` of an agent's own heartbeat."""
ACK_COMMAND: Final = "ack"
"""The command name of the acknowledgement: ``table/<tid>/cmd/ack``."""

_Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
_Table = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9._:-]{1,64}$")]


class AckPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``table/<tid>/cmd/ack`` (see the module docstring)."""

    v: int
    table: _Table
    boot: Boot
    agent_seq: _Count
    journal_seq: _Count
    epoch: _Count
    at: str
    agent_first: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)] = 1


_ENCODER: Final = msgspec.json.Encoder()


def encode_ack(ack: Ack, at: str) -> bytes:
    """The acknowledgement's payload."""
    payload = AckPayload(
        SCHEMA_VERSION,
        ack.table_id,
        ack.boot,
        ack.agent_seq,
        ack.journal_seq,
        ack.epoch,
        at,
        ack.first,
    )
    return _ENCODER.encode(payload)


def decode_ack(data: bytes) -> Ack:
    """An acknowledgement from its payload, else :class:`~.json_objects.PayloadError`."""
    with undecodable_as_rejection(data):
        payload = convert(decode_object(data), AckPayload)
    return Ack(
        payload.table,
        payload.boot,
        payload.agent_seq,
        payload.journal_seq,
        payload.epoch,
        payload.agent_first,
    )
