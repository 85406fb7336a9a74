"""A table agent in front of the real daemon: the ledger takes its events, acks carry the row.

The daemon (``serve``, in-process) journals a table whose transport is ``mqtt``; a table agent
on a pty line is that table's MQTT client (docs/ha.md, "Table agents"). A progressive wager
made through the agent moves the meter, and the agent's outbox is trimmed by the daemon's
acknowledgement, which carries the journal row of the lock and the journal's epoch (0 for an
SQLite file).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import msgspec
from support.drivers.agent_rig import agent_at_table
from support.runtime.daemon import (
    SITE,
    broker_settings,
    daemon,
    probe,
    tables_announced,
    write_config,
)
from support.runtime.floor import POOL, within

from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from controller.ports import APPLIED
from drivers.mqtt.agent_wire import decode_ack
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.agent.settings import AgentConfig


async def test_a_progressive_wager_through_an_agent_moves_the_meter_and_is_acknowledged(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")

    def on_the_daemons_site(agent_config: AgentConfig) -> AgentConfig:
        broker = msgspec.structs.replace(broker_settings(mosquitto), client_id="table-t1")
        return dataclasses.replace(agent_config, broker=broker)

    acks = Topics(SITE).table_command("t1", "ack")
    async with (
        daemon(config) as running,
        probe(mosquitto, acks) as seen,
        agent_at_table(mosquitto.port, tmp_path, outbox, on_the_daemons_site) as (agent, device),
    ):
        await tables_announced(running, ["t1"])
        await within(agent.view.changes.until(lambda: agent.view.open is True), "open")
        seed = running.runtime.journal.state.pools[POOL].meter_cents
        assert await device.send("BET,bs-1,1,3,progressive,1") == "ACK,bs-1,1"
        assert await device.send("LOCK,dealer,1,r1") == "ACK,dealer,1"
        await running.until_id("t1/dealer/1", "the lock journaled")
        await within(agent.uplink.changes.until(lambda: outbox.acked == 2), "both acknowledged")
        lock = next(r for r in running.receipts if r.event_id == "t1/dealer/1")
        meter = running.runtime.journal.state.pools[POOL].meter_cents
        await seen.until(
            lambda w: any(decode_ack(p).agent_seq == 2 for p in w.payloads(acks)), "ack 2"
        )
        answer = next(decode_ack(p) for p in seen.payloads(acks) if decode_ack(p).agent_seq == 2)
        metrics = running.runtime.metrics
        assert metrics is not None
        counted = {
            family.name: {sample.labels["client"]: sample.value for sample in family.samples}
            for family in metrics.collect()
            if family.name in {"jackpotd_agent_acks", "jackpotd_agent_gaps"}
        }

    assert lock.outcome == APPLIED
    assert (answer.boot, answer.journal_seq, answer.epoch) == (outbox.boot, lock.seq, 0)
    assert meter > seed  # the wager contributed
    assert outbox.pending(0, 10) == []
    assert outbox.epoch == 0
    # Operations see the acknowledgements go out and no event left for a resend.
    assert counted["jackpotd_agent_acks"]["mqtt"] >= 1
    assert counted["jackpotd_agent_gaps"] == {"mqtt": 0.0}
