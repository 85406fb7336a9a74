"""The MQTT sink against a real mosquitto: meters retained, hits, commands, status, its outbox.

Fake displays are plain aiomqtt clients. What the sink cannot publish waits in the journal's
outbox (docs/mqtt.md): through a broker outage, a controller restart, and a crash between the
journal's commit and the outbox's insert. Every wait is bounded; nothing polls (the waits are
woken by arriving messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from functools import partial
from typing import TYPE_CHECKING, Any

from support.drivers.mqtt_tables import (
    CONTROLLER_STATUS,
    TIMEOUT_S,
    TOPICS,
    last_is,
    running,
    settings_for,
    watch,
    within,
)
from support.journal.journal_rig import FIVE_ACES, POOL, opened_journal, settle, wager

from controller.journal.sqlite.outbox import JournalOutbox
from controller.ledger_journal.sqlite import Journal
from controller.outputs import (
    ControllerUpdate,
    HitAnnouncement,
    MeterUpdate,
    TableUpdate,
    WagerRefusal,
)
from drivers.mqtt.outgoing import decode_hit, decode_meter, decode_table_state, decode_wager_refused
from drivers.mqtt.sink import MqttSink

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker


AT = "2025-01-02T03:04:05.000Z"


async def feed(queue: asyncio.Queue[Any]) -> AsyncIterator[Any]:
    """The updates a sink consumes; ``queue.join()`` returns once it has taken them all."""
    while True:
        update = await queue.get()
        yield update
        queue.task_done()


def meter(cents: int, seq: int, pool: str = "main") -> MeterUpdate:
    return MeterUpdate(AT, seq, pool, cents, 1_000, 0, 50_000)


def hit(payout: str, seq: int, pool: str | None = "main") -> HitAnnouncement:
    return HitAnnouncement(AT, seq, payout, pool, "t1", 3, "royal-flush", 1_234_500, True, True)


def outbox_rows(tmp_path: Path) -> list[tuple[str, bytes]]:
    with contextlib.closing(sqlite3.connect(tmp_path / "journal.db")) as db:
        return db.execute("SELECT topic, payload FROM mqtt_outbox ORDER BY id").fetchall()


def test_sink_publishes_meters_retained_hits_commands_and_status(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    sink = MqttSink(settings_for(mosquitto.port), journal.outbox, timeout_s=TIMEOUT_S)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    meter_topic, hit_topic = TOPICS.meter("main"), TOPICS.hit("main")
    command_topic = TOPICS.table_command("t1", "state")
    refused_topic = TOPICS.table_command("t1", "refused")

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, f"{TOPICS.prefix}#") as display,
            running(sink.run(feed(queue))),
        ):
            await display.until(last_is(CONTROLLER_STATUS, b"online"), "the sink online")
            for update in (
                meter(10_000, 1),
                meter(10_250, 2),
                hit("p-1", 3),
                meter(50_000, 4),
                hit("p-2", 5, pool=None),
                TableUpdate(AT, 6, "t1", online=False, reason="table offline"),
                WagerRefusal(AT, 7, "t1", "r9", 2, "bonus", 10**12, "above the maximum"),
                ControllerUpdate(AT, 8, online=False, reason="journal unavailable"),
            ):
                queue.put_nowait(update)
            await display.until(last_is(CONTROLLER_STATUS, b"offline"), "the status update")
            await display.until(
                lambda w: bool(w.payloads(TOPICS.hit(None))) and bool(w.payloads(command_topic)),
                "the hits and the command",
            )
            await display.until(
                lambda w: decode_meter(w.payloads(meter_topic)[-1]).meter_cents == 50_000,
                "the latest meter",
            )
            assert [decode_hit(p).payout for p in display.payloads(hit_topic)] == ["p-1"]
            no_pool = decode_hit(display.payloads(TOPICS.hit(None))[0])
            assert (no_pool.payout, no_pool.pool, no_pool.amount_cents) == ("p-2", None, 1_234_500)
            (command,) = display.payloads(command_topic)
            assert decode_table_state(command).open is False
            await display.until(lambda w: bool(w.payloads(refused_topic)), "the refusal")
            refusal = decode_wager_refused(display.payloads(refused_topic)[0])
            assert (refusal.round, refusal.seat, refusal.spot, refusal.amount_cents) == (
                "r9", 2, "bonus", 10**12,
            )  # fmt: skip
            assert refusal.reason == "above the maximum"
            retained = {m.topic.value for m in display.messages if m.retain}
            assert not retained  # live messages arrive unflagged; the broker keeps the retained
        # A display connecting later gets the latest meter and status, retained; no hits.
        async with watch(mosquitto.port, f"{TOPICS.prefix}#") as late:
            await late.until(lambda w: len(w.messages) >= 2, "the retained topics")
            assert {m.topic.value: m.retain for m in late.messages} == {
                meter_topic: True, CONTROLLER_STATUS: True,
            }  # fmt: skip
            assert decode_meter(late.payloads(meter_topic)[0]).meter_cents == 50_000
            # The sink said offline when it stopped; so did the update before.
            assert late.payloads(CONTROLLER_STATUS) == [b"offline"]

    asyncio.run(scenario())
    assert outbox_rows(tmp_path) == []
    assert sink.published >= 6


def test_hits_published_while_the_broker_is_down_arrive_after_it_returns(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    sink = MqttSink(settings_for(mosquitto.port), journal.outbox, timeout_s=TIMEOUT_S)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    hits_filter = f"{TOPICS.prefix}meter/+/hit"
    command_topic = TOPICS.table_command("t1", "state")

    async def scenario() -> None:
        # A display with a persistent session: the broker keeps its messages while it is away.
        async with watch(
            mosquitto.port, hits_filter, command_topic, identifier="display-1", clean=False
        ):
            pass
        async with running(sink.run(feed(queue))):
            async with watch(mosquitto.port, CONTROLLER_STATUS) as status:
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the sink online")
            mosquitto.stop()
            for update in (
                hit("p-1", 1),
                meter(100, 2),
                TableUpdate(AT, 3, "t1", online=False, reason="controller failing closed"),
                hit("p-2", 4, pool=None),
                meter(200, 5),
                meter(300, 6),
            ):
                queue.put_nowait(update)
            # The sink keeps consuming with the broker down: nothing waits on it.
            await within(queue.join(), "the sink to take every update")
            assert [topic for topic, _payload in outbox_rows(tmp_path)] == [
                TOPICS.hit("main"), command_topic, TOPICS.hit(None),
            ]  # fmt: skip
            assert sink.pending == 3
            mosquitto.start()
            async with watch(mosquitto.port, TOPICS.meter("main")) as meters:
                # Published after the outbox: once it shows, the outbox has been emptied.
                await meters.until(
                    lambda w: any(decode_meter(p).meter_cents == 300 for p in w.payloads(
                        TOPICS.meter("main"))),
                    "the latest meter",
                )  # fmt: skip
            assert outbox_rows(tmp_path) == []
        async with watch(mosquitto.port, identifier="display-1", clean=False) as display:
            await display.until(lambda w: len(w.messages) == 3, "the display's messages")
            assert [m.topic.value for m in display.messages] == [
                TOPICS.hit("main"), command_topic, TOPICS.hit(None),
            ]  # fmt: skip
            assert decode_hit(display.messages[0].payload).payout == "p-1"

    asyncio.run(scenario())
    assert sink.reconnects >= 1


def test_the_outbox_survives_a_controller_restart(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    settings = settings_for(mosquitto.port)
    hits_filter = f"{TOPICS.prefix}meter/+/hit"

    async def scenario() -> None:
        mosquitto.stop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        before = MqttSink(settings, journal.outbox, timeout_s=TIMEOUT_S)
        async with running(before.run(feed(queue))):
            queue.put_nowait(hit("p-1", 1))
            queue.put_nowait(hit("p-2", 2))
            await within(queue.join(), "the sink to take the hits")
        assert len(outbox_rows(tmp_path)) == 2  # the controller stopped with them unsent
        mosquitto.start()
        async with watch(mosquitto.port, hits_filter, CONTROLLER_STATUS) as display:
            after = MqttSink(settings, journal.outbox, timeout_s=TIMEOUT_S)
            async with running(after.run(feed(asyncio.Queue()))):
                # The status follows the outbox: once it shows, the outbox has been emptied.
                await display.until(last_is(CONTROLLER_STATUS, b"online"), "the sink online")
                assert outbox_rows(tmp_path) == []
            hits = [decode_hit(p).payout for p in display.payloads(TOPICS.hit("main"))]
            assert hits == ["p-1", "p-2"]

    asyncio.run(scenario())


def test_a_hit_journaled_but_never_handed_to_the_sink_is_announced_at_the_next_start(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """A crash between the journal's commit and the outbox's insert loses no announcement."""
    path = tmp_path / "journal.db"
    settings = settings_for(mosquitto.port)
    hit_topic = TOPICS.hit(POOL)
    with opened_journal(path) as journal:  # a hit of the past, before any sink ran
        journal.append(wager("r1-w1", "r1", 1))
        assert journal.append(settle("r1-settle", "r1", {1: FIVE_ACES})).applied

    async def start_and_stop() -> list[str]:
        """Run a sink until it is online (after its outbox); the hits it published."""
        async with watch(mosquitto.port, hit_topic, CONTROLLER_STATUS) as display:
            sink = MqttSink(settings, partial(JournalOutbox, path), timeout_s=TIMEOUT_S)
            async with running(sink.run(feed(asyncio.Queue()))):
                await display.until(last_is(CONTROLLER_STATUS, b"online"), "the sink online")
            return [decode_hit(payload).payout for payload in display.payloads(hit_topic)]

    # A sink's first start does not announce the hits of the past.
    assert asyncio.run(start_and_stop()) == []
    # A hit is committed, and the controller dies before its sink stored the announcement.
    with Journal(path) as journal:
        journal.append(wager("r2-w1", "r2", 1))
        assert journal.append(settle("r2-settle", "r2", {1: FIVE_ACES})).applied
    assert asyncio.run(start_and_stop()) == ["r2-settle/1/progressive"]
    assert outbox_rows(tmp_path) == []
    # Announced once: the next start has nothing more to say.
    assert asyncio.run(start_and_stop()) == []
