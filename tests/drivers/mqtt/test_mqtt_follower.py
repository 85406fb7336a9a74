"""MQTT signs and displays follow the controller in (epoch, seq) order, across brokers.

Real mosquitto brokers, the real meters sink (drivers/mqtt/sink.py) as the leader and as a
zombie (a former leader that lost its fence and wakes up), the follower
(drivers/mqtt/follower.py) feeding the real Alpha sign driver on an emulated sign's pty
(drivers/signs/emulator.py). A zombie's retained meter, published after the new leader's, is
older by epoch: the sign and the display keep the new value (docs/ha.md, "Brokers and
followers").
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.config_files import edited, error_of, load
from support.drivers.mosquitto import Broker, free_port
from support.drivers.mqtt_tables import TOPICS, running, settings_for, watch
from support.drivers.sign_station import (
    AT,
    POOL,
    SIGNER,
    controller_node,
    feed,
    follower_of,
    meter,
    mqtt_sign,
    node,
    settled,
    until,
)

from controller.clock import utc_now
from controller.outputs import ControllerUpdate, HitAnnouncement, MeterUpdate
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.outgoing import meter_payload
from drivers.mqtt.settings import BrokerSettings, broker_address
from drivers.mqtt.sink import MqttSink
from drivers.mqtt.spec import describe

if TYPE_CHECKING:
    from pathlib import Path

    from controller.ledger_journal.sqlite import Journal
    from controller.outputs import AnyUpdate


def test_a_zombies_retained_meter_after_the_new_leaders_does_not_roll_the_sign_back(
    mosquitto: Broker, journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    follower = follower_of(mosquitto.port)

    async def scenario() -> None:
        async with mqtt_sign(follower) as face:
            async with controller_node(mosquitto.port, "node-1", journal) as old:
                old.put_nowait(meter(400_00, 5_000, epoch=1))
                await settled(face, "$400.00")
            # node-2 took over (epoch 2); its rows go on from the head it found.
            async with controller_node(mosquitto.port, "node-2", journal) as leader:
                leader.put_nowait(meter(410_00, 4_990, epoch=2))
                await settled(face, "$410.00")
                # node-1 wakes from its pause and says its last meter again, retained.
                async with controller_node(mosquitto.port, "node-1", journal) as zombie:
                    zombie.put_nowait(meter(400_00, 5_000, epoch=1))
                    await until(lambda: follower.stale_dropped == 1, "the stale meter")
                    zombie.put_nowait(meter(399_00, 5_001, epoch=1))
                    await until(lambda: follower.stale_dropped == 2, "the next stale meter")
                    # The broker now holds the zombie's value; the sign and display do not.
                    async with watch(mosquitto.port, TOPICS.meter(POOL)) as probe:
                        await probe.until(lambda w: bool(w.messages), "the retained meter")
                        assert probe.payloads(TOPICS.meter(POOL))[-1] == meter_payload(
                            meter(399_00, 5_001, epoch=1), SIGNER
                        )
                    assert face.text == "$410.00"
                    assert follower.meters[POOL].meter_cents == 410_00
                    leader.put_nowait(meter(420_00, 4_991, epoch=2))
                    await settled(face, "$420.00")
        assert (follower.meters[POOL].epoch, follower.meters[POOL].seq) == (2, 4_991)

    with caplog.at_level(logging.WARNING, logger="controller.outputs"):
        asyncio.run(scenario())
    assert follower.stale_dropped == 2
    dropped = [r for r in caplog.records if "dropped an update for meter/main" in r.message]
    assert len(dropped) == 1, "logged once"


def test_a_sign_fails_over_to_the_next_broker_and_keeps_its_order(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    second = Broker(tmp_path / "second")
    second.start()
    follower = follower_of(mosquitto.port, second.port)

    async def scenario() -> None:
        async with mqtt_sign(follower) as face:
            async with controller_node(mosquitto.port, "node-1", journal) as first_leader:
                first_leader.put_nowait(meter(100_00, 10, epoch=1))
                await settled(face, "$100.00")
            assert follower.broker == ("127.0.0.1", mosquitto.port)
            # The first node is lost; its broker with it. The second's controller leads.
            mosquitto.kill()
            async with controller_node(second.port, "node-2", journal) as leader:
                leader.put_nowait(meter(120_00, 5, epoch=2))
                await settled(face, "$120.00")
                assert follower.broker == ("127.0.0.1", second.port)
                assert follower.reconnects >= 1
                # The second broker also hears the old leader, late (a bridge, a zombie).
                async with controller_node(second.port, "node-1", journal) as zombie:
                    zombie.put_nowait(meter(90_00, 11, epoch=1))
                    await until(lambda: follower.stale_dropped == 1, "the stale meter")
                leader.put_nowait(meter(121_00, 6, epoch=2))
                await settled(face, "$121.00")

    try:
        asyncio.run(scenario())
    finally:
        second.close()


def test_a_broker_that_cannot_be_reached_is_passed_over(
    mosquitto: Broker, journal: Journal
) -> None:
    follower = follower_of(free_port(), mosquitto.port)

    async def scenario() -> None:
        async with (
            mqtt_sign(follower) as face,
            controller_node(mosquitto.port, "node-1", journal) as leader,
        ):
            leader.put_nowait(meter(77_00, 3, epoch=0))
            await settled(face, "$77.00")
        assert follower.last_error is not None
        assert str(follower.addresses[0][1]) in follower.last_error

    asyncio.run(scenario())


def test_hits_show_once_and_the_controller_going_offline_shows_closed(
    mosquitto: Broker, journal: Journal
) -> None:
    follower = follower_of(mosquitto.port)
    # Now: a signed hit older than the station will celebrate is refused (drivers/mqtt/hits.py).
    hit = HitAnnouncement(utc_now(), 7, "t1/r-1/3/progressive", POOL, "T1", 3, "royal", 250_00,
                          pending=False, tax_report=False, epoch=1)  # fmt: skip

    async def scenario() -> None:
        async with mqtt_sign(follower) as face:
            async with controller_node(mosquitto.port, "node-1", journal) as leader:
                leader.put_nowait(meter(10_00, 6, epoch=1))
                await settled(face, "$10.00")
                leader.put_nowait(hit)
                leader.put_nowait(hit)  # published again (after a crash): shown once
                await settled(face, "JACKPOT T1 SEAT 3 $250.00")
                leader.put_nowait(ControllerUpdate(AT, 0, online=False, reason="failing closed"))
                await until(lambda: follower.controllers == {"node-1": False}, "offline")
            await settled(face, "CLOSED")

    asyncio.run(scenario())
    assert follower.stale_dropped == 0


def test_payloads_that_do_not_decode_or_name_another_pool_are_refused_not_applied() -> None:
    follower = MeterFollower(settings_for(1883), client_id="display-1")
    topic = TOPICS.meter(POOL)
    assert follower.take(topic, b"{") is None
    other = msgspec.structs.replace(meter(5_00, 9, epoch=0), pool_id="other")
    assert follower.take(topic, meter_payload(other)) is None
    assert follower.take(topic, b'{"v":2}') is None
    assert follower.rejected == 3
    assert follower.meters == {}
    applied = follower.take(topic, meter_payload(meter(5_00, 9, epoch=0)))
    assert isinstance(applied, MeterUpdate)
    assert follower.take(TOPICS.controller_status("x"), b"maybe") is None
    assert follower.rejected == 4


def test_the_controllers_own_connections_use_the_first_broker_of_the_list(
    mosquitto: Broker, journal: Journal
) -> None:
    # Where host and port point, no broker listens.
    settings = msgspec.structs.replace(
        node(free_port(), "node-1"), hosts=[f"127.0.0.1:{mosquitto.port}", "127.0.0.1:1"]
    )
    assert describe(settings).startswith(f"127.0.0.1:{mosquitto.port}, 127.0.0.1:1, no TLS")
    queue: asyncio.Queue[AnyUpdate | None] = asyncio.Queue()
    sink = MqttSink(settings, journal.outbox, name="node-1", timeout_s=2.0)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, TOPICS.meter(POOL)) as probe,
            running(sink.run(feed(queue))),
        ):
            queue.put_nowait(meter(12_00, 1, epoch=0))
            await probe.until(lambda w: bool(w.payloads(TOPICS.meter(POOL))), "the meter")

    asyncio.run(scenario())


def test_a_list_of_brokers_is_the_new_setting_and_one_host_still_works() -> None:
    one = BrokerSettings(host="broker.pit", port=8883)
    assert one.addresses() == [("broker.pit", 8883)]
    many = BrokerSettings(hosts=["n1", "n2:1884", "[fd00::3]:1885", "fd00::4"], port=8883)
    assert many.addresses() == [
        ("n1", 8883), ("n2", 1884), ("fd00::3", 1885), ("fd00::4", 8883),
    ]  # fmt: skip
    for bad in ("n1:x", "[fd00::3", ":1883", "n1:70000"):
        with pytest.raises(ValueError, match=r"write|port"):
            broker_address(bad, 1883)


def test_the_broker_section_takes_hosts_and_refuses_a_bad_entry_naming_its_key(
    tmp_path: Path,
) -> None:
    config = load(tmp_path, edited("", '[broker]\nhosts = ["n1", "n2:1884"]\n'))
    broker = config.settings("broker")
    assert isinstance(broker, BrokerSettings)
    assert broker.addresses() == [("n1", 1883), ("n2", 1884)]
    old = load(tmp_path, edited("", '[broker]\nhost = "broker.pit"\nport = 8883\n'))
    assert old.settings("broker").addresses() == [("broker.pit", 8883)]
    error = error_of(tmp_path, edited("", '[broker]\nhosts = ["n1", "n2:port"]\n'))
    assert "broker.hosts[1]" in str(error)
    assert "the port must be a number" in str(error)
    error = error_of(tmp_path, edited("", '[broker]\nhost = "h"\nhosts = ["n1"]\n'))
    assert "not both" in str(error)


def test_a_display_alone_keeps_no_backlog_and_a_slow_sign_gets_the_newest_meter() -> None:
    follower = MeterFollower(settings_for(1883), client_id="display-1")
    topic = TOPICS.meter(POOL)
    for seq in range(1, 101):  # a display reads the meters; nobody takes the updates
        follower.take(topic, meter_payload(meter(seq * 100, seq, epoch=0)))
    assert follower.meters[POOL].seq == 100

    async def scenario() -> list[AnyUpdate]:
        updates = aiter(follower.updates())
        follower.take(TOPICS.controller_status("node-1"), b"offline")
        for seq in range(101, 201):  # the sign is busy meanwhile
            follower.take(topic, meter_payload(meter(seq * 100, seq, epoch=0)))
        return [await anext(updates), await anext(updates)]

    status, newest = asyncio.run(scenario())
    assert isinstance(status, ControllerUpdate), "nothing kept from before it was asked"
    assert isinstance(newest, MeterUpdate)
    assert newest.seq == 200
