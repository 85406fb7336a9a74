"""What the agent forwards is what the device said: the serial message and its MQTT event agree."""

from __future__ import annotations

import json

import pytest

from controller.agent.acks import Ack
from drivers.agent.wire import forwarded, heartbeat
from drivers.mqtt.agent_wire import decode_ack, encode_ack
from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.payloads import AgentStamp, Heartbeat, decode_table_message
from drivers.serial.protocol import ProtocolError, decode_payload

AT = "2026-01-01T00:00:00.000Z"
MESSAGES = [
    "BET,bs-1,17,3,progressive,1,100",
    "BET,bs-1,18,3,bonus,0",
    "LOCK,dealer,4,r-0042",
    "CARD,shoe,9,r-0042,0,Jk",
    "DONE,shoe,60,r-0042",
    "VOID,dealer,5,r-0042,card exposed",
    "VOID,dealer,6,r-0043",
]


@pytest.mark.parametrize("payload", MESSAGES)
def test_a_forwarded_message_reads_as_the_event_the_serial_line_would_give(payload: str) -> None:
    kind, data = forwarded(payload, "t1", "boot-a", 12, 9)
    event, stamp = decode_table_message("t1", kind, data, at=AT)
    assert event == decode_payload(payload, "t1", AT)
    assert stamp == AgentStamp("boot-a", 12, 9)


def test_a_heartbeat_frame_is_never_forwarded() -> None:
    with pytest.raises(ProtocolError):
        forwarded("HB,shoe,3", "t1", "boot-a", 1, 0)


def test_the_agents_heartbeat_carries_its_boot_highest_stored_and_acknowledged_seq() -> None:
    beat, stamp = decode_table_message("t1", "heartbeat", heartbeat(7, "boot-a", 41, 40), at=AT)
    assert beat == Heartbeat("t1", "agent", 7, None)
    assert stamp == AgentStamp("boot-a", 41, 40)


def test_an_ack_reads_back_as_written_and_refuses_anything_else() -> None:
    ack = Ack("t1", "boot-a", 118, 48211, 3)
    assert decode_ack(encode_ack(ack, AT)) == ack
    fields = json.loads(encode_ack(ack, AT))
    for broken, reason in [
        ({**fields, "agent_seq": -1}, "bad-agent-seq"),
        ({**fields, "epoch": 1.5}, "bad-epoch"),
        ({**fields, "extra": 1}, "unknown-field"),
        ({**fields, "v": 2}, "bad-version"),
    ]:
        with pytest.raises(PayloadError) as raised:
            decode_ack(json.dumps(broken).encode())
        assert raised.value.reason == reason
    with pytest.raises(PayloadError) as raised:
        decode_ack(b'{"v":1,' * 10_000)
    assert raised.value.reason in {"too-large", "bad-json"}
