"""What the MQTT source's tests share: a publishing table, a relay to cut, the receipts' ids.

:func:`send_stream` publishes as a table does, each event again until the broker has it.

A :class:`Proxy` between a client and the broker stands for the network: cutting it drops the
connection without a DISCONNECT, as a pulled cable or a crash does, so the broker publishes the
client's last will.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Self

import aiomqtt

from controller.backoff import Backoff
from support.drivers.mqtt_tables import TOPICS, table_client

if TYPE_CHECKING:
    from support.drivers.intake import JournalIntake
    from support.drivers.mosquitto import Broker


async def send_stream(port: int, table_id: str, events: list[tuple[str, bytes]]) -> None:
    """Publish events in order as a table does: each one again until the broker has it."""
    pending = list(events)
    async for _attempt in Backoff(0.02, 0.2).attempts():
        with contextlib.suppress(aiomqtt.MqttError):
            async with table_client(port, table_id) as client:
                while pending:
                    kind, payload = pending[0]
                    topic = TOPICS.table_event(table_id, kind)
                    await client.publish(topic, payload, qos=1, timeout=1)
                    pending.pop(0)
        if not pending:
            return


class Proxy:
    """A TCP relay to the broker; :meth:`cut` drops its connections without a DISCONNECT."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.enabled = True
        self.port = 0
        self._links: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()

    def cut(self) -> None:
        """Abort every connection (RST both ways) and refuse new ones until :meth:`restore`."""
        self.enabled = False
        for writer in self._links:
            writer.transport.abort()
        self._links.clear()

    def restore(self) -> None:
        """Accept connections again."""
        self.enabled = True

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.enabled:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.broker.port)
        except OSError:
            writer.transport.abort()
            return
        self._links |= {writer, up_writer}
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()


def receipt_ids(intake: JournalIntake) -> list[str]:
    return [receipt.event_id for receipt in intake.receipts]
