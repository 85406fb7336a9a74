"""MQTT sign stations show why a wide-area pool is closed, and its meter once it reopens.

docs/wide-area.md, "A cut WAN"; Michigan R 432.1841: play is suspended after a set time
without communication, and the property's signs show why. The controller publishes each
pool's open or closed status retained on ``meter/<pool>/status`` (docs/mqtt.md); a sign
station (``jackpotd sign``: the follower feeding the real Alpha sign driver on an emulated
sign's pty) shows ``CLOSED <reason>`` while it is closed, orders the statuses by
``(epoch, seq)`` as it orders meters, and reads the retained one when it starts mid-cut.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.drivers.mqtt_tables import TOPICS, settings_for, watch
from support.drivers.sign_station import (
    AT,
    POOL,
    SIGNER,
    controller_node,
    follower_of,
    meter,
    mqtt_sign,
    settled,
    until,
)

from controller.outputs import PoolUpdate
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.outgoing import decode_pool_status, pool_status_payload

if TYPE_CHECKING:
    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal
    from controller.outputs import AnyUpdate

CUT = "central not heard for 60 s"
SHOWN_CLOSED = f"CLOSED {CUT}"


def closed(seq: int, epoch: int) -> PoolUpdate:
    return PoolUpdate(AT, seq, POOL, False, CUT, epoch=epoch)


def reopened(seq: int, epoch: int) -> PoolUpdate:
    return PoolUpdate(AT, seq, POOL, True, "", epoch=epoch)


def test_michigan_432_1841_a_sign_station_shows_why_wide_area_play_is_closed_then_the_meter(
    mosquitto: Broker, journal: Journal
) -> None:
    follower = follower_of(mosquitto.port)

    async def scenario() -> None:
        async with (
            mqtt_sign(follower) as face,
            controller_node(mosquitto.port, "node-1", journal) as leader,
        ):
            leader.put_nowait(meter(10_00, 6, epoch=1))
            await settled(face, "$10.00")
            leader.put_nowait(closed(7, epoch=1))
            await settled(face, SHOWN_CLOSED)
            leader.put_nowait(meter(11_00, 8, epoch=1))  # central's meter moves on meanwhile
            await until(lambda: follower.meters[POOL].seq == 8, "the meter")
            assert face.text == SHOWN_CLOSED, "closed is shown, not the meter"
            leader.put_nowait(reopened(9, epoch=1))
            await settled(face, "$11.00")

    asyncio.run(scenario())
    assert follower.statuses[POOL] == reopened(9, epoch=1)
    assert follower.rejected == 0


def test_a_station_started_mid_cut_reads_the_retained_status_and_a_zombie_cannot_reopen_it(
    mosquitto: Broker, journal: Journal
) -> None:
    follower = follower_of(mosquitto.port)
    topic = TOPICS.pool_status(POOL)

    async def scenario() -> None:
        async with controller_node(mosquitto.port, "node-2", journal) as leader:
            leader.put_nowait(meter(10_00, 6, epoch=2))
            leader.put_nowait(closed(7, epoch=2))
            async with watch(mosquitto.port, topic) as probe:  # retained: a late subscriber's
                await probe.until(lambda w: bool(w.payloads(topic)), "the retained status")
                assert probe.payloads(topic)[-1] == pool_status_payload(closed(7, epoch=2), SIGNER)
            async with mqtt_sign(follower) as face:
                await settled(face, SHOWN_CLOSED)
                # A former leader (epoch 1) wakes and says the pool is open: older, dropped.
                async with controller_node(mosquitto.port, "node-1", journal) as zombie:
                    zombie.put_nowait(reopened(5_000, epoch=1))
                    await until(lambda: follower.stale_dropped == 1, "the stale status")
                assert face.text == SHOWN_CLOSED
                leader.put_nowait(reopened(8, epoch=2))
                await settled(face, "$10.00")

    asyncio.run(scenario())
    assert follower.statuses[POOL] == reopened(8, epoch=2)


def test_a_status_that_does_not_decode_or_names_another_pool_is_refused_not_applied() -> None:
    follower = MeterFollower(settings_for(1883), client_id="display-1", pools=[POOL])
    assert TOPICS.pool_status(POOL) in follower.filters
    topic = TOPICS.pool_status(POOL)
    other = PoolUpdate(AT, 7, "other", False, CUT, epoch=0)
    assert follower.take(topic, pool_status_payload(other)) is None
    assert follower.take(topic, b'{"v":1,"pool":"main","open":"no"}') is None
    assert follower.rejected == 2
    assert follower.take(topic, b"") is None  # a retained status an operator cleared
    assert follower.rejected == 2
    assert follower.statuses == {}
    assert follower.take(topic, pool_status_payload(closed(7, epoch=0))) == closed(7, epoch=0)
    assert decode_pool_status(pool_status_payload(closed(7, epoch=0))).reason == CUT


def test_a_slow_sign_gets_the_newest_status_of_its_pool() -> None:
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL])
    topic = TOPICS.pool_status(POOL)

    async def scenario() -> list[AnyUpdate]:
        updates = aiter(follower.updates())
        for seq in range(1, 11):  # the gate flaps while the sign is busy
            update = closed(seq, epoch=0) if seq % 2 else reopened(seq, epoch=0)
            follower.take(topic, pool_status_payload(update))
        return [await anext(updates)]

    assert asyncio.run(scenario()) == [reopened(10, epoch=0)]
