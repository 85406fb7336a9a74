"""No session takeover: the shipped broker names every session after its user.

The attack (docs/faults.md, "Session takeover"): a table holding valid credentials connects
with the controller's client id. A broker that takes client ids as given disconnects the
controller's connection for it, and a clean session wipes the controller's persistent session:
the table events the broker had acknowledged to the tables and queued for the controller are
gone. deploy/mosquitto/mosquitto.conf sets ``use_username_as_clientid true``: every session is
named after its user, whatever id the client sent, so the hostile client gets its own user's
session and the controller's stay as they were. The controller logs in as two users
(``jackpotd-in``, ``jackpotd-out``), one per connection, which keep two sessions.

Each test starts its own broker on the shipped configuration and ACL
(tests/support/drivers/shipped_broker.py),
as the persistent sessions are what is tested; the controller is its own drivers
(:class:`~drivers.mqtt.source.MqttSource`, :class:`~drivers.mqtt.sink.MqttSink`) over a real
journal. One test runs the same attack with ``use_username_as_clientid`` left out of the shipped
configuration, and shows that the events are then lost.

Absence is proven with a sentinel: the forbidden publishes are each acknowledged by the broker
(QoS 1 ``PUBACK``, which mosquitto sends once it has checked the message and queued it for
every subscriber) before a table publishes the sentinel, so a subscriber receives anything the
broker let through before the sentinel.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from support.drivers.intake import JournalIntake
from support.drivers.shipped_broker import (
    AT,
    CLIENT_ID,
    CONTROLLER,
    IN_USER,
    OUT_USER,
    TABLES,
    TOPICS,
    Credentials,
    connect,
    controller_settings,
    credentials_fixture,  # noqa: F401 - registers the fixture
    feed,
    make_secrets,
    publish,
    running,
    start_shipped,
    subscribe,
)
from support.runtime.floor import within

from controller.ledger_journal.sqlite import Journal
from controller.outputs import MeterUpdate
from drivers.mqtt.sink import MqttSink
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.drivers.mqtt_watch import Watch

STATUS = TOPICS.controller_status(CONTROLLER)
CONTROLLER_IDS = (f"{CLIENT_ID}-in", f"{CLIENT_ID}-out")
"""The client ids the controller's source and sink connect with."""
HEARTBEAT = TOPICS.table_event("t1", "heartbeat")


def bet(seq: int) -> tuple[str, bytes]:
    """A progressive bet of t1's bet sensor ``bs-1``: journaled as ``t1/bs-1/<seq>``."""
    payload = {"v": 1, "device": "bs-1", "seq": seq, "seat": 3, "spot": "progressive",
               "present": True, "amount_cents": 500}  # fmt: skip
    return TOPICS.table_event("t1", "bet"), json.dumps(payload).encode()


def heartbeat(seq: int) -> bytes:
    return json.dumps({"v": 1, "device": "shoe", "seq": seq}).encode()


@pytest.fixture
def identity_broker(tmp_path: Path, credentials: Credentials) -> Iterator[Broker]:
    """The shipped configuration and ACL, for this test alone (its sessions are its own)."""
    shipped = start_shipped(tmp_path / "broker", credentials)
    try:
        yield shipped
    finally:
        shipped.close()


def onlines(watch: Watch) -> int:
    """How many times the controller's connections said ``online`` while watched."""
    return watch.live().count((STATUS, b"online"))


async def hostile_connections(identity_broker: Broker, credentials: Credentials) -> None:
    """Table t1, with its own valid credentials, connects as each of the controller's ids.

    With a clean session: under a broker that takes the id as given, that discards the
    session of that id, and the messages queued for it.
    """
    for identifier in CONTROLLER_IDS:
        async with connect(
            identity_broker, credentials, "t1", identifier, clean_session=True
        ) as hostile:
            # It is connected (CONNACK accepted): the broker let it in, under its own name.
            assert hostile.client.identifier == identifier


