"""A sign station believes only the controller's signed meters: a forged one cannot poison it.

Whoever can publish on ``meter/<pool>`` (a broker account with that right, a compromised sign
account) could publish a meter at ``(epoch, seq)`` = (10^9, 10^9): a fake amount on the floor's
signs, and every genuine meter after it dropped as older, for good. The controller signs each
meter and pool status (controller/meter_signature.py, docs/mqtt.md "Signed meters"); the
follower checks the signature before the order rule sees the payload, so neither an unsigned
forgery, nor one signed by another key, nor a genuine one altered reaches the sign or raises
the order. On a real mosquitto with the real Alpha sign driver on an emulated sign's pty.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from support.drivers.mqtt_tables import TOPICS, settings_for
from support.drivers.sign_station import (
    AT,
    KEYS,
    POOL,
    SIGNER,
    controller_node,
    follower_of,
    meter,
    mqtt_sign,
    settled,
    until,
)

from controller.meter_signature import Signer
from controller.outputs import PoolUpdate
from controller.security.controller_key import ControllerKey
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.outgoing import meter_payload, pool_status_payload

if TYPE_CHECKING:
    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal

HUGE = 10**9
FAKE_CENTS = 999_999_999_00
OTHER = ControllerKey.generate()
OTHER_SIGNER = Signer(OTHER.key_id, OTHER.sign)


def altered(payload: bytes, **fields: object) -> bytes:
    """A genuine signed payload with some fields changed, its signature kept."""
    return json.dumps({**json.loads(payload), **fields}).encode()


def forgeries() -> list[bytes]:
    """Meters at (10^9, 10^9): unsigned, signed by another key, a genuine one altered."""
    fake = meter(FAKE_CENTS, HUGE, epoch=HUGE)
    genuine = meter_payload(meter(1_00, 1, epoch=1), SIGNER)
    return [
        meter_payload(fake),
        meter_payload(fake, OTHER_SIGNER),
        altered(genuine, meter_cents=FAKE_CENTS, seq=HUGE, epoch=HUGE),
        altered(meter_payload(fake, OTHER_SIGNER), key_id=SIGNER.key_id),
    ]


async def publish(port: int, topic: str, *payloads: bytes) -> None:
    """What an intruder with a write right on the topic publishes, retained."""
    async with aiomqtt.Client("127.0.0.1", port, identifier="intruder") as intruder:
        for payload in payloads:
            await intruder.publish(topic, payload, qos=1, retain=True)


def test_forged_meters_at_a_huge_epoch_and_seq_are_never_shown_and_the_genuine_ones_go_on(
    mosquitto: Broker, journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    follower = follower_of(mosquitto.port)
    shown: list[str] = []

    async def scenario() -> None:
        async with (
            mqtt_sign(follower) as face,
            controller_node(mosquitto.port, "node-1", journal) as leader,
        ):
            leader.put_nowait(meter(400_00, 10, epoch=1))
            await settled(face, "$400.00")
            await publish(mosquitto.port, TOPICS.meter(POOL), *forgeries())
            await until(lambda: follower.unverified == 4, "the four forgeries")
            shown.append(face.text)
            leader.put_nowait(meter(401_00, 11, epoch=1))
            await settled(face, "$401.00")
            leader.put_nowait(meter(402_00, 12, epoch=1))
            await settled(face, "$402.00")

    with caplog.at_level(logging.WARNING, logger="drivers.mqtt.follower"):
        asyncio.run(scenario())
    assert shown == ["$400.00"]
    assert follower.order.highest[f"meter/{POOL}"] == (1, 12), "the order was never raised"
    assert follower.meters[POOL].meter_cents == 402_00
    assert (follower.unverified, follower.stale_dropped, follower.rejected) == (4, 0, 0)
    lines = [r.message for r in caplog.records if "not the controller's" in r.message]
    assert len(lines) == 1, "logged once a minute, the rest counted"
    assert "unsigned" in lines[0]


def test_a_forged_pool_status_cannot_close_the_pool_nor_hold_its_order(
    mosquitto: Broker, journal: Journal
) -> None:
    follower = follower_of(mosquitto.port)
    forged = PoolUpdate(AT, HUGE, POOL, False, "PAY AT CAGE 7", epoch=HUGE)

    async def scenario() -> None:
        async with (
            mqtt_sign(follower) as face,
            controller_node(mosquitto.port, "node-1", journal) as leader,
        ):
            leader.put_nowait(meter(10_00, 6, epoch=1))
            await settled(face, "$10.00")
            await publish(
                mosquitto.port,
                TOPICS.pool_status(POOL),
                pool_status_payload(forged),
                pool_status_payload(forged, OTHER_SIGNER),
            )
            await until(lambda: follower.unverified == 2, "the two forgeries")
            assert face.text == "$10.00"
            leader.put_nowait(PoolUpdate(AT, 7, POOL, False, "central not heard", epoch=1))
            await settled(face, "CLOSED central not heard")

    asyncio.run(scenario())
    assert follower.order.highest[f"pool/{POOL}"] == (1, 7)


def test_a_pool_statuss_signature_does_not_make_a_meter() -> None:
    # Each kind is signed under its own domain: the bytes of one never verify as the other.
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL], keys=KEYS)
    status = json.loads(pool_status_payload(PoolUpdate(AT, 9, POOL, True, "", epoch=1), SIGNER))
    fields = {"meter_cents": 1, "reserve_cents": 0, "overflow_cents": 0, "seed_cents": 0}
    as_meter = {k: v for k, v in status.items() if k not in ("open", "reason")} | fields
    assert follower.take(TOPICS.meter(POOL), json.dumps(as_meter).encode()) is None
    assert follower.unverified == 1
    genuine = meter(5_00, 9, epoch=1)
    assert follower.take(TOPICS.meter(POOL), meter_payload(genuine, SIGNER)) == genuine


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (meter_payload(meter(1, HUGE, epoch=HUGE)), "unsigned"),
        (altered(meter_payload(meter(1, 2, epoch=1), SIGNER), sig=""), "unsigned"),
        (meter_payload(meter(1, HUGE, epoch=HUGE), OTHER_SIGNER), "not a controller key"),
        (altered(meter_payload(meter(1, 2, epoch=1), SIGNER), seq=HUGE), "does not verify"),
        (altered(meter_payload(meter(1, 2, epoch=1), SIGNER), sig="!!"), "does not verify"),
        (altered(meter_payload(meter(1, 2, epoch=1), SIGNER), sig=7), "not text"),
    ],
)
def test_each_payload_not_the_controllers_is_dropped_saying_why(
    payload: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL], keys=KEYS)
    with caplog.at_level(logging.WARNING, logger="drivers.mqtt.follower"):
        assert follower.take(TOPICS.meter(POOL), payload) is None
    assert (follower.unverified, follower.rejected, follower.order.highest) == (1, 0, {})
    assert reason in caplog.text
