"""``jackpotd agent`` as a process: killed with SIGKILL mid-stream and started again on its file.

The agent runs as the service does (its own process, its configuration file, its outbox file);
kill -9 gives it no chance to clean up. The device on the pty line goes on resending what was
not answered, as a sensor does. docs/ha.md, "Table agents": every event reaches the journal
exactly once, in order. (kill -9 keeps the page cache: a power loss is not simulated.)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.drivers.agent_rig import (
    TABLE,
    agent_file,
    bets,
    device_on,
    start_agent_process,
)
from support.drivers.intake import JournalIntake
from support.drivers.mqtt_tables import TIMEOUT_S, TOPICS, running, settings_for, watch, within

from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from drivers.mqtt.agent_wire import decode_ack
from drivers.mqtt.source import MqttSource
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal

ACKS = TOPICS.table_command(TABLE, "ack")


def device_ids(intake: JournalIntake) -> list[str]:
    return [r.event_id for r in intake.receipts if not r.duplicate and "/status/" not in r.event_id]


def test_an_agent_killed_mid_stream_and_restarted_loses_and_duplicates_nothing(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    stream = bets(30)
    expected = [f"t1/bs-1/{n}" for n in range(1, 31)]
    boots: list[str] = []

    async def scenario() -> None:
        with PtyPair() as pty:
            config = agent_file(tmp_path, mosquitto.port, pty.path)
            async with (
                watch(mosquitto.port, ACKS) as acks,
                running(source.run(intake)),
                device_on(pty) as device,
            ):
                first = await start_agent_process(config)
                for payload in stream[:10]:
                    await device.send(payload)

                async def rest() -> None:
                    for payload in stream[10:]:
                        await device.send(payload)

                sending = asyncio.create_task(rest())
                first.kill()  # SIGKILL, while the device is sending
                await within(first.wait(), "the killed agent to be gone")
                second = await start_agent_process(config)
                try:
                    await within(sending, "the device to be answered")
                    await within(
                        intake.wait_until(lambda: len(device_ids(intake)) >= len(stream)),
                        "every event journaled",
                    )
                    await acks.until(
                        lambda w: any(decode_ack(p).agent_seq == 30 for p in w.payloads(ACKS)),
                        "the acknowledgement of the last",
                    )
                    boots.extend({decode_ack(p).boot for p in acks.payloads(ACKS)})
                finally:
                    second.terminate()
                    await within(second.wait(), "the agent to stop")
                assert second.returncode == 0

    asyncio.run(scenario())
    assert device_ids(intake) == expected  # each once, in order, across the kill
    outbox = AgentOutboxStore(tmp_path / "agent.db", TABLE)
    assert boots == [outbox.boot]  # the restarted agent went on in the same boot
    assert (outbox.stored_high, outbox.acked) == (30, 30)
    assert outbox.pending(0, 100) == []
