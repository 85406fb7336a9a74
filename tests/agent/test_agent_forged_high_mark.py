"""A forged acknowledgement high mark on a table's topic makes no event "journaled".

Every agent message carries ``acked``, what a controller acknowledged to the agent. Anyone who
can publish on the table's topics can claim any ``acked`` for the agent's boot; the controller
takes it only as where a run of that boot may start, never as journaled (docs/ha.md, "Table
agents"), so its cumulative acknowledgement covers only what the journal answered for. A real
agent on a pty line, a real mosquitto, the controller's MQTT source on a real journal; every
wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Final

import aiomqtt
from support.drivers.agent_rig import TABLE, agent_at_table, bets
from support.drivers.intake import JournalIntake
from support.drivers.mqtt_tables import TIMEOUT_S, TOPICS, running, settings_for, watch, within

from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from drivers.agent.wire import forwarded, heartbeat
from drivers.mqtt.agent_wire import decode_ack
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.agent.acks import Ack
    from controller.ledger_journal.sqlite import Journal
    from drivers.agent.service import Agent

ACKS: Final = TOPICS.table_command(TABLE, "ack")
CLAIM: Final = 1_000_000
"""The forged high mark: far ahead of anything the agent stored."""


@contextlib.asynccontextmanager
async def forger(port: int) -> AsyncIterator[aiomqtt.Client]:
    """A client publishing on the table's topics under an id of its own."""
    async with aiomqtt.Client("127.0.0.1", port, identifier="forger") as client:
        yield client


async def acknowledged(agent: Agent, seq: int) -> None:
    outbox = agent.outbox
    await within(agent.uplink.changes.until(lambda: outbox.acked >= seq), f"seq {seq} acked")


def device_ids(intake: JournalIntake) -> list[str]:
    return [r.event_id for r in intake.receipts if not r.duplicate and "/bs-" in r.event_id]


def test_a_forged_high_mark_acknowledges_nothing_unjournaled_and_the_next_events_are_journaled(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    answered: list[Ack] = []

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, ACKS) as acks,
            running(source.run(intake)),
            agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device),
            forger(mosquitto.port) as forged,
        ):
            for payload in bets(3):
                await device.send(payload)
            await acknowledged(agent, 3)
            boot, topic = outbox.boot, TOPICS.table_event(TABLE, "heartbeat")
            # The claim, three ways: a heartbeat, an event past it (a gap), an event just after.
            await forged.publish(topic, heartbeat(99, boot, CLAIM, CLAIM), qos=1)
            kind, gap = forwarded("BET,bs-9,1,1,bonus,1,500", TABLE, boot, CLAIM + 7, CLAIM)
            await forged.publish(TOPICS.table_event(TABLE, kind), gap, qos=1)
            kind, next_one = forwarded("BET,bs-9,2,1,bonus,1,500", TABLE, boot, CLAIM + 1, CLAIM)
            await forged.publish(TOPICS.table_event(TABLE, kind), next_one, qos=1)
            await within(
                intake.wait_until(lambda: "t1/bs-9/2" in intake.event_ids()),
                "the forged next event heard and journaled",
            )
            for payload in bets(3, start=4):
                await device.send(payload)
            await acknowledged(agent, 6)
            answered.extend(decode_ack(p) for p in acks.payloads(ACKS))

    asyncio.run(scenario())
    # The genuine events after the claim are journaled, once each, in order.
    genuine = [f"t1/bs-1/{n}" for n in range(1, 7)]
    assert device_ids(intake) == [*genuine[:3], "t1/bs-9/2", *genuine[3:]]
    assert "t1/bs-9/1" not in intake.event_ids()  # the event past the gap was not taken
    # The agent's outbox is acknowledged through exactly what it stored, and nothing is left.
    assert (outbox.acked, outbox.stored_high) == (6, 6)
    assert outbox.pending(0, 100) == []
    # No acknowledgement ever covered a seq the journal has no event for: the claim was never
    # echoed, and the one run past it is the forged event the journal did take.
    mine = [a for a in answered if a.boot == outbox.boot]
    assert all(a.agent_seq <= 6 or (a.first, a.agent_seq) == (CLAIM + 1, CLAIM + 1) for a in mine)
    assert {a.agent_seq for a in mine} >= {3, 6}
    assert all(a.first <= 4 for a in mine if 4 <= a.agent_seq <= 6)
