"""Ask central, at start-up, for the mark it keeps of this property (its high-water mark's copy).

A property of a wide-area link sends central each signed head it makes (drivers/mqtt/
site_uplink.py), and central keeps the highest (controller/runtime/site_links.py). At start-up,
before the journal is trusted, the service asks for it (:attr:`controller.plugins.DriverSpec.
central_mark`): one short connection to central's brokers (the uplink's settings, a client id of
its own, a clean session and no last will), the property's hello published on
``wide/<site>/up`` (a new nonce, signed by the controller: central answers every hello), and a
bounded wait on ``wide/<site>/mark`` for an answer the controller accepts (central's signature,
that hello's nonce). Central unreachable, or silent within the link's connect timeout, gives
None: the start goes on with the other marks, and says so (docs/security.md, "History never goes
back").
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import aiomqtt

from drivers.mqtt.connection import QOS, TIMEOUT_S, one_shot_client
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from collections.abc import Callable

    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)


async def central_mark(  # noqa: PLR0913 - where central is, who asks, and how it is judged
    settings: BrokerSettings,
    central_site: str,
    site: str,
    hello: bytes,
    accept: Callable[[bytes], bool],
    *,
    timeout_s: float = TIMEOUT_S,
) -> bytes | None:
    """The first answer on ``wide/<site>/mark`` that ``accept`` takes; None if none in time."""
    topics = Topics(central_site)
    for host, port in settings.addresses():
        try:
            async with asyncio.timeout(timeout_s):
                client = one_shot_client(settings, host, port, purpose="mark", timeout_s=timeout_s)
                async with client:
                    await client.subscribe(topics.site_mark(site), qos=QOS)
                    await client.publish(topics.site_up(site), hello, qos=QOS)
                    async for message in client.messages:
                        if isinstance(message.payload, bytes) and accept(message.payload):
                            return message.payload
        except (TimeoutError, aiomqtt.MqttError, OSError) as error:
            log.warning(
                "no mark read back from central at %s:%d: %s", host, port, error or "no answer"
            )
    return None
