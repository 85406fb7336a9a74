"""The MQTT source with table agents: de-duplication on (table, boot, seq), acks after commit.

Fake agents are plain MQTT clients publishing what an agent publishes (docs/mqtt.md, "Table
agents"), against a real mosquitto and a real journal behind the intake. A table that speaks
MQTT itself (no ``boot``) is handled exactly as before and is never sent an acknowledgement.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.drivers.intake import JournalIntake
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

from controller.agent.acks import Ack
from drivers.mqtt.agent_wire import decode_ack
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import aiomqtt
    from support.drivers.mosquitto import Broker
    from support.drivers.mqtt_watch import Watch

    from controller.ledger_journal.sqlite import Journal

    Scenario = Callable[[aiomqtt.Client, Watch, JournalIntake], Awaitable[None]]

ACKS = f"{TOPICS.prefix}table/+/cmd/ack"


def lock(seq: int, agent_seq: int, *, boot: str = "boot-a", acked: int = 0) -> tuple[str, bytes]:
    stamp = {"boot": boot, "agent_seq": agent_seq, "acked": acked}
    return event("lock", device="dealer", seq=seq, round=f"r{seq}", **stamp)


def beat(boot: str, stored: int, acked: int = 0) -> tuple[str, bytes]:
    return event("heartbeat", device="agent", seq=1, boot=boot, agent_seq=stored, acked=acked)


def acks(watcher: Watch) -> list[Ack]:
    return [decode_ack(payload) for payload in watcher.payloads(ACKS)]


def play(mosquitto: Broker, intake: JournalIntake, scenario: Scenario) -> MqttSource:
    """Run the source and one fake agent (table t1) through ``scenario``."""
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)

    async def run() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS, ACKS) as seen,
            running(source.run(intake)),
        ):
            await seen.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(mosquitto.port) as agent:
                await scenario(agent, seen, intake)

    asyncio.run(run())
    return source


def row_of(intake: JournalIntake, event_id: str) -> int:
    return next(r.seq for r in intake.receipts if r.event_id == event_id and not r.duplicate)


def test_a_resent_agent_event_is_submitted_once_and_acknowledged_again(
    mosquitto: Broker, journal: Journal
) -> None:
    intake = JournalIntake(journal)

    async def scenario(agent: aiomqtt.Client, seen: Watch, _: JournalIntake) -> None:
        await send(agent, "t1", *lock(1, 1))
        await seen.until(lambda w: len(acks(w)) == 1, "the first acknowledgement")
        await send(agent, "t1", *lock(1, 1))  # resent: its acknowledgement was late
        await seen.until(lambda w: len(acks(w)) == 2, "the second acknowledgement")

    source = play(mosquitto, intake, scenario)
    assert [e.event_id for e in intake.submitted] == ["t1/dealer/1"]  # submitted once
    assert source.agents.answered == 2
    assert intake.event_ids() == ["t1/dealer/1"]


def test_the_acknowledgement_is_cumulative_and_names_the_journal_row_and_epoch(
    mosquitto: Broker, journal: Journal
) -> None:
    intake = JournalIntake(journal)
    seen_acks: list[Ack] = []

    async def scenario(agent: aiomqtt.Client, seen: Watch, _: JournalIntake) -> None:
        for n in range(1, 6):
            await send(agent, "t1", *lock(n, n))
        await seen.until(lambda w: any(a.agent_seq == 5 for a in acks(w)), "ack 5")
        seen_acks.extend(acks(seen))

    play(mosquitto, intake, scenario)
    last = seen_acks[-1]
    assert last == Ack("t1", "boot-a", 5, row_of(intake, "t1/dealer/5"), 0)
    assert [a.agent_seq for a in seen_acks] == sorted(a.agent_seq for a in seen_acks)


def test_an_agent_event_past_a_gap_waits_for_the_missing_one(
    mosquitto: Broker, journal: Journal
) -> None:
    intake = JournalIntake(journal)

    async def scenario(agent: aiomqtt.Client, seen: Watch, _: JournalIntake) -> None:
        await send(agent, "t1", *lock(1, 1))
        await seen.until(lambda w: len(acks(w)) == 1, "ack 1")
        await send(agent, "t1", *lock(3, 3))  # seq 2 was lost on the way
        await send(agent, "t1", *beat("boot-a", 3))
        await seen.until(lambda w: len(acks(w)) >= 2, "the answer to the heartbeat")
        assert max(a.agent_seq for a in acks(seen)) == 1  # nothing past the gap claimed
        await send(agent, "t1", *lock(2, 2))  # the agent resends from the gap, in order
        await send(agent, "t1", *lock(3, 3))
        await seen.until(lambda w: any(a.agent_seq == 3 for a in acks(w)), "ack 3")

    source = play(mosquitto, intake, scenario)
    assert intake.event_ids() == ["t1/dealer/1", "t1/dealer/2", "t1/dealer/3"]  # in order
    assert source.agents.gaps == 1


def test_a_new_boot_is_counted_apart_from_the_old_one(mosquitto: Broker, journal: Journal) -> None:
    intake = JournalIntake(journal)
    seen_acks: list[Ack] = []

    async def scenario(agent: aiomqtt.Client, seen: Watch, _: JournalIntake) -> None:
        await send(agent, "t1", *lock(1, 1, boot="old"))
        await send(agent, "t1", *lock(2, 2, boot="old"))
        await seen.until(lambda w: any(a.agent_seq == 2 for a in acks(w)), "the old boot's ack")
        # The outbox was wiped: a new boot numbers from 1 again; its devices go on.
        await send(agent, "t1", *lock(3, 1, boot="new"))
        await seen.until(lambda w: any(a.boot == "new" for a in acks(w)), "the new boot's ack")
        seen_acks.extend(acks(seen))

    play(mosquitto, intake, scenario)
    assert intake.event_ids() == ["t1/dealer/1", "t1/dealer/2", "t1/dealer/3"]
    assert seen_acks[-1] == Ack("t1", "new", 1, row_of(intake, "t1/dealer/3"), 0)


def test_nothing_is_acknowledged_to_an_agent_before_its_commit(
    mosquitto: Broker, journal: Journal
) -> None:
    intake = JournalIntake(journal)
    seen_acks: list[Ack] = []

    async def scenario(agent: aiomqtt.Client, seen: Watch, fed: JournalIntake) -> None:
        fed.unavailable = True  # the journal cannot be written: the controller fails closed
        await send(agent, "t1", *lock(1, 1))
        await within(fed.wait_submitted(1), "the refused attempt")
        fed.unavailable = False  # the broker delivers it again after the backoff
        await seen.until(lambda w: len(acks(w)) >= 1, "the acknowledgement after the commit")
        seen_acks.extend(acks(seen))

    play(mosquitto, intake, scenario)
    assert len(intake.submitted) >= 2  # refused, then journaled
    assert seen_acks[0] == Ack("t1", "boot-a", 1, row_of(intake, "t1/dealer/1"), 0)


def test_an_agents_heartbeat_is_answered_with_what_is_journaled(
    mosquitto: Broker, journal: Journal
) -> None:
    intake = JournalIntake(journal)
    seen_acks: list[Ack] = []

    async def scenario(agent: aiomqtt.Client, seen: Watch, _: JournalIntake) -> None:
        await send(agent, "t1", *beat("boot-a", 0))
        await seen.until(lambda w: len(acks(w)) == 1, "the answer")
        seen_acks.extend(acks(seen))

    source = play(mosquitto, intake, scenario)
    assert seen_acks == [Ack("t1", "boot-a", 0, 0, 0)]  # heard; nothing journaled is claimed
    assert intake.heartbeats == [("t1", "agent")]  # the table is alive for the controller too
    assert source.heartbeats == 1


def test_a_table_speaking_mqtt_itself_is_handled_as_before_and_never_acknowledged(
    mosquitto: Broker, journal: Journal
) -> None:
    intake = JournalIntake(journal)
    seen_acks: list[Ack] = []

    async def scenario(agent: aiomqtt.Client, seen: Watch, fed: JournalIntake) -> None:
        direct = event("lock", device="dealer", seq=1, round="r1")
        await send(agent, "t1", *direct)
        await send(agent, "t1", *direct)  # a resend: once, by its event id, as always
        await within(fed.wait_until(lambda: len(fed.receipts) == 2), "both handled")
        await send(agent, "t2", *beat("boot-b", 0))  # a sentinel: the next answer of all
        await seen.until(lambda w: len(acks(w)) >= 1, "the sentinel's answer")
        seen_acks.extend(acks(seen))

    source = play(mosquitto, intake, scenario)
    assert [r.duplicate for r in intake.receipts] == [False, True]
    assert intake.event_ids() == ["t1/dealer/1"]
    assert seen_acks == [Ack("t2", "boot-b", 0, 0, 0)]
    assert source.duplicates == 1


def test_half_an_agent_stamp_is_refused(mosquitto: Broker, journal: Journal) -> None:
    intake = JournalIntake(journal)

    async def scenario(agent: aiomqtt.Client, _: Watch, fed: JournalIntake) -> None:
        lock = {"device": "dealer", "round": "r1"}
        await send(agent, "t1", *event("lock", seq=1, boot="b", agent_seq=1, **lock))
        await send(agent, "t1", *event("lock", seq=2, agent_seq=4, acked=3, **lock))
        await send(agent, "t1", *event("lock", seq=3, boot="a/b", agent_seq=1, acked=0, **lock))
        await send(agent, "t1", *event("lock", seq=4, boot="b", agent_seq=1, acked=-1, **lock))
        await within(fed.wait_rejects(4), "four rejections")

    play(mosquitto, intake, scenario)
    assert intake.reasons() == ["missing-field", "missing-field", "bad-boot", "bad-acked"]
    assert intake.submitted == []
