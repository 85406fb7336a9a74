"""A table agent on deploy/mosquitto as shipped: TLS, its table's user, the shipped ACL.

The agent logs in as its table's user (``t1``) and needs only what the ACL gives a table: its
status and events, and its commands to read. The acknowledgement is a command only the
controller's events-in user (``jackpotd-in``) may write: another table's forged
acknowledgement is dropped by the broker before the agent could even judge it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

import pytest
from support.drivers.agent_rig import agent_at_table
from support.drivers.intake import JournalIntake
from support.drivers.shipped_broker import (
    AT,
    HOST,
    SITE,
    TOPICS,
    Credentials,
    connect,
    controller_settings,
    credentials_fixture,  # noqa: F401 - registers the fixture
    publish,
    running,
    start_shipped,
)
from support.runtime.floor import within

from controller.agent.acks import Ack
from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from controller.ledger_journal.sqlite import Journal
from drivers.mqtt.agent_wire import encode_ack
from drivers.mqtt.settings import BrokerSettings, TlsSettings
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.agent.settings import AgentConfig
    from drivers.agent.service import Agent


@pytest.fixture(scope="module")
def acl_broker(
    tmp_path_factory: pytest.TempPathFactory, credentials: Credentials
) -> Iterator[Broker]:
    running_broker = start_shipped(tmp_path_factory.mktemp("broker"), credentials)
    try:
        yield running_broker
    finally:
        running_broker.close()


def table_login(acl_broker: Broker, credentials: Credentials) -> BrokerSettings:
    """Table t1's [broker] settings: its user, its password file, its certificate."""
    cert, key = credentials.cert("t1")
    return BrokerSettings(
        host=HOST,
        port=acl_broker.port,
        client_id="table-t1",
        username="t1",
        password_file=str(credentials.password_file("t1")),
        site=SITE,
        keepalive_s=5,
        backoff_initial_s=0.05,
        backoff_cap_s=0.5,
        tls=TlsSettings(
            ca_file=str(credentials.directory / "ca.crt"), cert_file=str(cert), key_file=str(key)
        ),
    )


def test_the_controller_alone_may_acknowledge_a_table_agent(
    acl_broker: Broker, credentials: Credentials, tmp_path: Path
) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    source = MqttSource(controller_settings(acl_broker, credentials), timeout_s=5.0)
    agents: list[Agent] = []

    def as_table_t1(config: AgentConfig) -> AgentConfig:
        return dataclasses.replace(config, broker=table_login(acl_broker, credentials))

    async def scenario(intake: JournalIntake) -> None:
        async with (
            running(source.run(intake)),
            agent_at_table(acl_broker.port, tmp_path, outbox, as_table_t1) as (agent, device),
        ):
            agents.append(agent)
            # Table t2 forges t1's acknowledgement of everything t1 will store.
            async with connect(acl_broker, credentials, "t2", "table-t2") as forger:
                forged = encode_ack(Ack("t1", outbox.boot, 1, 1, 0), AT)
                await publish(forger, TOPICS.table_command("t1", "ack"), forged)
            assert await device.send("LOCK,dealer,1,r1") == "ACK,dealer,1"
            await within(
                agent.uplink.changes.until(lambda: outbox.acked == 1),
                "the controller's acknowledgement",
            )

    with Journal(tmp_path / "journal.db") as journal:
        intake = JournalIntake(journal)
        asyncio.run(scenario(intake))
    assert [r.event_id for r in intake.receipts if r.event_id.startswith("t1/dealer")] == [
        "t1/dealer/1"
    ]
    # Had the forgery reached the agent (ahead of anything stored) it would have been refused.
    (agent,) = agents
    assert agent.uplink.refused_acks == 0
    assert agent.view.open is True
