"""What both simulated-device links share: sequence numbers, timings, errors."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.errors import InputError, UnavailableError

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

HEARTBEAT_SEQ_BASE: Final = 2**31
"""The first ``seq`` of a device's heartbeats; its events count from 1, far below."""
MQTT_TIMEOUT_S: Final = 2.0
"""How long the MQTT link waits for the broker (CONNACK, SUBACK, PUBACK) before reconnecting."""
RESEND_AFTER_S: Final = 0.25
"""How long a serial device waits for the host's answer before writing a frame again."""
READ_SIZE: Final = 4096

JSON_ENCODER: Final = msgspec.json.Encoder()


class LinkClosedError(UnavailableError, ConnectionError):
    """The link was closed before the event was acknowledged."""


class NakError(InputError, ValueError):
    """The serial host refused a frame (``NAK,<dev>,<seq>,<reason>``): it will never take it."""

    def __init__(self, answer: str) -> None:
        super().__init__(f"the host refused the frame: {answer}")
        self.answer = answer
        self.reason = answer.split(",", 3)[3] if answer.count(",") >= 3 else ""


@dataclass(slots=True)
class HeartbeatSeqs:
    """Heartbeat sequence numbers per device, from :data:`HEARTBEAT_SEQ_BASE`."""

    last: dict[str, int] = field(default_factory=dict)

    def next(self, device: str) -> int:
        """The next heartbeat ``seq`` of a device."""
        seq = self.last.get(device, HEARTBEAT_SEQ_BASE - 1) + 1
        self.last[device] = seq
        return seq


# MQTT.


def fail_future(future: asyncio.Future[Any], error: Exception) -> None:
    """Fail a future that may already be done (then leave it)."""
    if future.done():
        return
    future.set_exception(error)
    # Marked as retrieved: a send() still waiting raises it; if none is, nothing is logged.
    future.exception()


# Serial.
