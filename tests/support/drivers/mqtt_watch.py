"""A test's MQTT subscriber (a sign, a display, a probe): what it received, and waits on it.

Shared by the MQTT driver, end-to-end and broker-configuration tests; each connects its own
client (plain, persistent, or TLS with a user) and watches it with :func:`watching`.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiomqtt
import pytest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable


@dataclass
class Watch:
    """The messages one client receives, in order; tests wait on them (each wait bounded)."""

    client: aiomqtt.Client
    wait_s: float
    messages: list[aiomqtt.Message] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def read(self) -> None:
        """Collect messages until the connection ends."""
        async for message in self.client.messages:
            self.messages.append(message)
            async with self.changed:
                self.changed.notify_all()

    def payloads(self, topic_filter: str) -> list[Any]:
        """The payloads received on topics matching ``topic_filter``, in order."""
        return [m.payload for m in self.messages if m.topic.matches(topic_filter)]

    def live(self) -> list[tuple[str, bytes]]:
        """Messages published while subscribed (not the retained ones sent on subscribing)."""
        return [(m.topic.value, _bytes(m.payload)) for m in self.messages if not m.retain]

    async def until(self, predicate: Callable[[Watch], bool], what: str) -> None:
        """Wait (bounded) until the messages satisfy ``predicate``."""
        try:
            async with asyncio.timeout(self.wait_s), self.changed:
                await self.changed.wait_for(lambda: predicate(self))
        except TimeoutError:
            pytest.fail(f"timed out after {self.wait_s:g} s waiting for {what}")

    async def until_live(self, topic: str, payload: bytes) -> list[tuple[str, bytes]]:
        """Wait for a live message; return every live message before it."""
        await self.until(lambda w: (topic, payload) in w.live(), f"{payload!r} on {topic}")
        live = self.live()
        return live[: live.index((topic, payload))]


@contextlib.asynccontextmanager
async def watching(client: aiomqtt.Client, wait_s: float) -> AsyncIterator[Watch]:
    """Collect what a connected client receives while inside the block."""
    watcher = Watch(client, wait_s)
    reader = asyncio.create_task(watcher.read())
    try:
        yield watcher
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
            await reader


def _bytes(payload: Any) -> bytes:
    return payload if isinstance(payload, bytes) else str(payload).encode()
