"""The one adapter over aiomqtt's private API (:class:`drivers.mqtt.connection.AckingClient`).

aiomqtt has no manual acknowledgement, so the adapter reaches into it: the paho client it
wraps (``_client``, with ``manual_ack_set`` and ``ack``) and its queue of received messages
(``_queue``). pyproject.toml bounds aiomqtt above by the newest version these tests passed
with; raising the bound means running them first. They fail when an upgrade renames a hook or
when a manual acknowledgement no longer withholds the ``PUBACK`` (a real mosquitto).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING

import aiomqtt
import paho.mqtt.client as paho
import pytest

from drivers.mqtt.connection import AckingClient, make_client
from drivers.mqtt.settings import BrokerSettings

if TYPE_CHECKING:
    from support.drivers.mosquitto import Broker

WAIT_S = 15.0
TOPIC = "test/acking"
WILL = "test/acking/status"


def _settings(port: int) -> BrokerSettings:
    return BrokerSettings(host="127.0.0.1", port=port, client_id="acker", site="test")


def _client(port: int) -> AckingClient:
    return make_client(_settings(port), identifier="acker", will_topic=WILL, manual_ack=True)


async def _publish(port: int, payload: bytes) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="table") as table:
        await table.publish(TOPIC, payload, qos=1)


async def _next(client: AckingClient) -> aiomqtt.Message:
    async with asyncio.timeout(WAIT_S):
        return await anext(aiter(client.messages))


def test_aiomqtt_still_has_the_private_hooks_the_acking_client_uses() -> None:
    async def scenario() -> None:
        client = AckingClient("127.0.0.1", 1883, identifier="hooks")
        assert isinstance(client._client, paho.Client)
        assert callable(client._client.manual_ack_set)
        assert list(inspect.signature(client._client.ack).parameters) == ["mid", "qos"]
        assert isinstance(client._queue, asyncio.Queue)
        assert isinstance(client._connected, asyncio.Future)
        assert client._client.on_disconnect == client._on_disconnect  # paho calls the override
        client.enable_manual_ack()
        assert client._client._manual_ack is True

    asyncio.run(scenario())


def test_a_manual_ack_withholds_puback_until_the_message_is_acknowledged(
    mosquitto: Broker,
) -> None:
    port = mosquitto.port

    async def scenario() -> None:
        async with _client(port) as client:  # the persistent session and its subscription
            await client.subscribe(TOPIC, qos=1)
        await _publish(port, b"one")
        async with _client(port) as client:
            assert (await _next(client)).payload == b"one"
            # Not acknowledged: the broker keeps it in flight for the session.
        async with _client(port) as client:
            message = await _next(client)
            assert message.payload == b"one", "a message never acknowledged was redelivered"
            client.ack(message)
            # A QoS 1 round trip after the ack: the broker has read the PUBACK before it answers.
            await client.publish(f"{TOPIC}/marker", b"", qos=1)
        await _publish(port, b"two")
        async with _client(port) as client:
            message = await _next(client)
            assert message.payload == b"two", "an acknowledged message came back"
            client.ack(message)
            assert client.received() == []

    try:
        asyncio.run(scenario())
    except aiomqtt.MqttError as error:  # pragma: no cover - the broker is part of the rig
        pytest.fail(f"the broker went away: {error}")


def test_a_connection_closed_before_connack_fails_at_once_not_after_the_timeout() -> None:
    """HAProxy's MQTT door with no node answering ``/leader``: accepted, then closed at once.

    aiomqtt alone waits out its whole timeout there (docs/ha.md, "A warm standby"); the
    client fails at once, and its backoff brings it back as soon as a leader is up.
    """

    async def scenario() -> None:
        accepted = asyncio.Event()

        async def close_at_once(
            _reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            accepted.set()
            writer.close()

        door = await asyncio.start_server(close_at_once, "127.0.0.1", 0)
        port = door.sockets[0].getsockname()[1]
        slow = make_client(
            _settings(port), identifier="agent", will_topic=WILL, manual_ack=False, timeout_s=600
        )
        try:
            async with asyncio.timeout(WAIT_S):  # far below the client's own 600 s
                with pytest.raises(aiomqtt.MqttError, match="closed the connection unanswered"):
                    await slow.__aenter__()
            assert accepted.is_set()
        finally:
            door.close()
            await door.wait_closed()

    asyncio.run(scenario())
