"""The last wills of the controller and of a table, when a connection dies without a DISCONNECT.

A :class:`support.drivers.mqtt_source_rig.Proxy` between a client and a real mosquitto is cut as a
pulled cable is: the broker publishes the client's will, retained for whoever connects later.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.drivers.mqtt_source_rig import Proxy
from support.drivers.mqtt_tables import (
    CONTROLLER_STATUS,
    TIMEOUT_S,
    TOPICS,
    last_is,
    running,
    settings_for,
    table_client,
    watch,
    within,
)

from controller.events import TableStatusChanged
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from support.drivers.intake import JournalIntake
    from support.drivers.mosquitto import Broker


def test_controller_last_will_when_the_connection_dies(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    async def scenario() -> None:
        async with Proxy(mosquitto) as network:
            source = MqttSource(settings_for(network.port), timeout_s=TIMEOUT_S)
            async with (
                watch(mosquitto.port, CONTROLLER_STATUS) as status,
                running(source.run(intake)),
            ):
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
                network.cut()  # no DISCONNECT: the broker publishes the will
                await status.until(last_is(CONTROLLER_STATUS, b"offline"), "the last will")
                network.restore()
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "online again")
                assert source.reconnects == 1
            # Stopping cleanly says offline too (a clean DISCONNECT fires no will).
            await status.until(last_is(CONTROLLER_STATUS, b"offline"), "offline at stop")
        # Retained: a display connecting now reads it at once.
        async with watch(mosquitto.port, CONTROLLER_STATUS) as late:
            await late.until(lambda w: bool(w.messages), "the retained status")
            assert late.messages[0].retain
            assert late.payloads(CONTROLLER_STATUS) == [b"offline"]

    asyncio.run(scenario())


def test_table_status_and_its_last_will(mosquitto: Broker, intake: JournalIntake) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    status_topic = TOPICS.table_status("t1")

    async def scenario() -> None:
        async with (
            Proxy(mosquitto) as table_network,
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(table_network.port, will=True) as table:
                await table.publish(status_topic, b"online", qos=1, retain=True)
                await table.publish(status_topic, b"online", qos=1, retain=True)
                await within(intake.wait_submitted(1), "online")
                table_network.cut()  # the table's cable: its will says offline
                await within(intake.wait_submitted(2), "the table's last will")

    asyncio.run(scenario())
    online, offline = intake.submitted
    assert isinstance(online, TableStatusChanged)
    assert isinstance(offline, TableStatusChanged)
    assert (online.table_id, online.online) == ("t1", True)
    assert (offline.table_id, offline.online) == ("t1", False)
    assert "last will" in offline.reason
    assert online.event_id != offline.event_id
    assert offline.event_id.startswith("t1/status/mqtt/")
    assert len(intake.receipts) == 2
