"""A table's device with valid broker credentials, turned hostile, against a real mosquitto.

Each test sends what such a device can send on its own topics and checks the controller's
answer where it happens: the MQTT source and the real sequencer and journal behind it
(docs/faults.md, one section per attack). Waits are woken by the journal's commits or the
intake's calls and bounded; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import TYPE_CHECKING, Any

from support.drivers.intake import JournalIntake, PoisonedIntake
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

from controller.backoff import Backoff
from controller.runtime.broadcast import Broadcast
from controller.runtime.rejection_limit import RejectionLimit
from controller.runtime.sequencer import Sequencer
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal


DEEP = b"[" * 2000 + b"]" * 2000


def rows(journal: Journal, kind: str | None = None) -> list[dict[str, Any]]:
    return [row for row in journal.rows() if kind is None or row["kind"] == kind]


def faults(journal: Journal, reason: str) -> list[dict[str, Any]]:
    found = [json.loads(row["event"]) for row in rows(journal, "fault")]
    return [fault for fault in found if fault["reason"] == reason]


class Floor:
    """The real sequencer over a real journal; tests wait on its commits."""

    def __init__(self, journal: Journal, limit: RejectionLimit | None = None) -> None:
        self.journal = journal
        self.sequencer = Sequencer(journal, Broadcast(), rejection_limit=limit)
        self._changed = asyncio.Event()
        self.sequencer.on_commit.append(lambda _receipts: self._changed.set())

    async def until(self, predicate: Callable[[], bool], what: str) -> None:
        """Return once ``predicate()`` holds, checked after every commit (bounded)."""

        async def wait() -> None:
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

        await within(wait(), what)


def lock(seq: int, round_id: str = "r1") -> tuple[str, bytes]:
    return event("lock", device="dealer", seq=seq, round=round_id)


# Poison messages.


def one_in_flight(broker: Broker) -> None:
    """The broker sends the controller a message only once it acknowledged the one before.

    Then a message that arrives proves every one before it was acknowledged, which is what
    the tests of "never delivered again" wait on.
    """
    broker.stop()
    broker.write_config()
    with broker.config.open("a") as config:
        config.write("max_inflight_messages 1\n")
    broker.start()


def test_deep_nesting_is_one_journaled_rejection_and_the_floor_goes_on(
    mosquitto: Broker, journal: Journal
) -> None:
    """2,000 ``[`` make msgspec raise RecursionError: a rejection, acknowledged, never again."""
    one_in_flight(mosquitto)
    settings = settings_for(mosquitto.port)

    async def scenario() -> None:
        floor = Floor(journal)
        runner = asyncio.create_task(floor.sequencer.run())
        source = MqttSource(settings, known_tables={"t1"}, timeout_s=TIMEOUT_S)
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(floor.sequencer)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online")
            async with table_client(mosquitto.port) as table:
                await table.publish(TOPICS.table_event("t1", "bet"), DEEP, qos=1)
                nested = b'{"v":1,"device":"d","seq":1,"x":' + b"{" * 2000
                await table.publish(TOPICS.table_event("t1", "lock"), nested, qos=1)
                await send(table, "t1", *lock(1))
                marker = event("bet", device="bs", seq=1, seat=1, spot="bonus", present=True)
                await send(table, "t1", *marker)
            await floor.until(lambda: len(rows(journal, "bet-sensed")) == 1, "a marker")
            # A new run resumes the session: an unacknowledged message would come again.
            again = MqttSource(settings, known_tables={"t1"}, timeout_s=TIMEOUT_S)
            async with running(again.run(floor.sequencer)):
                async with table_client(mosquitto.port) as table:
                    await send(table, "t1", *lock(2, "r2"))
                await floor.until(lambda: len(rows(journal, "bets-locked")) == 2, "the marker")
        runner.cancel()
        assert source.rejected == {"undecodable": 1, "bad-json": 1}
        assert not again.rejected

    asyncio.run(scenario())
    (fault,) = faults(journal, "undecodable")
    assert "RecursionError" in fault["detail"]
    assert len(faults(journal, "bad-json")) == 1


def test_duplicate_keys_are_refused_not_read_as_the_last_value(
    mosquitto: Broker, journal: Journal
) -> None:
    """``amount_cents`` twice: 500 to one reader, 100000000 to another. Neither: refused."""
    bet = (
        b'{"v":1,"device":"bs","seq":1,"seat":1,"spot":"bonus","present":true,'
        b'"amount_cents":500,"amount_cents":100000000}'
    )
    intake = JournalIntake(journal)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online")
            async with table_client(mosquitto.port) as table:
                await send(table, "t1", "bet", bet)
            await within(intake.wait_until(lambda: len(intake.rejects) == 1), "the rejection")

    asyncio.run(scenario())
    assert intake.reasons() == ["duplicate-key"]
    assert "'amount_cents'" in intake.rejects[0][2]
    assert intake.submitted == []


def test_a_message_that_keeps_failing_is_parked_whole_and_the_table_plays_on(
    mosquitto: Broker, journal: Journal
) -> None:
    poison = lock(1)
    intake = PoisonedIntake(journal, "t1/dealer/1")
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online")
            async with table_client(mosquitto.port) as table:
                await send(table, "t1", *poison)
                await send(table, "t1", *lock(2, "r2"))
            await within(intake.wait_until(lambda: intake.rejects != []), "the parking")
            await within(intake.wait_until(lambda: intake.receipts != []), "the next event")

    asyncio.run(scenario())
    assert intake.attempts == 3  # delivered again twice, then parked
    assert intake.reasons() == ["dead-letter"]
    source_name, _reason, detail = intake.rejects[0]
    assert source_name.endswith("table/t1/event/lock")
    assert "parked after 3 failures" in detail
    payload = base64.b64decode(detail.rsplit("payload base64 ", 1)[1])
    assert payload == poison[1]  # the whole message is kept
    assert intake.event_ids() == ["t1/dealer/2"]
    assert source.health.dead_letters == 1
    assert source.health.trouble is None  # it works again


class CountedBackoff(Backoff):
    """The driver's backoff, with an event the test waits on: set at the attempt asked for."""

    def __init__(self, until: int) -> None:
        super().__init__(initial=0.01, cap=0.05)
        self.until = until
        self.reached = asyncio.Event()

    async def attempts(self) -> AsyncIterator[int]:
        """The attempts, as the driver's backoff makes them."""
        async for attempt in super().attempts():
            if attempt == self.until:
                self.reached.set()
            yield attempt


def test_a_source_that_cannot_connect_reports_its_trouble(journal: Journal) -> None:
    settings = settings_for(1)  # nothing listens on port 1
    backoff = CountedBackoff(until=3)
    source = MqttSource(settings, backoff=backoff, timeout_s=TIMEOUT_S)

    async def scenario() -> None:
        assert source.health.trouble is None
        async with running(source.run(JournalIntake(journal))):
            await within(backoff.reached.wait(), "three failed connections")

    asyncio.run(scenario())
    assert source.health.trouble is not None
    assert "connection failed" in source.health.trouble


# Reused sequence numbers, lost events.


def test_a_reused_sequence_number_with_new_content_is_a_journaled_conflict(
    mosquitto: Broker, journal: Journal
) -> None:
    first = event("bet", device="bs", seq=7, seat=1, spot="bonus", present=True, amount_cents=100)
    clone = event("bet", device="bs", seq=7, seat=2, spot="bonus", present=True, amount_cents=500)
    settings = settings_for(mosquitto.port)

    async def scenario() -> Sequencer:
        floor = Floor(journal)
        runner = asyncio.create_task(floor.sequencer.run())
        source = MqttSource(settings, timeout_s=TIMEOUT_S)
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(floor.sequencer)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online")
            async with table_client(mosquitto.port) as table:
                for message in (first, first, clone, clone):
                    await send(table, "t1", *message)
            events = floor.sequencer.stats.events
            await floor.until(lambda: sum(events.values()) == 4, "four receipts")
        runner.cancel()
        return floor.sequencer

    sequencer = asyncio.run(scenario())
    assert sequencer.stats.conflicts == {"t1": 1}
    (conflict,) = faults(journal, "sequence-reused")
    assert "seat" in conflict["detail"]
    assert [row["event_id"] for row in rows(journal, "bet-sensed")] == ["t1/bs/7"]


def test_events_lost_before_the_controller_subscribed_or_in_between_show_as_gaps(
    mosquitto: Broker, journal: Journal
) -> None:
    """Published before anyone subscribed (1, 2), skipped (4), lost at the end (7): gaps."""
    settings = settings_for(mosquitto.port)

    def bet(seq: int) -> tuple[str, bytes]:
        return event("bet", device="bs", seq=seq, seat=1, spot="bonus", present=True)

    def heartbeat(seq: int, last: int) -> tuple[str, bytes]:
        return event("heartbeat", device="bs", seq=seq, last=last)

    async def scenario() -> Sequencer:
        async with table_client(mosquitto.port) as table:  # the controller never connected
            for seq in (1, 2):
                await send(table, "t1", *bet(seq))
        floor = Floor(journal)
        runner = asyncio.create_task(floor.sequencer.run())
        source = MqttSource(settings, timeout_s=TIMEOUT_S)
        gaps = floor.sequencer.stats.gaps
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(floor.sequencer)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online")
            async with table_client(mosquitto.port) as table:
                # The broker delivers them in order: the first heartbeat finds the numbers
                # missing, the second (a heartbeat interval later) declares them lost.
                for message in (bet(3), bet(5), bet(6), heartbeat(1000, 7), heartbeat(1001, 7)):
                    await send(table, "t1", *message)
                await floor.until(lambda: gaps["t1"] == 3, "three gaps")
                await send(table, "t1", *heartbeat(1002, 7))
                await send(table, "t1", *bet(8))
                await floor.until(lambda: len(rows(journal, "bet-sensed")) == 4, "bet 8")
        runner.cancel()
        return floor.sequencer

    sequencer = asyncio.run(scenario())
    found = sorted(fault["event_id"] for fault in faults(journal, "sequence-gap"))
    assert found == ["t1/bs/gap/1-2", "t1/bs/gap/4-4", "t1/bs/gap/7-7"]
    assert sequencer.stats.gaps == {"t1": 3}
    assert sequencer.stats.lost_events == {"t1": 4}


# Floods.


def test_a_flood_of_junk_is_counted_whole_but_journaled_in_a_bounded_number_of_rows(
    mosquitto: Broker, journal: Journal
) -> None:
    junk = 2000
    settings = settings_for(mosquitto.port)

    threshold, interval_s = 20, 0.5
    took: list[float] = []

    async def scenario() -> Sequencer:
        floor = Floor(journal, RejectionLimit(threshold=threshold, interval_s=interval_s))
        runner = asyncio.create_task(floor.sequencer.run())
        started = asyncio.get_running_loop().time()
        source = MqttSource(settings, timeout_s=TIMEOUT_S)
        suppressed = "rejections-suppressed"
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(floor.sequencer)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online")
            async with table_client(mosquitto.port) as table:
                topic = TOPICS.table_event("t1", "bet")
                for number in range(junk):
                    await table.publish(topic, b"junk %d" % number, qos=1)

            def counted() -> bool:
                left_out = sum(
                    int(fault["detail"].split()[0]) for fault in faults(journal, suppressed)
                )
                return len(faults(journal, "bad-json")) + left_out == junk

            await floor.until(counted, "every rejection journaled or counted")
        took.append(asyncio.get_running_loop().time() - started)
        runner.cancel()
        return floor.sequencer

    sequencer = asyncio.run(scenario())
    assert sequencer.stats.rejected["bad-json"] == junk  # the metric counts every one
    # At most the threshold's rows and one summary an interval, however long a busy machine
    # took to deliver the flood: the bound is per interval, not per flood.
    intervals = took[0] / interval_s + 2
    assert len(rows(journal, "fault")) <= (threshold + 1) * intervals
    assert len(rows(journal, "fault")) < junk
