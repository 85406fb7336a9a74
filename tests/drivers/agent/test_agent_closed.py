"""A table agent closes its table when the controller goes quiet, and refuses forged acks.

N.J.A.C. 13:69E-1.39B, NY 9 NYCRR 5321.18: losing communication with the controller makes the
table's progressive unplayable. The agent hears the controller only through acknowledgements;
without one for ``closed_after_s`` it refuses every chip arriving on a progressive spot (the
device gets ``NAK ... table-closed``), shows CLOSED, and opens again once the controller answers.
An acknowledgement that is not the controller's answer to this agent trims nothing and keeps
nothing open (docs/ha.md, "Table agents").
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import aiomqtt
from support.drivers.agent_rig import TABLE, agent_at_table
from support.drivers.intake import JournalIntake
from support.drivers.mqtt_tables import TIMEOUT_S, TOPICS, running, settings_for, within

from controller.agent.acks import Ack
from controller.events import BetSensed
from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from drivers.mqtt.agent_wire import encode_ack
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal
    from drivers.agent.service import Agent

ACKS = TOPICS.table_command(TABLE, "ack")
AT = "2026-01-01T00:00:00.000Z"


def state_file(tmp_path: Path) -> dict[str, object]:
    state: dict[str, object] = json.loads((tmp_path / "table-state.json").read_text("utf-8"))
    return state


async def shown(agent: Agent, *, table_open: bool) -> None:
    what = "open" if table_open else "closed"
    await within(agent.view.changes.until(lambda: agent.view.open is table_open), f"table {what}")


def test_no_progressive_wager_is_taken_while_the_controller_is_silent(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    answers: dict[str, str] = {}
    states: list[dict[str, object]] = []

    async def scenario() -> None:
        async with agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device):
            # No controller yet: closed from the start.
            await shown(agent, table_open=False)
            states.append(state_file(tmp_path))
            answers["closed"] = await device.send("BET,bs-1,1,3,progressive,1,100")
            answers["odds"] = await device.send("BET,bs-1,2,4,bonus,1,500")
            answers["leaving"] = await device.send("BET,bs-1,3,5,progressive,0,100")
            source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
            async with running(source.run(intake)):
                await shown(agent, table_open=True)
                states.append(state_file(tmp_path))
                answers["open"] = await device.send("BET,bs-1,4,3,progressive,1,100")
                await within(
                    agent.uplink.changes.until(lambda: outbox.acked == 3), "3 acknowledged"
                )
            # The controller is gone: after closed_after_s without an answer, closed again.
            await shown(agent, table_open=False)
            states.append(state_file(tmp_path))
            answers["closed again"] = await device.send("BET,bs-1,5,3,progressive,1,100")

    asyncio.run(scenario())
    assert answers == {
        "closed": "NAK,bs-1,1,table-closed",
        "odds": "ACK,bs-1,2",
        "leaving": "ACK,bs-1,3",  # a chip leaving is taken: the controller must know it left
        "open": "ACK,bs-1,4",
        "closed again": "NAK,bs-1,5,table-closed",
    }
    journaled = [e for e in intake.submitted if isinstance(e, BetSensed)]
    arrivals = [(e.seq, e.spot) for e in journaled if e.present and e.spot == "progressive"]
    assert arrivals == [(4, "progressive")]  # only the one made while open
    assert [row.device_seq for row in outbox.pending(0, 10)] == []  # nothing refused was stored
    assert [(s["table"], s["open"]) for s in states] == [
        (TABLE, False),
        (TABLE, True),
        (TABLE, False),
    ]
    reasons = [reason for _, reason, _ in outbox.faults()]
    assert reasons.count("table-closed") == 2  # at the start, and once the controller went
    assert reasons.count("table-opened") == 1
    assert reasons.count("refused-table-closed") == 1  # the second within 10 s: held back


def test_forged_or_misrouted_acks_trim_nothing_and_keep_nothing_open(
    mosquitto: Broker, tmp_path: Path
) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    forged = [
        encode_ack(Ack("t2", outbox.boot, 2, 10, 0), AT),  # another table's
        encode_ack(Ack(TABLE, "not-the-boot", 2, 10, 0), AT),  # another boot's (a wiped outbox)
        encode_ack(Ack(TABLE, outbox.boot, 99, 10, 0), AT),  # more than was ever stored
        b'{"v":1,"table":"t1"}',  # no acknowledgement at all
    ]

    async def scenario() -> None:
        async with agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device):
            await device.send("BET,bs-1,1,3,bonus,1,500")
            await device.send("BET,bs-1,2,3,bonus,0,500")
            async with aiomqtt.Client("127.0.0.1", mosquitto.port) as forger:
                for payload in forged:
                    await forger.publish(ACKS, payload, qos=1)
            await within(
                agent.uplink.changes.until(lambda: agent.uplink.refused_acks == len(forged)),
                "every forged acknowledgement refused",
            )
            assert agent.view.open is False
            assert not agent.table_open()

    asyncio.run(scenario())
    assert outbox.acked == 0
    assert [row.seq for row in outbox.pending(0, 10)] == [1, 2]
    reasons = [reason for _, reason, _ in outbox.faults()]
    for reason in ("ack-other-table", "ack-other-boot", "ack-ahead-of-outbox", "ack-missing-field"):
        assert reason in reasons


def test_an_ack_from_a_replaced_sequencer_is_refused_once_a_newer_epoch_acknowledged(
    mosquitto: Broker, tmp_path: Path
) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)

    async def scenario() -> None:
        async with agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device):
            for seq in (1, 2, 3):
                await device.send(f"BET,bs-1,{seq},3,bonus,{seq % 2},500")
            async with aiomqtt.Client("127.0.0.1", mosquitto.port) as leader:
                await leader.publish(ACKS, encode_ack(Ack(TABLE, outbox.boot, 1, 40, 5), AT))
                await within(agent.uplink.changes.until(lambda: outbox.acked == 1), "ack 1")
                # A zombie of epoch 4 claims more: refused.
                await leader.publish(ACKS, encode_ack(Ack(TABLE, outbox.boot, 3, 39, 4), AT))
                await within(
                    agent.uplink.changes.until(lambda: agent.uplink.refused_acks == 1),
                    "the zombie's acknowledgement refused",
                )

    asyncio.run(scenario())
    assert (outbox.acked, outbox.epoch) == (1, 5)
    assert "ack-stale-epoch" in [reason for _, reason, _ in outbox.faults()]


def test_a_lock_while_closed_waits_until_the_progressive_chips_placed_before_are_down(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    answers: dict[str, str] = {}

    async def scenario() -> None:
        async with agent_at_table(mosquitto.port, tmp_path, outbox) as (agent, device):
            source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
            async with running(source.run(intake)):
                await shown(agent, table_open=True)
                answers["chip"] = await device.send("BET,bs-1,1,3,progressive,1,100")
                await within(agent.uplink.changes.until(lambda: outbox.acked == 1), "ack")
            await shown(agent, table_open=False)  # the controller went away
            answers["lock"] = await device.send("LOCK,dealer,1,r1")
            # The dealer takes the progressive wager down; the sensor says so.
            answers["chip down"] = await device.send("BET,bs-1,2,3,progressive,0")
            answers["lock again"] = await device.send("LOCK,dealer,2,r1")

    asyncio.run(scenario())
    assert answers == {
        "chip": "ACK,bs-1,1",
        "lock": "NAK,dealer,1,table-closed",
        "chip down": "ACK,bs-1,2",
        "lock again": "ACK,dealer,2",
    }
    stored = [row.payload for row in outbox.pending(0, 10)]
    assert stored == ["BET,bs-1,2,3,progressive,0", "LOCK,dealer,2,r1"]  # nothing refused kept
    assert outbox.progressive_chips == frozenset()
