"""The MQTT source against a real mosquitto: table events submitted, resent ones applied once.

Fake tables are plain aiomqtt clients, a real journal stands behind the intake. Each event is
submitted under its device's id, a resent one is a duplicate applied once, and bad input is
rejected, acknowledged and journaled as a fault, never redelivered. Every wait is bounded;
nothing polls (the waits are woken by the intake).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from support.drivers.mqtt_source_rig import receipt_ids
from support.drivers.mqtt_tables import (
    CONTROLLER_STATUS,
    TIMEOUT_S,
    TOPICS,
    event,
    last_is,
    running,
    send,
    settings_for,
    table_client,
    watch,
    within,
)

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete, RoundVoided
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from support.drivers.intake import JournalIntake
    from support.drivers.mosquitto import Broker


def test_table_events_are_submitted_with_their_device_ids(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    stream = [
        event(
            "bet", device="bs-1", seq=1, seat=3, spot="progressive", present=True, amount_cents=500
        ),
        event("lock", device="dealer", seq=1, round="r1"),
        event("card", device="shoe", seq=1, round="r1", position=0, card="As"),
        event("heartbeat", device="shoe", seq=2),
        event("done", device="shoe", seq=3, round="r1"),
        event("void", device="dealer", seq=2, round="r1", reason="misdeal"),
    ]

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            # The source subscribes before it says online: from then on nothing is missed.
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(mosquitto.port) as table:
                for kind, payload in stream:
                    await send(table, "t1", kind, payload)
            await within(intake.wait_until(lambda: len(intake.receipts) == 5), "5 receipts")

    asyncio.run(scenario())
    assert [type(e) for e in intake.submitted] == [
        BetSensed, BetsLocked, CardDealt, DealComplete, RoundVoided,
    ]  # fmt: skip
    expected = ["t1/bs-1/1", "t1/dealer/1", "t1/shoe/1", "t1/shoe/3", "t1/dealer/2"]
    assert receipt_ids(intake) == expected
    assert not any(receipt.duplicate for receipt in intake.receipts)
    assert intake.event_ids() == expected
    assert intake.heartbeats == [("t1", "shoe")]
    bet = intake.submitted[0]
    assert isinstance(bet, BetSensed)
    assert (bet.table_id, bet.seat, bet.spot, bet.present, bet.amount_cents) == (
        "t1", 3, "progressive", True, 500,
    )  # fmt: skip
    assert (source.submitted, source.duplicates, source.heartbeats) == (5, 0, 1)
    assert not source.rejected


def test_a_resent_event_is_applied_once(mosquitto: Broker, intake: JournalIntake) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    bet = event("bet", device="bs-1", seq=7, seat=1, spot="bonus", present=True, amount_cents=100)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(mosquitto.port) as table:
                await send(table, "t1", *bet)
                await send(table, "t1", *bet)
            await within(intake.wait_until(lambda: len(intake.receipts) == 2), "2 receipts")

    asyncio.run(scenario())
    first, second = intake.receipts
    assert first.event_id == second.event_id == "t1/bs-1/7"
    assert (first.duplicate, second.duplicate) == (False, True)
    assert first.seq == second.seq
    assert intake.event_ids() == ["t1/bs-1/7"]
    assert source.duplicates == 1


def test_bad_input_is_rejected_acknowledged_and_never_redelivered(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    settings = settings_for(mosquitto.port)
    good = event("lock", device="dealer", seq=1, round="r1")
    bad = [
        (TOPICS.table_event("t1", "bet"), b'{"v":1,"device":'),
        (TOPICS.table_event("t1", "bet"), b'{"v":2,"device":"bs","seq":1}'),
        (TOPICS.table_event("t1", "bet"), json.dumps({"v": 1, "device": "bs", "seq": 2}).encode()),
        (TOPICS.table_event("t1", "card"), event("card", device="s", seq=1, round="r1",
                                                 position=1, card="Zz")[1]),
        (f"{TOPICS.prefix}table/t1/event/spin", good[1]),
        (f"{TOPICS.prefix}table/t%/event/lock", good[1]),
        (TOPICS.table_event("t9", "lock"), good[1]),
        (TOPICS.table_status("t1"), b"maybe"),
    ]  # fmt: skip
    reasons = [
        "bad-json", "bad-version", "missing-field", "bad-card", "unknown-type", "bad-table",
        "unknown-table", "bad-status",
    ]  # fmt: skip

    async def scenario() -> None:
        async with watch(mosquitto.port, CONTROLLER_STATUS) as status:
            first = MqttSource(settings, known_tables={"t1"}, timeout_s=TIMEOUT_S)
            async with running(first.run(intake)):
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
                async with table_client(mosquitto.port) as table:
                    for topic, payload in bad:
                        await table.publish(topic, payload, qos=1)
                    await send(table, "t1", *good)
                await within(intake.wait_until(lambda: len(intake.receipts) == 1), "the event")
            assert intake.reasons() == reasons
            assert first.rejected == dict.fromkeys(reasons, 1)
            # A new run under the same client id resumes the session: anything not
            # acknowledged would be delivered again, before the marker.
            second = MqttSource(settings, known_tables={"t1"}, timeout_s=TIMEOUT_S)
            marker = event("done", device="dealer", seq=2, round="r1")
            async with running(second.run(intake)):
                async with table_client(mosquitto.port) as table:
                    await send(table, "t1", *marker)
                await within(intake.wait_until(lambda: len(intake.receipts) == 2), "the marker")
            assert not second.rejected

    asyncio.run(scenario())
    assert intake.reasons() == reasons
    assert receipt_ids(intake) == ["t1/dealer/1", "t1/dealer/2"]
    # Every rejection is journaled as a fault, with the topic it came on.
    faults = [row for row in intake.journal.rows() if row["kind"] == "fault"]
    assert len(faults) == len(reasons)
    assert all("mqtt:test/jackpot/v1/table/" in row["event"] for row in faults)
