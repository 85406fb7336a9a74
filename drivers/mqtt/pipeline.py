"""The MQTT source's pipeline: the messages of one connection, handled in order, then acknowledged.

:class:`Pipeline` holds what :class:`drivers.mqtt.source.MqttSource` is handling on one
connection, oldest first; each :class:`Handling` is acknowledged (``PUBACK``) once its outcome
is done: its event journaled, its rejection recorded (docs/mqtt.md, "Acknowledgement after
commit"). What a connection could not finish is abandoned, and the broker delivers it again.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from controller.errors import UnavailableError
from drivers.poison import digest

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiomqtt

    from controller.events import AnyEvent
    from controller.ports import Intake, Receipt


def message_payload(message: aiomqtt.Message) -> bytes:
    """A message's payload as bytes."""
    payload = message.payload
    return bytes(payload) if isinstance(payload, bytes | bytearray) else str(payload).encode()


def message_key(message: aiomqtt.Message) -> str:
    """What identifies a message's content, to count its failures (:mod:`drivers.poison`)."""
    return digest(message.topic.value.encode(), message_payload(message))


class FailingClosedError(UnavailableError):
    """The controller could not record a message: leave it unacknowledged and reconnect."""


def enqueue(intake: Intake, event: AnyEvent, provenance: str) -> asyncio.Future[Receipt]:
    """The event queued in the intake; an intake that fails at once gives a failed future.

    ``provenance`` (the source's client and the message's topic) is journaled beside its row.
    """
    try:
        return intake.enqueue(event, provenance=provenance)
    except Exception as error:  # noqa: BLE001 -- a bug in the intake: told (logged) as its failure
        failed: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        failed.set_exception(error)
        return failed


class Handling(NamedTuple):
    """One message being handled: acknowledged once ``outcome`` is done (and ``then`` run)."""

    message: aiomqtt.Message
    outcome: asyncio.Future[Receipt] | asyncio.Task[None] | None
    """The receipt of its event, the recording of its rejection, or None: handled already."""
    then: Callable[[Receipt], None] | None = None
    """What to note once its event is journaled (a table status change, an agent's seq)."""


@dataclass(slots=True)
class Pipeline:
    """One connection's messages being handled, oldest first (see the module docstring)."""

    handling: deque[Handling] = field(default_factory=deque)
    more: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a message is added (wakes the acknowledger)."""
    stalled: bool = False
    """A message could not be recorded: read nothing more on this connection."""

    async def abandon(self) -> None:
        """Stop handling what is left (the broker delivers it again on the next connection)."""
        outcomes = [item.outcome for item in self.handling if item.outcome is not None]
        self.handling.clear()
        for outcome in outcomes:
            outcome.cancel()  # an event already queued is still journaled; it is not acked
        if outcomes:
            await asyncio.wait(outcomes)
            for outcome in outcomes:
                if not outcome.cancelled():
                    outcome.exception()  # retrieved: its failure is already told by the first