async def takeover_while_away(
    identity_broker: Broker, credentials: Credentials, journal: Journal
) -> None:
    """The controller subscribes, goes away; t1 bets; the attack; the controller comes back.

    When it is back, t1 bets again: the controller journals what the broker had queued for it
    first, then the second bet.
    """
    settings = controller_settings(identity_broker, credentials)
    intake = JournalIntake(journal)
    async with connect(identity_broker, credentials, "monitor", "monitor") as monitor:
        await subscribe(monitor, STATUS)
        async with running(MqttSource(settings, known_tables=TABLES, timeout_s=2.0).run(intake)):
            await monitor.until(lambda w: onlines(w) == 1, "the controller's source online")
        # The source has stopped; its persistent session (its subscriptions) stays.
        async with connect(identity_broker, credentials, "t1", "table-t1") as table:
            await publish(table, *bet(1))  # the broker acknowledged it to the table
        await hostile_connections(identity_broker, credentials)
        async with running(MqttSource(settings, known_tables=TABLES, timeout_s=2.0).run(intake)):
            await monitor.until(lambda w: onlines(w) == 2, "the controller's source back")
            async with connect(identity_broker, credentials, "t1", "table-t1") as table:
                await publish(table, *bet(2))
            await within(
                intake.wait_until(lambda: "t1/bs-1/2" in intake.event_ids()), "the second bet"
            )


def test_a_table_using_the_controllers_client_id_leaves_its_session_and_queue_alone(
    identity_broker: Broker, credentials: Credentials, tmp_path: Path
) -> None:
    with Journal(tmp_path / "journal.db") as journal:
        asyncio.run(takeover_while_away(identity_broker, credentials, journal))
        # The bet queued while the controller was away survived the attack, in order.
        assert JournalIntake(journal).event_ids() == ["t1/bs-1/1", "t1/bs-1/2"]
    # The broker never knew a session by the ids the clients sent: the controller's are its
    # users', the hostile client's is t1's.
    log = identity_broker.log()
    for identifier in CONTROLLER_IDS:
        assert f" as {identifier} " not in log
    assert f" as {IN_USER} (" in log
    assert log.count(" as t1 (") == 4  # the table twice, the hostile client twice


def test_without_username_as_client_id_the_same_attack_loses_the_queued_event(
    credentials: Credentials, tmp_path: Path
) -> None:
    # Why the shipped configuration has use_username_as_clientid: the attack, without it.
    identity_broker = start_shipped(
        tmp_path / "broker", credentials, drop={"use_username_as_clientid"}
    )
    try:
        with Journal(tmp_path / "journal.db") as journal:
            asyncio.run(takeover_while_away(identity_broker, credentials, journal))
            assert JournalIntake(journal).event_ids() == ["t1/bs-1/2"]
        assert f" as {CONTROLLER_IDS[0]} " in identity_broker.log()
    finally:
        identity_broker.close()


def test_a_table_using_the_controllers_client_ids_does_not_disconnect_it(
    identity_broker: Broker, credentials: Credentials, tmp_path: Path
) -> None:
    settings = controller_settings(identity_broker, credentials)
    meter = TOPICS.meter("main")

    async def scenario(journal: Journal) -> tuple[MqttSource, MqttSink, list[Any]]:
        intake = JournalIntake(journal)
        source = MqttSource(settings, known_tables=TABLES, timeout_s=2.0)
        sink = MqttSink(settings, journal.outbox, timeout_s=2.0)
        updates: asyncio.Queue[Any] = asyncio.Queue()
        async with connect(identity_broker, credentials, "monitor", "monitor") as monitor:
            await subscribe(monitor, f"{TOPICS.prefix}#")
            async with running(source.run(intake)), running(sink.run(feed(updates))):
                await monitor.until(lambda w: onlines(w) == 2, "both connections online")
                await hostile_connections(identity_broker, credentials)
                # Both connections still work: an event in, a meter out.
                async with connect(identity_broker, credentials, "t1", "table-t1") as table:
                    await publish(table, HEARTBEAT, heartbeat(1))
                await within(intake.wait_until(lambda: bool(intake.heartbeats)), "the heartbeat")
                updates.put_nowait(MeterUpdate(AT, 1, "main", 1_000_000, 0, 0, 1_000_000))
                await monitor.until(lambda w: meter in dict(w.live()), "the meter")
                before = await monitor.until_live(HEARTBEAT, heartbeat(1))
        return source, sink, before

    with Journal(tmp_path / "journal.db") as journal:
        source, sink, before = asyncio.run(scenario(journal))
    # Neither connection was dropped: no last will, no reconnection.
    assert (STATUS, b"offline") not in before
    assert (source.reconnects, sink.reconnects) == (0, 0)


