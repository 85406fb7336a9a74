"""The meters sink signs through the signer process off its intake: a stopped signer loses nothing.

A real ``jackpotd signer`` stopped with SIGSTOP, the real sink signing through it
(drivers/mqtt/signing.py), a real mosquitto, and a sign station's follower feeding the Alpha
sign driver on an emulated sign. Meters and a hit put in while the signer is stopped wait for
their signature (asked again after each timeout, the event loop running on); once it is
continued, the hit and the newest meter are published signed, in order, and the station
believes them.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING

import pytest
from support.drivers.mqtt_tables import running, settings_for, within
from support.drivers.sign_station import (
    POOL,
    WatchedFollower,
    feed,
    meter,
    mqtt_sign,
    node,
    settled,
    until,
)
from support.runtime.controller_keys import write_controller_key
from support.runtime.signer_process import stoppable

from controller.backoff import Backoff
from controller.clock import utc_now
from controller.meter_signature import MeterKeys, Signer
from controller.outputs import HitAnnouncement
from controller.runtime.remote_signer import RemoteSigner
from drivers.mqtt.sink import MqttSink

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.runtime.signer_process import SignerProcess

    from controller.ledger_journal.sqlite import Journal
    from controller.outputs import AnyUpdate


@pytest.fixture
def stoppable_signer(tmp_path: Path) -> Iterator[SignerProcess]:
    write_controller_key(tmp_path)
    yield from stoppable(tmp_path / "controller.key", tmp_path, "node-1")


async def until_true(condition: object, what: str) -> None:
    """Wait (bounded) until ``condition()`` holds, looking every 20 ms."""
    assert callable(condition)

    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await within(wait(), what)


def test_meters_and_a_hit_put_in_while_the_signer_is_stopped_are_published_signed_after(
    stoppable_signer: SignerProcess, mosquitto: Broker, journal: Journal
) -> None:
    client = RemoteSigner(stoppable_signer.socket, timeout_s=0.5)
    follower = WatchedFollower(
        settings_for(mosquitto.port), client_id="sign-pit-2", pools=[POOL],
        backoff=Backoff(0.02, 0.2), timeout_s=2.0, keys=MeterKeys([client.public_key]),
    )  # fmt: skip
    hit = HitAnnouncement(utc_now(), 8, "t1/r-1/3/progressive", POOL, "T1", 3, "royal", 250_00,
                          pending=False, tax_report=False, epoch=1)  # fmt: skip
    sink = MqttSink(node(mosquitto.port, "node-1"), journal.outbox, name="node-1", timeout_s=2.0)
    sink.sign_meters(Signer.of(client))

    async def scenario() -> None:
        queue: asyncio.Queue[AnyUpdate | None] = asyncio.Queue()
        async with mqtt_sign(follower) as face, running(sink.run(feed(queue))):
            queue.put_nowait(meter(10_00, 6, epoch=1))
            await settled(face, "$10.00")
            os.kill(stoppable_signer.process.pid, signal.SIGSTOP)
            for update in (meter(11_00, 7, 1), meter(12_00, 8, 1), hit, meter(13_00, 9, 1)):
                queue.put_nowait(update)
            signing = sink.signing
            assert signing is not None
            await until_true(lambda: signing.unavailable >= 2, "two signatures timed out")
            assert face.text == "$10.00"
            assert queue.empty(), "the sink's intake went on taking the updates"
            os.kill(stoppable_signer.process.pid, signal.SIGCONT)
            await settled(face, "JACKPOT T1 SEAT 3 $250.00")
            await until(lambda: follower.meters[POOL].meter_cents == 13_00, "the newest meter")
        assert signing.replaced >= 1, "a meter not yet signed was replaced by its pool's newer"

    asyncio.run(scenario())
    assert (follower.unverified, follower.hits_refused) == (0, 0)
