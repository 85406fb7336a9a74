"""Read back the controller's last published signed head: the broker's copy of its high-water mark.

The sink retains every signed head on ``controller/<id>/head`` (:mod:`drivers.mqtt.sink`), where
the journal's writer cannot rewrite it. At start-up the service asks for it
(:attr:`controller.plugins.DriverSpec.published_head`) before it trusts the journal: a journal
behind it went back, whatever the local high-water file says (docs/security.md, "History never
goes back"). One short connection, logged in as the sink is (it wrote the topic), with a clean
session and no last will; a bounded wait for the retained message. A broker that cannot be
reached, or holds nothing, gives None: the start goes on with the local file's mark, and says so.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

import aiomqtt

from drivers.mqtt.connection import one_shot_client
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)

WAIT_S: Final = 3.0
"""How long start-up waits for the broker to answer."""
RETAINED_S: Final = 0.5
"""How long it waits, once subscribed, for the retained head (sent at once if there is one)."""


async def published_head(settings: BrokerSettings, controller_id: str) -> bytes | None:
    """The retained payload of ``controller/<id>/head`` on the broker; None if none is had."""
    login = settings.outbound()
    host, port = login.addresses()[0]
    topic = Topics(settings.site).controller_head(controller_id)
    try:
        async with asyncio.timeout(WAIT_S):
            client = one_shot_client(login, host, port, purpose="head", timeout_s=WAIT_S)
            async with client:
                await client.subscribe(topic, qos=1)
                return await _retained(client)
    except (TimeoutError, aiomqtt.MqttError, OSError) as error:
        log.warning("no signed head read back from the broker at %s:%d: %s", host, port, error)
        return None


async def _retained(client: aiomqtt.Client) -> bytes | None:
    """The retained message the broker sends on subscribing; None if it sends none at once.

    A broker sends what it retains as soon as it grants the subscription: a topic that stays
    silent for :data:`RETAINED_S` after that holds nothing.
    """
    try:
        async with asyncio.timeout(RETAINED_S):
            async for message in client.messages:
                if message.retain and isinstance(message.payload, bytes):
                    return message.payload
    except TimeoutError:
        return None
    return None  # pragma: no cover - the messages of a connection end only with an error
