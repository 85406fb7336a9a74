"""An enrolled table agent in front of the real daemon; an attacker on the broker is refused.

docs/ha.md, "Signed forwarding": a manager enrolled table t1's agent key, so the ledger
takes t1's device events only with that agent's signature. An attacker with valid broker
credentials publishes on t1's topics (an unsigned progressive bet and lock, and a bet under the
agent's own boot and next ``agent_seq``): each is journaled as a fault, moves no meter and is
never acknowledged to the agent, while the real agent's wager is journaled and moves the meter.
"""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import aiomqtt
import msgspec
from support.drivers.agent_rig import agent_at_table
from support.ledger.approvals import Site, now
from support.runtime.daemon import SITE, broker_settings, daemon, tables_announced, write_config
from support.runtime.floor import POOL, within

from controller.agent_events import TableAgentEnrolled
from controller.agent_signature import AGENT_SIGNATURE
from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from controller.ledger_journal.sqlite import Journal
from controller.ports import APPLIED
from controller.security.agent_key import AgentKey
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from support.drivers.mosquitto import Broker

    from controller.agent.settings import AgentConfig


async def test_an_attacker_on_an_enrolled_tables_topic_is_refused_and_the_agent_is_journaled(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    key = AgentKey.generate("t1")
    database = config.controller.journal
    assert isinstance(database, Path)  # a journal file, not a PostgreSQL URL
    with Journal(database) as journal:
        site = Site.create(journal)
        site.approve(config)
        enrollment = TableAgentEnrolled(
            f"agent-{uuid.uuid4()}", now(), "t1", key.public_key, key.key_id, "mgr"
        )
        site.append(site.sign(enrollment, "mgr"))
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")

    def signing_agent(agent_config: AgentConfig) -> AgentConfig:
        broker = msgspec.structs.replace(broker_settings(mosquitto), client_id="table-t1")
        return dataclasses.replace(agent_config, broker=broker, signer=key.signer())

    topics = Topics(SITE)
    async with (
        daemon(config) as running,
        agent_at_table(mosquitto.port, tmp_path, outbox, signing_agent) as (agent, device),
    ):
        await tables_announced(running, ["t1"])
        await within(agent.view.changes.until(lambda: agent.view.open is True), "open")
        seed = running.runtime.journal.state.pools[POOL].meter_cents
        forged = [
            ("bet", {"v": 1, "device": "bs-9", "seq": 1, "seat": 2, "spot": "progressive",
                     "present": True, "amount_cents": 100}),
            ("lock", {"v": 1, "device": "dealer", "seq": 7, "round": "forged"}),
            # Under the agent's own boot and next seq: never acknowledged in its place.
            ("bet", {"v": 1, "device": "bs-1", "seq": 1, "seat": 3, "spot": "progressive",
                     "present": True, "amount_cents": 100, "boot": outbox.boot,
                     "agent_seq": 1, "acked": 0}),
        ]  # fmt: skip
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, identifier="intruder") as bad:
            for kind, fields in forged:
                await bad.publish(topics.table_event("t1", kind), msgspec.json.encode(fields))
        await running.until(
            lambda: sum(r.reason.startswith(AGENT_SIGNATURE) for r in running.receipts) >= 3,
            "the three forgeries refused",
        )
        assert running.runtime.journal.state.pools[POOL].meter_cents == seed
        assert outbox.acked == 0
        assert await device.send("BET,bs-1,1,3,progressive,1") == "ACK,bs-1,1"
        assert await device.send("LOCK,dealer,1,r1") == "ACK,dealer,1"
        await running.until(
            lambda: any(r.event_id == "t1/dealer/1" and r.applied for r in running.receipts),
            "the agent's lock journaled",
        )
        await within(agent.uplink.changes.until(lambda: outbox.acked == 2), "both acknowledged")
        meter = running.runtime.journal.state.pools[POOL].meter_cents
        metrics = running.runtime.metrics
        assert metrics is not None
        refused = next(
            sample.value
            for family in metrics.collect()
            if family.name == "jackpotd_agent_signatures_refused"
            for sample in family.samples
        )
        rows = running.rows()

    assert meter > seed  # the agent's wager, and only it, contributed
    applied = {row["event_id"] for row in rows if row["outcome"] == APPLIED}
    assert {"t1/bs-1/1", "t1/dealer/1"} <= applied
    assert "t1/bs-9/1" not in applied
    assert "t1/dealer/7" not in applied
    faults = [row for row in rows if row["kind"] == "fault" and AGENT_SIGNATURE in row["event"]]
    assert len(faults) == 3
    assert refused >= 3
