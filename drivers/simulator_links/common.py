"""What both simulated-device links share: sequence numbers, timings, errors."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    from collections.abc import Coroutine


log = logging.getLogger(__name__)

HEARTBEAT_SEQ_BASE: Final = 2**31
"""The first ``seq`` of a device's heartbeats; its events count from 1, far below."""
MQTT_TIMEOUT_S: Final = 2.0
"""How long the MQTT link waits for the broker (CONNACK, SUBACK, PUBACK) before reconnecting."""
RESEND_AFTER_S: Final = 0.25
"""How long a serial device waits for the host's answer before writing a frame again."""
READ_SIZE: Final = 4096

JSON_ENCODER: Final = msgspec.json.Encoder()


class LinkClosedError(ConnectionError):
    """The link was closed before the event was acknowledged."""


class NakError(ValueError):
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


async def until_first_ends(*coroutines: Coroutine[Any, Any, None]) -> None:
    """Run the coroutines together until one ends; cancel the others; raise what it raised.

    Not a TaskGroup: in Python 3.11 a task group whose child fails while the parent waits in
    its exit leaves the parent's cancellation count raised (fixed in 3.12), which
    :func:`drivers.mqtt.source.raise_if_cancelled` would take for a cancellation.
    """
    tasks = [asyncio.create_task(coroutine) for coroutine in coroutines]
    try:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
    for task in done:
        task.result()


# Serial.
