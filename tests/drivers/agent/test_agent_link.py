"""A table agent between pty devices and a real mosquitto, with a controller's MQTT source behind.

The devices are pty lines speaking the reference serial protocol; the agent stores their
messages in a real SQLite outbox and forwards them with (table, boot, seq); the controller's
source journals them in a real journal and acknowledges cumulatively. Each test proves one
rule of docs/ha.md, "Table agents". Every wait is bounded; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.drivers.agent_rig import TABLE, agent_at_table, bets
from support.drivers.intake import JournalIntake
from support.drivers.mosquitto import free_port
from support.drivers.mqtt_tables import (
    TIMEOUT_S,
    TOPICS,
    WAIT_S,
    running,
    settings_for,
    watch,
    within,
)

from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from drivers.mqtt.agent_wire import decode_ack
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.drivers.mqtt_watch import Watch

    from controller.agent.settings import AgentConfig
    from controller.ledger_journal.sqlite import Journal
    from drivers.agent.service import Agent

ACKS = TOPICS.table_command(TABLE, "ack")
EVENTS = f"{TOPICS.prefix}table/{TABLE}/event/+"
ROUND = [
    "BET,bs-1,1,3,progressive,1,100",
    "LOCK,dealer,1,r1",
    "CARD,shoe,1,r1,0,As",
    "DONE,shoe,2,r1",
    "VOID,dealer,2,r1,card exposed",
]
ROUND_IDS = ["t1/bs-1/1", "t1/dealer/1", "t1/shoe/1", "t1/shoe/2", "t1/dealer/2"]


def device_ids(intake: JournalIntake) -> list[str]:
    """The device events journaled, in order, without duplicates (the agent's status aside)."""
    return [r.event_id for r in intake.receipts if not r.duplicate and "/status/" not in r.event_id]


async def table_open(agent: Agent) -> None:
    await within(agent.view.changes.until(lambda: agent.view.open is True), "the table open")


async def acknowledged(agent: Agent, seq: int) -> None:
    outbox = agent.outbox
    await within(agent.uplink.changes.until(lambda: outbox.acked >= seq), f"seq {seq} acked")


def test_device_events_reach_the_journal_once_in_order_and_the_ack_trims_the_outbox(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    answers: list[str] = []

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, ACKS) as acks,
            running(source.run(intake)),
            agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device),
        ):
            await table_open(agent)
            answers.extend([await device.send(payload) for payload in ROUND])
            await acknowledged(agent, len(ROUND))
            last = next(r.seq for r in intake.receipts if r.event_id == ROUND_IDS[-1])
            await acks.until(
                lambda w: any(decode_ack(p).journal_seq == last for p in w.payloads(ACKS)),
                "the acknowledgement of the last row",
            )

    asyncio.run(scenario())
    assert answers == [f"ACK,{p.split(',')[1]},{p.split(',')[2]}" for p in ROUND]
    assert device_ids(intake) == ROUND_IDS
    assert outbox.pending(0, 100) == []
    assert (outbox.acked, outbox.stored_high, outbox.epoch) == (5, 5, 0)
    assert source.agents.answered >= 1


def test_the_ack_carries_the_journal_seq_and_epoch_of_the_last_event_of_the_boot(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    source.agents.epoch = lambda: 7  # a fenced journal's epoch (docs/ha.md)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    seen: list[bytes] = []

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, ACKS) as acks,
            running(source.run(intake)),
            agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device),
        ):
            for payload in bets(3):
                await device.send(payload)
            await acknowledged(agent, 3)
            await acks.until(
                lambda w: any(decode_ack(p).agent_seq == 3 for p in w.payloads(ACKS)), "ack 3"
            )
            seen.extend(acks.payloads(ACKS))

    asyncio.run(scenario())
    final = next(decode_ack(p) for p in seen if decode_ack(p).agent_seq == 3)
    assert (final.table_id, final.boot, final.epoch) == (TABLE, outbox.boot, 7)
    assert final.journal_seq == next(r.seq for r in intake.receipts if r.event_id == "t1/bs-1/3")
    assert outbox.epoch == 7
    payload = json.loads(next(p for p in seen if decode_ack(p).agent_seq == 3))
    fields = {"v", "table", "boot", "agent_seq", "journal_seq", "epoch", "at", "agent_first"}
    assert set(payload) == fields


def test_events_are_resent_until_a_controller_acknowledges_them(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, EVENTS) as events,
            agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device),
        ):
            # No controller: the device is acknowledged once its message is stored, and
            # the agent publishes it again and again.
            assert await device.send("LOCK,dealer,1,r1") == "ACK,dealer,1"
            lock = TOPICS.table_event(TABLE, "lock")
            await events.until(lambda w: len(w.payloads(lock)) >= 3, "three sends")
            assert outbox.acked == 0
            source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
            async with running(source.run(intake)):
                await acknowledged(agent, 1)
            published = [json.loads(p) for p in events.payloads(lock)]

        assert {(p["boot"], p["agent_seq"], p["seq"]) for p in published} == {(outbox.boot, 1, 1)}

    asyncio.run(scenario())
    assert device_ids(intake) == ["t1/dealer/1"]
    assert outbox.pending(0, 10) == []
    # The source submitted it once; every resend was a (table, boot, seq) it had journaled.
    assert [e.event_id for e in intake.submitted if "/status/" not in e.event_id] == ["t1/dealer/1"]