def test_the_controllers_source_and_sink_keep_two_sessions(
    identity_broker: Broker, credentials: Credentials, tmp_path: Path
) -> None:
    settings = controller_settings(identity_broker, credentials)
    meter = TOPICS.meter("main")

    async def scenario(journal: Journal) -> JournalIntake:
        intake = JournalIntake(journal)
        updates: asyncio.Queue[Any] = asyncio.Queue()
        async with connect(identity_broker, credentials, "monitor", "monitor") as monitor:
            await subscribe(monitor, f"{TOPICS.prefix}#")
            async with running(
                MqttSink(settings, journal.outbox, timeout_s=2.0).run(feed(updates))
            ):
                source = MqttSource(settings, known_tables=TABLES, timeout_s=2.0)
                async with running(source.run(intake)):
                    await monitor.until(lambda w: onlines(w) == 2, "both connections online")
                # The source is away; the sink goes on, and t1's bet waits in the source's
                # session.
                async with connect(identity_broker, credentials, "t1", "table-t1") as table:
                    await publish(table, *bet(1))
                updates.put_nowait(MeterUpdate(AT, 1, "main", 1_000_000, 0, 0, 1_000_000))
                await monitor.until(lambda w: meter in dict(w.live()), "the meter")
            # The sink connects again (a persistent session of its own) before the source does:
            # had they one session, the sink would take the source's, and its queued bet.
            again: asyncio.Queue[Any] = asyncio.Queue()
            async with running(MqttSink(settings, journal.outbox, timeout_s=2.0).run(feed(again))):
                await monitor.until(lambda w: onlines(w) == 3, "the sink back")
                source = MqttSource(settings, known_tables=TABLES, timeout_s=2.0)
                async with running(source.run(intake)):
                    await within(
                        intake.wait_until(lambda: "t1/bs-1/1" in intake.event_ids()), "the bet"
                    )
        return intake

    with Journal(tmp_path / "journal.db") as journal:
        assert asyncio.run(scenario(journal)).event_ids() == ["t1/bs-1/1"]
    log = identity_broker.log()
    assert log.count(f" as {IN_USER} (") == 2
    assert log.count(f" as {OUT_USER} (") == 2


@pytest.mark.parametrize("forger", ["sign", "monitor"])
def test_a_sign_or_monitor_cannot_publish_under_table_topics(
    identity_broker: Broker, credentials: Credentials, forger: str
) -> None:
    forged = [
        TOPICS.table_status(forger),
        TOPICS.table_event(forger, "bet"),
        TOPICS.table_event(forger, "heartbeat"),
        TOPICS.table_status("t1"),
        TOPICS.table_event("t1", "bet"),
    ]
    sentinel = heartbeat(99)

    async def scenario() -> None:
        # The controller's view of the tables: what it would take as a table's.
        filters = (TOPICS.table_status_filter, TOPICS.table_event_filter)
        async with connect(identity_broker, credentials, IN_USER, "reader") as reader:
            assert await subscribe(reader, *filters) == [True, True]
            async with connect(identity_broker, credentials, forger, forger) as forging:
                for topic in forged:
                    await publish(forging, topic, b"forged", retain=True)
            async with connect(identity_broker, credentials, "t1", "table-t1") as table:
                await publish(table, HEARTBEAT, sentinel)
            assert await reader.until_live(HEARTBEAT, sentinel) == []
        # Nothing was retained either: a new reader gets only what is retained, then the
        # sentinel again.
        async with connect(identity_broker, credentials, IN_USER, "late") as late:
            await subscribe(late, *filters)
            async with connect(identity_broker, credentials, "t1", "table-t1") as table:
                await publish(table, HEARTBEAT, sentinel)
            await late.until_live(HEARTBEAT, sentinel)
            assert all(message.payload != b"forged" for message in late.messages)

    asyncio.run(scenario())


@pytest.mark.parametrize("name", ["jackpotd-in", "jackpotd-out", "sign", "monitor", "jackpotd"])
def test_make_secrets_refuses_a_table_named_as_another_user(tmp_path: Path, name: str) -> None:
    made = make_secrets(tmp_path / "secrets", "t1", name)
    assert made.returncode == 2
    assert f"a table cannot be called {name}" in made.stderr
    assert not (tmp_path / "secrets").exists()


def test_make_secrets_names_a_table_without_its_acl_block(tmp_path: Path) -> None:
    # A table's credentials without its ACL block would connect but never see the controller
    # go offline (deploy/mosquitto/README.md, "Warnings"): make-secrets.sh says so, and still
    # makes them.
    made = make_secrets(tmp_path / "secrets", "t1", "t9")
    assert made.returncode == 0, made.stderr
    assert "table t9 has no 'user t9' block" in made.stderr
    assert "t1 has no" not in made.stderr
    assert (tmp_path / "secrets" / "passwords" / "t9").exists()
