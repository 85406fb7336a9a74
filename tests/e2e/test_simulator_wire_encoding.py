"""The simulator's encoders: what the links put on the wire is what the controller's decoders read.

The end-to-end tests play simulated tables through :mod:`drivers.simulator_links`; these check
that decode(encode(e)) == e for MQTT (docs/mqtt.md, "From the tables") and for the reference
serial protocol (docs/architecture.md, "The reference serial protocol").
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field

import pytest
from support.runtime.played_tables import simulated

from controller.events import CardDealt, DeviceInput
from drivers.mqtt.payloads import Heartbeat as MqttHeartbeat
from drivers.mqtt.payloads import decode_table_event
from drivers.serial.framing import encode_frame
from drivers.serial.protocol import Heartbeat as SerialHeartbeat
from drivers.serial.protocol import decode_payload
from drivers.simulator_links import (
    HEARTBEAT_SEQ_BASE,
    mqtt_event,
    mqtt_heartbeat,
    serial_heartbeat,
    serial_payload,
)


@pytest.fixture
def sample_events() -> list[DeviceInput]:
    """Three rounds' worth of a simulated table's events, jackpot hands included."""

    @dataclass
    class Capture:
        events: list[DeviceInput] = field(default_factory=list)

        async def send(self, event: DeviceInput) -> None:
            self.events.append(event)

        async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
            pass

    capture = Capture()
    table = simulated("t1", capture, seed=7, hit_every=2)

    async def rounds() -> None:
        for _ in range(3):
            await table.play_round()

    asyncio.run(rounds())
    return capture.events


def test_simulator_mqtt_payloads_decode_to_the_events_they_encode(
    sample_events: list[DeviceInput],
) -> None:
    """docs/mqtt.md, "From the tables": decode(encode(e)) == e."""
    kinds: Counter[str] = Counter()
    for event in sample_events:
        kind, payload = mqtt_event(event)
        kinds[kind] += 1
        assert decode_table_event(event.table_id, kind, payload, at=event.at) == event
        assert json.loads(payload)["v"] == 1
    assert set(kinds) == {"bet", "lock", "card", "done"}
    beat = decode_table_event("t1", "heartbeat", mqtt_heartbeat("console-1", HEARTBEAT_SEQ_BASE))
    assert beat == MqttHeartbeat("t1", "console-1", HEARTBEAT_SEQ_BASE)
    # Position 100 does not exist (0-99): refused on the way out, as it would be on the way in.
    with pytest.raises(ValueError, match="cannot encode"):
        mqtt_event(
            CardDealt("t1/shoe/1", "2025-01-01T00:00:00.000Z", "t1", "shoe", 1, "r", 100, "As")
        )


def test_simulator_serial_payloads_decode_to_the_events_they_encode(
    sample_events: list[DeviceInput],
) -> None:
    """docs/architecture.md, "The reference serial protocol": decode(encode(e)) == e."""
    for event in sample_events:
        payload = serial_payload(event)
        assert decode_payload(payload, event.table_id, at=event.at) == event
        assert encode_frame(payload).endswith(b"\r\n")
    beat = decode_payload(serial_heartbeat("console-1", HEARTBEAT_SEQ_BASE + 1), "t1")
    assert beat == SerialHeartbeat("t1", "console-1", HEARTBEAT_SEQ_BASE + 1)
