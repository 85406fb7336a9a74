"""An MQTT sign station's rig: a controller node's meters sink and a sign following it.

Real mosquitto brokers, the real meters sink (drivers/mqtt/sink.py) as a controller node, and
the follower (drivers/mqtt/follower.py) feeding the real Alpha sign driver on an emulated
sign's pty (drivers/signs/emulator.py), as ``jackpotd sign`` runs them. The waits are bounded
and wake on each message the follower takes and each frame the sign reads. The controller
nodes sign their meters with :data:`KEY`, and the follower believes only that key's, as a
station configured with ``[sign] controller_keys`` does (controller/meter_signature.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import msgspec

from controller.backoff import Backoff
from controller.meter_signature import MeterKeys, Signer
from controller.outputs import MeterUpdate
from controller.security.controller_key import ControllerKey
from drivers.agent.state import Changes
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.sink import MqttSink
from drivers.signs.emulator import VirtualAlphaSign
from drivers.signs.serial_sign import AlphaSign, AlphaSignSettings
from support.drivers.mqtt_tables import running, settings_for, within

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from controller.ledger_journal.sqlite import Journal
    from controller.outputs import AnyUpdate
    from drivers.mqtt.settings import BrokerSettings

AT = "2025-06-01T21:14:03.118Z"
POOL = "main"
KEY = ControllerKey.generate()
"""The controller's key: every node of the rig signs with it (a cluster's nodes may each have
their own; a station then lists each)."""
SIGNER = Signer(KEY.key_id, KEY.sign)
KEYS = MeterKeys([KEY.public_key])


def meter(cents: int, seq: int, epoch: int) -> MeterUpdate:
    return MeterUpdate(AT, seq, POOL, cents, 1_000, 0, 50_000, epoch=epoch)


def node(port: int, name: str) -> BrokerSettings:
    """A controller node's sink settings: its own client id, its own status topic."""
    return msgspec.structs.replace(settings_for(port), client_id=name, controller_id=name)


def follower_of(*ports: int) -> MeterFollower:
    settings = msgspec.structs.replace(
        settings_for(ports[0]), hosts=[f"127.0.0.1:{port}" for port in ports]
    )
    return WatchedFollower(
        settings,
        client_id="sign-pit-2",
        pools=[POOL],
        backoff=Backoff(0.02, 0.2),
        timeout_s=2.0,
        keys=KEYS,
    )


async def feed(queue: asyncio.Queue[AnyUpdate | None]) -> AsyncIterator[AnyUpdate]:
    """The updates put in the queue, until ``None`` (the controller shutting down)."""
    while (update := await queue.get()) is not None:
        yield update


@contextlib.asynccontextmanager
async def controller_node(
    port: int, name: str, journal: Journal, signer: Signer = SIGNER
) -> AsyncIterator[asyncio.Queue[AnyUpdate | None]]:
    """A controller's meters sink on a broker; what is put in the queue is published, signed.

    Leaving the block stops the node as ``jackpotd`` stops on SIGTERM: the sink gives the
    broker what is pending before it returns, so the next node on the same journal does not
    start by publishing again a hit this one announced (a test that wants that left over
    raises out of the block, which cancels the sink as a crash would).
    """
    queue: asyncio.Queue[AnyUpdate | None] = asyncio.Queue()
    sink = MqttSink(node(port, name), journal.outbox, name=name, timeout_s=2.0)
    sink.sign_meters(signer)
    async with running(sink.run(feed(queue))) as task:
        yield queue
        queue.put_nowait(None)
        await within(asyncio.wait({task}), f"{name} to flush its outbox and stop")


@contextlib.asynccontextmanager
async def mqtt_sign(follower: MeterFollower) -> AsyncIterator[VirtualAlphaSign]:
    """The follower feeding the real Alpha sign driver on an emulated sign's pty."""
    face = WatchedSign("pit-2")
    face.open()
    sign = AlphaSign(
        AlphaSignSettings(
            name="pit-2", url=face.url, pool_id=POOL, bytesize=8, parity="N",
            min_interval_s=0.05, alternate_s=0.1, configure_pause_s=0.0, jackpot_hold_s=0.5,
        )
    )  # fmt: skip
    try:
        async with (
            running(face.run()),
            running(follower.run()),
            running(sign.run(follower.updates())),
        ):
            yield face
    finally:
        face.close()


CHANGES = Changes()
"""Wakes the test's waits whenever the follower takes a message or the sign a frame."""


async def until(predicate: Callable[[], bool], what: str) -> None:
    """Wait (bounded) until ``predicate()`` holds; re-checked after every change."""
    await within(CHANGES.until(predicate), what)


class WatchedFollower(MeterFollower):
    """The follower, telling the test's waits about each message it takes."""

    def take(self, topic: str, payload: bytes) -> AnyUpdate | None:
        """Take the message, then wake the waits."""
        taken = super().take(topic, payload)
        CHANGES.tell()
        return taken


class WatchedSign(VirtualAlphaSign):
    """The emulated sign, telling the test's waits about each frame it reads."""

    def feed(self, buffer: bytearray) -> None:
        """Read the frames, then wake the waits."""
        super().feed(buffer)
        CHANGES.tell()


async def settled(face: VirtualAlphaSign, text: str) -> None:
    await until(lambda: face.text == text, f"the sign to show {text}")
