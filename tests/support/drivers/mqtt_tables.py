"""Table devices and a running MQTT source for the driver tests: settings, payloads, waits."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any, TypeVar

import aiomqtt
import pytest

from drivers.mqtt.settings import BrokerSettings
from drivers.mqtt.topics import Topics
from support.drivers.mqtt_watch import Watch, watching

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine


T = TypeVar("T")
WAIT_S = 15.0
TIMEOUT_S = 2.0
SITE = "test"
TOPICS = Topics(SITE)
CONTROLLER_STATUS = TOPICS.controller_status("jackpotd")


def settings_for(port: int) -> BrokerSettings:
    return BrokerSettings(
        host="127.0.0.1",
        port=port,
        client_id="jackpotd",
        site=SITE,
        keepalive_s=5,
        backoff_initial_s=0.02,
        backoff_cap_s=0.3,
    )


def event(kind: str, **fields: Any) -> tuple[str, bytes]:
    """A table event: its type and JSON payload."""
    return kind, json.dumps({"v": 1, **fields}).encode()


async def within(awaitable: Awaitable[T], what: str) -> T:
    try:
        async with asyncio.timeout(WAIT_S):
            return await awaitable
    except TimeoutError:
        pytest.fail(f"timed out waiting for {what}")


@contextlib.asynccontextmanager
async def running(coroutine: Coroutine[Any, Any, None]) -> AsyncIterator[asyncio.Task[None]]:
    """Run a driver in the background; cancel it on the way out (and surface its errors)."""
    task = asyncio.create_task(coroutine)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await within(task, "the driver to stop")


@contextlib.asynccontextmanager
async def watch(
    port: int, *filters: str, identifier: str | None = None, clean: bool = True
) -> AsyncIterator[Watch]:
    """A subscriber (a display, a test probe) at QoS 1."""
    client = aiomqtt.Client("127.0.0.1", port, identifier=identifier, clean_session=clean)
    async with client:
        if filters:  # a persistent session resumes with its subscriptions
            await client.subscribe([(f, 1) for f in filters])
        async with watching(client, WAIT_S) as watcher:
            yield watcher


def last_is(topic: str, payload: bytes) -> Callable[[Watch], bool]:
    return lambda w: w.payloads(topic)[-1:] == [payload]


@contextlib.asynccontextmanager
async def table_client(
    port: int, table_id: str = "t1", *, will: bool = False
) -> AsyncIterator[aiomqtt.Client]:
    """A fake table: fixed id, persistent session, and its last will if asked."""
    last_will = aiomqtt.Will(TOPICS.table_status(table_id), b"offline", qos=1, retain=True)
    client = aiomqtt.Client(
        "127.0.0.1",
        port,
        identifier=f"table-{table_id}",
        clean_session=False,
        will=last_will if will else None,
    )
    async with client:
        yield client


async def send(client: aiomqtt.Client, table_id: str, kind: str, payload: bytes) -> None:
    await client.publish(TOPICS.table_event(table_id, kind), payload, qos=1)
