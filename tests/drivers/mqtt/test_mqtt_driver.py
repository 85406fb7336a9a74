"""The MQTT source and sink against a real mosquitto, with a real journal behind the intake.

Fake tables and displays are plain aiomqtt clients. A :class:`Proxy` between a client and the
broker stands for the network: cutting it drops the connection without a DISCONNECT, as a
pulled cable or a crash does, so the broker publishes the client's last will. Every wait is
bounded; nothing polls (the waits are woken by the intake or by arriving messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from functools import partial
from typing import TYPE_CHECKING, Any, Self

import aiomqtt
import pytest
from support.intake import JournalIntake
from support.journal_rig import FIVE_ACES, POOL, opened_journal, settle, wager
from support.mqtt_tables import (
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
from controller.events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    RoundVoided,
    TableStatusChanged,
)
from controller.journal import Journal
from controller.journal.outbox import JournalOutbox
from controller.outputs import (
    ControllerUpdate,
    HitAnnouncement,
    MeterUpdate,
    TableUpdate,
    WagerRefusal,
)
from drivers.mqtt.outgoing import decode_hit, decode_meter, decode_table_state, decode_wager_refused
from drivers.mqtt.sink import MqttSink
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from support.mosquitto import Broker


"""The bound on any one wait; a passing run takes a fraction of it."""
"""The drivers' wait for the broker's answers: short, as the proxy may accept and then drop."""
AT = "2025-01-02T03:04:05.000Z"


# Helpers.


async def send_stream(port: int, table_id: str, events: list[tuple[str, bytes]]) -> None:
    """Publish events in order as a table does: each one again until the broker has it."""
    pending = list(events)
    async for _attempt in Backoff(0.02, 0.2).attempts():
        with contextlib.suppress(aiomqtt.MqttError):
            async with table_client(port, table_id) as client:
                while pending:
                    kind, payload = pending[0]
                    topic = TOPICS.table_event(table_id, kind)
                    await client.publish(topic, payload, qos=1, timeout=1)
                    pending.pop(0)
        if not pending:
            return


class Proxy:
    """A TCP relay to the broker; :meth:`cut` drops its connections without a DISCONNECT."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.enabled = True
        self.port = 0
        self._links: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()

    def cut(self) -> None:
        """Abort every connection (RST both ways) and refuse new ones until :meth:`restore`."""
        self.enabled = False
        for writer in self._links:
            writer.transport.abort()
        self._links.clear()

    def restore(self) -> None:
        """Accept connections again."""
        self.enabled = True

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.enabled:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.broker.port)
        except OSError:
            writer.transport.abort()
            return
        self._links |= {writer, up_writer}
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()


@pytest.fixture
def intake(journal: Journal) -> JournalIntake:
    return JournalIntake(journal)


def receipt_ids(intake: JournalIntake) -> list[str]:
    return [receipt.event_id for receipt in intake.receipts]


# The source.


