"""The MQTT source's poison messages: one the controller keeps failing on is parked.

A message the controller fails on (:class:`~controller.ports.EventNotRecordedError`, or any
error of the intake: a fault of the controller's own) stays unacknowledged, and the source
connects again so that the broker delivers it again. The same message failing
:data:`~drivers.poison.DEAD_LETTER_AFTER` times is parked: journaled whole as a
``dead-letter`` fault (its digest and its payload in base64), counted in the source's health,
and acknowledged, so that the tables' messages behind it flow again (:mod:`drivers.poison`,
docs/faults.md "Poison messages"). The journal being down is never a message's fault: nothing
is parked for it.
"""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING

from controller.ports import ControllerUnavailableError
from drivers.mqtt.pipeline import FailingClosedError, message_key, message_payload
from drivers.poison import DEAD_LETTER, DEAD_LETTER_AFTER, PoisonCount

if TYPE_CHECKING:
    import aiomqtt

    from controller.ports import Intake
    from drivers.poison import SourceHealth

log = logging.getLogger(__name__)


class Parking:
    """Failures counted per message content; the message parked once they are too many."""

    def __init__(self, source: str, health: SourceHealth) -> None:
        self._source = source
        self._health = health
        self._counts = PoisonCount()
        self.failing = False
        """A message could not be recorded and was not parked yet (the source is not healthy)."""

    def handled(self, message: aiomqtt.Message) -> None:
        """A message was journaled: if one was failing, it no longer is."""
        if self.failing:
            self.failing = False
            self._counts.forget(message_key(message))
            self._health.worked()

    async def park(self, intake: Intake, message: aiomqtt.Message, error: Exception) -> bool:
        """One more failure of ``message``; True once it is parked (then it is acknowledged)."""
        if isinstance(error, (ControllerUnavailableError, FailingClosedError)):
            return False  # the journal is down, not this message: never parked for that
        key = message_key(message)
        failures = self._counts.failed(key)
        self.failing = True
        topic = message.topic.value
        self._health.failed(f"{topic}: {error}")
        if failures < DEAD_LETTER_AFTER:
            return False
        payload = base64.b64encode(message_payload(message)).decode()
        detail = (
            f"parked after {failures} failures ({type(error).__name__}: {error}); "
            f"sha256 {key}; payload base64 {payload}"
        )
        log.error("ALARM %s: dead-lettered %s: %s", self._source, topic, error)
        try:
            await intake.reject(f"{self._source}:{topic}", DEAD_LETTER, detail)
        except ControllerUnavailableError:
            return False
        self._counts.forget(key)
        self.failing = False
        self._health.dead_letters += 1
        self._health.worked()
        return True