@pytest.mark.parametrize("end", ["stop", "kill"])
def test_a_broker_ended_and_restarted_mid_stream_loses_and_duplicates_nothing(
    mosquitto: Broker, journal: Journal, tmp_path: Path, end: str
) -> None:
    # stop: SIGTERM, mosquitto saves its sessions; kill: SIGKILL, what it held in memory is gone.
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    stream = bets(40)

    async def scenario() -> None:
        async with (
            running(source.run(intake)),
            agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device),
        ):
            for payload in stream[:10]:
                await device.send(payload)
            mosquitto.stop() if end == "stop" else mosquitto.kill()
            # The devices go on: the agent stores, and acknowledges them, broker or not.
            for payload in stream[10:30]:
                await device.send(payload)
            mosquitto.start()
            for payload in stream[30:]:
                await device.send(payload)
            await acknowledged(agent, len(stream))

    asyncio.run(scenario())
    applied = device_ids(intake)
    assert applied == [f"t1/bs-1/{n}" for n in range(1, 41)]  # each once, in order
    assert [i for i in intake.event_ids() if "/status/" not in i] == applied
    assert outbox.pending(0, 100) == []


def test_an_agent_passes_over_an_unreachable_broker_to_the_next_of_its_list(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)

    def with_a_dead_broker_first(config: AgentConfig) -> AgentConfig:
        hosts = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{mosquitto.port}"]
        broker = msgspec.structs.replace(config.broker, hosts=hosts)  # type: ignore[type-var]
        return dataclasses.replace(config, broker=broker)

    async def scenario() -> None:
        async with (
            running(source.run(intake)),
            agent_at_table(mosquitto.port, tmp_path, outbox, with_a_dead_broker_first) as (
                agent,
                device,
            ),
        ):
            await device.send("LOCK,dealer,1,r1")
            await acknowledged(agent, 1)

    asyncio.run(scenario())
    assert device_ids(intake) == ["t1/dealer/1"]
    assert [reason for _, reason, _ in outbox.faults()].count("uplink-failed") >= 1


def test_a_table_that_keeps_playing_does_not_put_the_resend_off(
    mosquitto: Broker, tmp_path: Path
) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    bet = TOPICS.table_event(TABLE, "bet")

    def sends_of_the_first(watcher: Watch) -> int:
        return sum(json.loads(p)["agent_seq"] == 1 for p in watcher.payloads(bet))

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, EVENTS) as events,
            agent_at_table(mosquitto.port, tmp_path, outbox) as (_agent, device),
        ):
            # No controller acknowledges; the devices never stop sending.
            seq = 0
            async with asyncio.timeout(WAIT_S):
                while sends_of_the_first(events) < 2:
                    seq += 1
                    await device.send(f"BET,bs-1,{seq},3,bonus,{seq % 2},500")

    asyncio.run(scenario())
    assert outbox.acked == 0


def test_noise_and_bad_frames_on_the_line_are_refused_and_stop_nothing(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    answers: list[str] = []
    agents: list[Agent] = []

    async def scenario() -> None:
        async with (
            running(source.run(intake)),
            agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device),
        ):
            agents.append(agent)
            answers.append(await device.send("BET,bs-1,1,0,bonus,1,500"))  # no seat 0
            # Only once the agent answers is its port open: noise written before that may be
            # dropped with the port's input buffer, and then counts nowhere.
            await device.write_raw(b"\x00\xff$BET,bs-1,1*0000\r\n$$$garbage")
            answers.append(await device.send("CARD,shoe,1,r1,0,10h"))  # no such card code
            answers.append(await device.send("LOCK,dealer,1,r1"))
            await acknowledged(agent, 1)

    asyncio.run(scenario())
    assert answers == ["NAK,bs-1,1,bad-seat", "NAK,shoe,1,bad-card", "ACK,dealer,1"]
    assert device_ids(intake) == ["t1/dealer/1"]
    (agent,) = agents
    refused = agent.lines[0].refused
    assert refused["bad-seat"] >= 1
    assert refused["bad-card"] >= 1
    assert refused["garbage"] + refused["bad-crc"] >= 1


def test_a_backlog_longer_than_a_batch_is_all_sent_in_order(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    stream = bets(300)  # more than the 256 the uplink reads at once

    async def scenario() -> None:
        async with agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device):
            for payload in stream:  # no controller yet: stored, acknowledged to the device
                await device.send(payload)
            source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
            async with running(source.run(intake)):
                await acknowledged(agent, len(stream))

    asyncio.run(scenario())
    assert device_ids(intake) == [f"t1/bs-1/{n}" for n in range(1, 301)]
    assert outbox.pending(0, 1000) == []


def test_a_controller_restarted_mid_stream_journals_every_event_once(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    # The new source knows nothing of the agent's boot: it starts from what the agent says it
    # was acknowledged, and the broker redelivers what the old one left unacknowledged.
    intake = JournalIntake(journal)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    stream = bets(60)

    async def scenario() -> None:
        async with agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device):
            first = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
            async with running(first.run(intake)):
                for payload in stream[:20]:
                    await device.send(payload)
                await acknowledged(agent, 10)
            for payload in stream[20:40]:  # no controller for a while
                await device.send(payload)
            second = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
            async with running(second.run(intake)):
                for payload in stream[40:]:
                    await device.send(payload)
                await acknowledged(agent, len(stream))

    asyncio.run(scenario())
    assert device_ids(intake) == [f"t1/bs-1/{n}" for n in range(1, 61)]  # once each, in order