def test_table_events_are_submitted_with_their_device_ids(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    stream = [
        event(
            "bet", device="bs-1", seq=1, seat=3, spot="progressive", present=True, amount_cents=500
        ),
        event("lock", device="dealer", seq=1, round="r1"),
        event("card", device="shoe", seq=1, round="r1", position=0, card="As"),
        event("heartbeat", device="shoe", seq=2),
        event("done", device="shoe", seq=3, round="r1"),
        event("void", device="dealer", seq=2, round="r1", reason="misdeal"),
    ]

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            # The source subscribes before it says online: from then on nothing is missed.
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(mosquitto.port) as table:
                for kind, payload in stream:
                    await send(table, "t1", kind, payload)
            await within(intake.wait_until(lambda: len(intake.receipts) == 5), "5 receipts")

    asyncio.run(scenario())
    assert [type(e) for e in intake.submitted] == [
        BetSensed, BetsLocked, CardDealt, DealComplete, RoundVoided,
    ]  # fmt: skip
    expected = ["t1/bs-1/1", "t1/dealer/1", "t1/shoe/1", "t1/shoe/3", "t1/dealer/2"]
    assert receipt_ids(intake) == expected
    assert not any(receipt.duplicate for receipt in intake.receipts)
    assert intake.event_ids() == expected
    assert intake.heartbeats == [("t1", "shoe")]
    bet = intake.submitted[0]
    assert isinstance(bet, BetSensed)
    assert (bet.table_id, bet.seat, bet.spot, bet.present, bet.amount_cents) == (
        "t1", 3, "progressive", True, 500,
    )  # fmt: skip
    assert (source.submitted, source.duplicates, source.heartbeats) == (5, 0, 1)
    assert not source.rejected


def test_a_resent_event_is_applied_once(mosquitto: Broker, intake: JournalIntake) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    bet = event("bet", device="bs-1", seq=7, seat=1, spot="bonus", present=True, amount_cents=100)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(mosquitto.port) as table:
                await send(table, "t1", *bet)
                await send(table, "t1", *bet)
            await within(intake.wait_until(lambda: len(intake.receipts) == 2), "2 receipts")

    asyncio.run(scenario())
    first, second = intake.receipts
    assert first.event_id == second.event_id == "t1/bs-1/7"
    assert (first.duplicate, second.duplicate) == (False, True)
    assert first.seq == second.seq
    assert intake.event_ids() == ["t1/bs-1/7"]
    assert source.duplicates == 1


def test_bad_input_is_rejected_acknowledged_and_never_redelivered(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    settings = settings_for(mosquitto.port)
    good = event("lock", device="dealer", seq=1, round="r1")
    bad = [
        (TOPICS.table_event("t1", "bet"), b'{"v":1,"device":'),
        (TOPICS.table_event("t1", "bet"), b'{"v":2,"device":"bs","seq":1}'),
        (TOPICS.table_event("t1", "bet"), json.dumps({"v": 1, "device": "bs", "seq": 2}).encode()),
        (TOPICS.table_event("t1", "card"), event("card", device="s", seq=1, round="r1",
                                                 position=1, card="Zz")[1]),
        (f"{TOPICS.prefix}table/t1/event/spin", good[1]),
        (f"{TOPICS.prefix}table/t%/event/lock", good[1]),
        (TOPICS.table_event("t9", "lock"), good[1]),
        (TOPICS.table_status("t1"), b"maybe"),
    ]  # fmt: skip
    reasons = [
        "bad-json", "bad-version", "missing-field", "bad-card", "unknown-type", "bad-table",
        "unknown-table", "bad-status",
    ]  # fmt: skip

    async def scenario() -> None:
        async with watch(mosquitto.port, CONTROLLER_STATUS) as status:
            first = MqttSource(settings, known_tables={"t1"}, timeout_s=TIMEOUT_S)
            async with running(first.run(intake)):
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
                async with table_client(mosquitto.port) as table:
                    for topic, payload in bad:
                        await table.publish(topic, payload, qos=1)
                    await send(table, "t1", *good)
                await within(intake.wait_until(lambda: len(intake.receipts) == 1), "the event")
            assert intake.reasons() == reasons
            assert first.rejected == dict.fromkeys(reasons, 1)
            # A new run under the same client id resumes the session: anything not
            # acknowledged would be delivered again, before the marker.
            second = MqttSource(settings, known_tables={"t1"}, timeout_s=TIMEOUT_S)
            marker = event("done", device="dealer", seq=2, round="r1")
            async with running(second.run(intake)):
                async with table_client(mosquitto.port) as table:
                    await send(table, "t1", *marker)
                await within(intake.wait_until(lambda: len(intake.receipts) == 2), "the marker")
            assert not second.rejected

    asyncio.run(scenario())
    assert intake.reasons() == reasons
    assert receipt_ids(intake) == ["t1/dealer/1", "t1/dealer/2"]
    # Every rejection is journaled as a fault, with the topic it came on.
    faults = [row for row in intake.journal.rows() if row["kind"] == "fault"]
    assert len(faults) == len(reasons)
    assert all("mqtt:test/jackpot/v1/table/" in row["event"] for row in faults)


def test_unacknowledged_while_failing_closed_and_redelivered_after(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    bet = event("bet", device="bs-1", seq=1, seat=2, spot="progressive", present=True)
    lock = event("lock", device="dealer", seq=1, round="r1")

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            intake.unavailable = True
            async with table_client(mosquitto.port) as table:
                await send(table, "t1", *bet)
                await send(table, "t1", *lock)
            # Three attempts: the first delivery and at least two redeliveries, each after the
            # source dropped its connection without acknowledging.
            await within(intake.wait_submitted(3), "redeliveries")
            await status.until(last_is(CONTROLLER_STATUS, b"offline"), "the controller offline")
            assert not intake.receipts
            intake.unavailable = False
            await within(intake.wait_until(lambda: len(intake.receipts) == 2), "both events")
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "online again")

    asyncio.run(scenario())
    assert receipt_ids(intake) == ["t1/bs-1/1", "t1/dealer/1"]
    assert not any(receipt.duplicate for receipt in intake.receipts)
    assert intake.event_ids() == ["t1/bs-1/1", "t1/dealer/1"]
    # Order held: the second event was never tried before the first was journaled.
    attempts = [e.event_id for e in intake.submitted]
    assert attempts[-2:] == ["t1/bs-1/1", "t1/dealer/1"]
    assert set(attempts[:-2]) == {"t1/bs-1/1"}
    assert source.unacknowledged == len(attempts) - 2
    assert source.reconnects >= 2


def test_broker_restart_mid_stream_loses_and_duplicates_nothing(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    count = 60
    stream = [
        event("bet", device="bs-1", seq=n, seat=1 + n % 6, spot="bonus", present=n % 2 == 0)
        for n in range(count)
    ]
    expected = [f"t1/bs-1/{n}" for n in range(count)]

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with running(send_stream(mosquitto.port, "t1", stream)) as table:
                await within(intake.wait_until(lambda: len(intake.receipts) >= 10), "10 events")
                mosquitto.stop()  # SIGTERM: mosquitto saves its sessions and queues
                mosquitto.start()
                await within(
                    intake.wait_until(lambda: len({r.event_id for r in intake.receipts}) == count),
                    "every event",
                )
                await within(table, "the table to finish")

    asyncio.run(scenario())
    applied = [r.event_id for r in intake.receipts if not r.duplicate]
    assert applied == expected  # each once, in order
    assert intake.event_ids() == expected
    assert source.reconnects >= 1


def test_events_queued_while_the_controller_is_away_survive_a_broker_restart(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    stream = [event("lock", device="dealer", seq=n, round=f"r{n}") for n in range(5)]

    async def scenario() -> None:
        async with Proxy(mosquitto) as network:
            source = MqttSource(settings_for(network.port), timeout_s=TIMEOUT_S)
            async with (
                watch(mosquitto.port, CONTROLLER_STATUS) as status,
                running(source.run(intake)),
            ):
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
                network.cut()
                await status.until(last_is(CONTROLLER_STATUS, b"offline"), "the last will")
                await send_stream(mosquitto.port, "t1", stream)  # queued in the source's session
                mosquitto.stop()
                mosquitto.start()
                network.restore()
                await within(intake.wait_until(lambda: len(intake.receipts) == 5), "5 events")

    asyncio.run(scenario())
    assert intake.event_ids() == [f"t1/dealer/{n}" for n in range(5)]


def test_controller_last_will_when_the_connection_dies(
    mosquitto: Broker, intake: JournalIntake
) -> None:
    async def scenario() -> None:
        async with Proxy(mosquitto) as network:
            source = MqttSource(settings_for(network.port), timeout_s=TIMEOUT_S)
            async with (
                watch(mosquitto.port, CONTROLLER_STATUS) as status,
                running(source.run(intake)),
            ):
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
                network.cut()  # no DISCONNECT: the broker publishes the will
                await status.until(last_is(CONTROLLER_STATUS, b"offline"), "the last will")
                network.restore()
                await status.until(last_is(CONTROLLER_STATUS, b"online"), "online again")
                assert source.reconnects == 1
            # Stopping cleanly says offline too (a clean DISCONNECT fires no will).
            await status.until(last_is(CONTROLLER_STATUS, b"offline"), "offline at stop")
        # Retained: a display connecting now reads it at once.
        async with watch(mosquitto.port, CONTROLLER_STATUS) as late:
            await late.until(lambda w: bool(w.messages), "the retained status")
            assert late.messages[0].retain
            assert late.payloads(CONTROLLER_STATUS) == [b"offline"]

    asyncio.run(scenario())


def test_table_status_and_its_last_will(mosquitto: Broker, intake: JournalIntake) -> None:
    source = MqttSource(settings_for(mosquitto.port), timeout_s=TIMEOUT_S)
    status_topic = TOPICS.table_status("t1")

    async def scenario() -> None:
        async with (
            Proxy(mosquitto) as table_network,
            watch(mosquitto.port, CONTROLLER_STATUS) as status,
            running(source.run(intake)),
        ):
            await status.until(last_is(CONTROLLER_STATUS, b"online"), "the controller online")
            async with table_client(table_network.port, will=True) as table:
                await table.publish(status_topic, b"online", qos=1, retain=True)
                await table.publish(status_topic, b"online", qos=1, retain=True)
                await within(intake.wait_submitted(1), "online")
                table_network.cut()  # the table's cable: its will says offline
                await within(intake.wait_submitted(2), "the table's last will")

    asyncio.run(scenario())
    online, offline = intake.submitted
    assert isinstance(online, TableStatusChanged)
    assert isinstance(offline, TableStatusChanged)
    assert (online.table_id, online.online) == ("t1", True)
    assert (offline.table_id, offline.online) == ("t1", False)
    assert "last will" in offline.reason
    assert online.event_id != offline.event_id
    assert offline.event_id.startswith("t1/status/mqtt/")
    assert len(intake.receipts) == 2


# The sink.


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
