"""The MQTT source through outages: failing closed, a broker restart, a controller away.

Against a real mosquitto with a real journal behind the intake (docs/faults.md, "Broker
restarts and crashes"): nothing acknowledged while the journal cannot be written and
redelivered after, nothing lost or duplicated through a broker restart, and what was published
while the controller was away kept by its persistent session. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.drivers.mqtt_source_rig import Proxy, receipt_ids, send_stream
from support.drivers.mqtt_tables import (
    CONTROLLER_STATUS,
    TIMEOUT_S,
    event,
    last_is,
    running,
    send,
    settings_for,
    table_client,
    watch,
    within,
)

from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from support.drivers.intake import JournalIntake
    from support.drivers.mosquitto import Broker


def test_unacknowledged_while_failing_closed_and_redelivered_after(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    bet = event("bet", device="bs-1", seq=1, seat=2, spot="progressive", present=True)
    lock = event("lock", device="dealer", seq=1, round="r1")

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            intake.unavailable = True
            async with table_client(mosquitto.port) as table:
                await send(table, "t1", *bet)
                await send(table, "t1", *lock)
            # Three attempts: the first delivery and at least two redeliveries, each after the
            # source dropped its connection without acknowledging.
            await within(intake.wait_submitted(3), "redeliveries")
            await status.until(last_is(CONTROLLER_STATUS, b"offline"), "the controller offline")
            assert not intake.receipts
            intake.unavailable = False
            await within(intake.wait_until(lambda: len(intake.receipts) == 2), "both events")
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online again")

    asyncio.run(scenario())
    assert receipt_ids(intake) == ["t1/bs-1/1", "t1/dealer/1"]
    assert not any(receipt.duplicate for receipt in intake.receipts)
    assert intake.event_ids() == ["t1/bs-1/1", "t1/dealer/1"]
    # Order held: the second event was never tried before the first was journaled.
    attempts = [e.event_id for e in intake.submitted]
    assert attempts[-2:] == ["t1/bs-1/1", "t1/dealer/1"]
    assert set(attempts[:-2]) == {"t1/bs-1/1"}
    assert source.unacknowledged == len(attempts) - 2
    assert source.reconnects >= 2


def test_broker_restart_mid_stream_loses_and_duplicates_nothing(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    count = 60
    stream = [
        event("bet", device="bs-1", seq=n, seat=1 + n % 6, spot="bonus", present=n % 2 == 0)
        for n in range(count)
    ]
    expected = [f"t1/bs-1/{n}" for n in range(count)]

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with running(send_stream(mosquitto.port, "t1", stream)) as table:
                await within(intake.wait_until(lambda: len(intake.receipts) >= 10), "10 events")
                mosquitto.stop()  # SIGTERM: mosquitto saves its sessions and queues
                mosquitto.start()
                await within(
                    intake.wait_until(lambda: len({r.event_id for r in intake.receipts}) == count),
                    "every event",
                )
                await within(table, "the table to finish")

    asyncio.run(scenario())
    applied = [r.event_id for r in intake.receipts if not r.duplicate]
    assert applied == expected  # each once, in order
    assert intake.event_ids() == expected
    assert source.reconnects >= 1


def test_events_queued_while_the_controller_is_away_survive_a_broker_restart(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    stream = [event("lock", device="dealer", seq=n, round=f"r{n}") for n in range(5)]

    async def scenario() -> None:
        async with Proxy(mosquitto) as network:
            source = MqttSource(settings_for(network.port), timeout_s=TIMEOUT_S)
            async with (
                watch(mosquitto.port, CONTROLLER_STATUS) as status,
                running(source.run(intake)),
            ):
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
                network.cut()
                await status.until(last_is(CONTROLLER_STATUS, b"offline"), "the last will")
                await send_stream(mosquitto.port, "t1", stream)  # queued in the source's session
                mosquitto.stop()
                mosquitto.start()
                network.restore()
                await within(intake.wait_until(lambda: len(intake.receipts) == 5), "5 events")

    asyncio.run(scenario())
    assert intake.event_ids() == [f"t1/dealer/{n}" for n in range(5)]
