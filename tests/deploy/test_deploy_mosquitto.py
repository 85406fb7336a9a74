"""deploy/mosquitto against a real broker: TLS, a password per user, an ACL that confines tables.

The broker runs the shipped ``mosquitto.conf`` and ACL with the shipped ``make-secrets.sh``'s
credentials (the rig: tests/support/drivers/shipped_broker.py).
tests/deploy/test_deploy_mosquitto_identity.py proves what the broker's naming of sessions after
users stops (session takeover).

Mosquitto drops a publish the ACL forbids without telling an MQTT 3.1.1 client, so absence is
proven with a sentinel: a forbidden publish is followed by an allowed one from the same client,
and a subscriber that can read everything (the ``monitor`` user) must see the sentinel but
nothing forbidden before it (the broker keeps one client's messages in order). One broker
serves the whole module; each test looks only at live (not retained) messages, except where it
checks what was retained. The broker names each session after its user, so a test holds one
connection per user at a time.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from typing import TYPE_CHECKING, Any

import aiomqtt
import pytest
from support.drivers.intake import JournalIntake
from support.drivers.shipped_broker import (
    AT,
    CLIENT_ID,
    CONTROLLER,
    HOST,
    IN_USER,
    OUT_USER,
    SAMPLE,
    SHIPPED,
    SUBSTITUTED,
    TABLES,
    TOPICS,
    WAIT_S,
    Credentials,
    connect,
    controller_settings,
    credentials_fixture,  # noqa: F401 - registers the fixture
    directives,
    feed,
    publish,
    refused,
    running,
    start_shipped,
    subscribe,
)
from support.runtime.floor import within

from controller.events import CheckpointRecorded
from controller.ledger_journal.sqlite import Journal
from controller.outputs import CheckpointUpdate, HitAnnouncement, MeterUpdate, TableUpdate
from drivers.mqtt.sink import MqttSink
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker


@pytest.fixture(scope="module")
def deployed_broker(
    tmp_path_factory: pytest.TempPathFactory, credentials: Credentials
) -> Iterator[Broker]:
    running_broker = start_shipped(tmp_path_factory.mktemp("broker"), credentials)
    try:
        yield running_broker
    finally:
        running_broker.close()


# The configuration as shipped.


def test_shipped_conf_has_what_the_controller_requires() -> None:
    settings = directives((SHIPPED / "mosquitto.conf").read_text(encoding="utf-8"))
    values = dict(settings)
    # docs/mqtt.md, "The broker".
    assert ("set_tcp_nodelay", "true") in settings
    assert ("persistence", "true") in settings
    assert values["persistence_location"] == "/var/lib/mosquitto/"
    assert int(values["max_queued_messages"]) >= 100_000
    assert ("autosave_on_changes", "true") in settings
    # Only authenticated users, under the ACL, over TLS with client certificates.
    assert ("allow_anonymous", "false") in settings
    assert values["acl_file"]
    assert values["password_file"]
    listeners = [value for key, value in settings if key == "listener"]
    assert listeners == ["8883"], "one listener, the TLS one"
    assert {"cafile", "certfile", "keyfile"} <= values.keys()
    assert ("require_certificate", "true") in settings
    assert values["tls_version"] in {"tlsv1.2", "tlsv1.3"}
    assert ("use_identity_as_username", "false") in settings
    # Sessions are named after users (docs/mqtt.md, "Client ids and sessions"): a listener's
    # option, so after the listener.
    assert ("use_username_as_clientid", "true") in settings
    assert settings.index(("use_username_as_clientid", "true")) > settings.index(
        ("listener", "8883")
    )
    # Every directive the test changes is in the file once, and it is the only thing changed.
    assert {key for key, _ in settings} >= set(SUBSTITUTED)


def test_acl_is_written_for_the_sample_site_and_its_users() -> None:
    acl = directives((SHIPPED / "acl").read_text(encoding="utf-8"))
    topics = [value.split()[-1] for key, value in acl if key in {"topic", "pattern"}]
    assert topics
    assert all(t.startswith((TOPICS.prefix, "$SYS/")) for t in topics), "all under the site"
    users = {value for key, value in acl if key == "user"}
    tables = {table["id"] for table in SAMPLE["tables"]}
    assert users == {IN_USER, OUT_USER, "sign", "monitor", *tables}
    # Each table of the sample site has its block, and it grants the controllers' status and
    # nothing else (its own topics come from the %u patterns).
    status = f"read {TOPICS.prefix}controller/+/status"
    for table in tables:
        assert block_of(acl, table) == [("topic", status)], table
    # Table ids become user names (the %u patterns): none may be one of the other users, and
    # each of those is denied what the patterns would give it.
    for user in users - tables:
        assert block_of(acl, user)[0] == ("topic", f"deny {TOPICS.prefix}table/{user}/#"), user
    # The README documents every user and every substituted directive.
    readme = (SHIPPED / "README.md").read_text(encoding="utf-8")
    for word in [*users, *SUBSTITUTED, "make-secrets.sh", "mosquitto_passwd"]:
        assert f"`{word}" in readme, word


def block_of(acl: list[tuple[str, str]], user: str) -> list[tuple[str, str]]:
    """The lines of ``user``'s block: from its ``user`` line to the next."""
    start = acl.index(("user", user)) + 1
    ends = [at for at, (key, _) in enumerate(acl) if key == "user" and at >= start]
    return acl[start : ends[0] if ends else len(acl)]


# Tables.


def test_a_table_publishes_its_status_and_events_and_reads_its_commands(
    deployed_broker: Broker, credentials: Credentials
) -> None:
    status = TOPICS.table_status("t1")
    bet = TOPICS.table_event("t1", "bet")
    command = TOPICS.table_command("t1", "state")
    will = aiomqtt.Will(status, b"offline", qos=1, retain=True)

    async def scenario() -> None:
        async with (
            connect(deployed_broker, credentials, "monitor", "monitor-allowed") as monitor,
            connect(deployed_broker, credentials, "t1", "table-t1", will=will) as table,
            connect(deployed_broker, credentials, OUT_USER, f"{CLIENT_ID}-out") as controller,
        ):
            assert await subscribe(monitor, f"{TOPICS.prefix}#") == [True]
            assert await subscribe(table, f"{TOPICS.prefix}table/t1/cmd/#") == [True]
            await publish(table, status, b"online", retain=True)
            for kind in ("bet", "lock", "card", "done", "void", "heartbeat"):
                await publish(table, TOPICS.table_event("t1", kind), kind.encode())
            await publish(controller, command, b"open")
            seen = await monitor.until_live(command, b"open")
            assert seen[:2] == [(status, b"online"), (bet, b"bet")]
            assert len(seen) == 7
            assert await table.until_live(command, b"open") == []
        # A new subscriber gets the table's status, retained.
        async with connect(deployed_broker, credentials, "sign", "sign-allowed") as sign:
            assert await subscribe(sign, status) == [True]
            await sign.until(lambda w: bool(w.messages), "the retained status")
            assert (sign.messages[0].topic.value, sign.messages[0].retain) == (status, True)

    asyncio.run(scenario())


FORGED = b"forged"


def forbidden_to_t1() -> list[str]:
    """Topics table t1 must not write: other tables', the controller's, and odd levels."""
    return [
        TOPICS.table_event("t2", "bet"),
        TOPICS.table_status("t2"),
        TOPICS.table_command("t2", "state"),
        TOPICS.table_command("t1", "state"),  # its own commands come from the controller only
        TOPICS.meter("main"),
        TOPICS.hit("main"),
        TOPICS.hit(None),
        TOPICS.controller_status(CONTROLLER),
        TOPICS.controller_checkpoint(CONTROLLER),
        f"{TOPICS.prefix}table/t1/event/bet/extra",
        f"{TOPICS.prefix}table/t1/other",
    ]


def test_every_table_and_sign_reads_the_controllers_status(
    deployed_broker: Broker, credentials: Credentials
) -> None:
    # Tables and signs show CLOSED while the controller is offline, so each must read its
    # retained status: each table through its own ACL block, signs through theirs.
    status = TOPICS.controller_status(CONTROLLER)

    async def scenario() -> None:
        async with connect(
            deployed_broker, credentials, OUT_USER, f"{CLIENT_ID}-out"
        ) as controller:
            await publish(controller, status, b"online", retain=True)
        for user in (*TABLES, "sign"):
            async with connect(
                deployed_broker, credentials, user, f"{user}-reads-status"
            ) as reader:
                assert await subscribe(reader, status) == [True]
                await reader.until(lambda w: bool(w.messages), f"the status at {user}")
                message = reader.messages[0]
                assert (message.topic.value, message.payload, message.retain) == (
                    status,
                    b"online",
                    True,
                ), user

    asyncio.run(scenario())


def test_a_table_cannot_publish_as_another_table_or_as_the_controller(
    deployed_broker: Broker, credentials: Credentials
) -> None:
    sentinel = TOPICS.table_event("t1", "heartbeat")

    async def scenario() -> None:
        async with (
            connect(deployed_broker, credentials, "monitor", "monitor-forged") as monitor,
            connect(deployed_broker, credentials, "t2", "table-t2") as victim,
        ):
            assert await subscribe(monitor, f"{TOPICS.prefix}#") == [True]
            assert await subscribe(victim, f"{TOPICS.prefix}table/t2/cmd/#") == [True]
            async with connect(deployed_broker, credentials, "t1", "table-t1-forger") as table:
                await publish(table, TOPICS.table_event("t1", "bet"), b"own")
                for topic in forbidden_to_t1():
                    await publish(table, topic, FORGED, retain=True)
                await publish(table, sentinel, b"sentinel")
            seen = await monitor.until_live(sentinel, b"sentinel")
            assert seen == [(TOPICS.table_event("t1", "bet"), b"own")]
            assert victim.live() == []
        # Nothing forged was retained either: a new subscriber gets the retained topics, then
        # the next live message (the sentinel again).
        async with (
            connect(deployed_broker, credentials, "monitor", "monitor-retained") as late,
            connect(deployed_broker, credentials, "t1", "table-t1-sentinel") as table,
        ):
            await subscribe(late, f"{TOPICS.prefix}#")
            await publish(table, sentinel, b"sentinel")
            await late.until_live(sentinel, b"sentinel")
            assert all(message.payload != FORGED for message in late.messages)

    asyncio.run(scenario())


def test_a_table_cannot_read_another_tables_commands_or_events(
    deployed_broker: Broker, credentials: Credentials
) -> None:
    own = TOPICS.table_command("t1", "state")

    async def scenario() -> None:
        async with (
            connect(deployed_broker, credentials, "t1", "table-t1-reader") as table,
            connect(deployed_broker, credentials, OUT_USER, f"{CLIENT_ID}-out") as controller,
            connect(deployed_broker, credentials, "t2", "table-t2-reader") as other,
        ):
            # Mosquitto's ACL file grants every subscription and checks each message as it is
            # delivered: a subscription beyond the ACL receives nothing from beyond it.
            await subscribe(
                table,
                f"{TOPICS.prefix}table/t1/cmd/#",
                f"{TOPICS.prefix}table/t2/cmd/#",
                f"{TOPICS.prefix}table/+/event/+",
                f"{TOPICS.prefix}#",
            )
            await publish(other, TOPICS.table_event("t2", "bet"), b"t2's")
            await publish(controller, TOPICS.table_command("t2", "state"), b"t2's")
            await publish(controller, TOPICS.meter("main"), b"meter")
            await publish(controller, own, b"sentinel")
            assert await table.until_live(own, b"sentinel") == []

    asyncio.run(scenario())


# Who may connect.


WRONG = "not-the-password"
"""A password nobody has."""


def test_anonymous_unknown_and_wrong_password_clients_are_refused(
    deployed_broker: Broker, credentials: Credentials
) -> None:
    async def scenario() -> None:
        # CONNACK "not authorized" (MQTT 3.1.1 return code 5).
        assert "authorized" in await refused(deployed_broker, credentials, None, cert_client="t1")
        wrong = await refused(deployed_broker, credentials, "t1", password=WRONG)
        assert "authorized" in wrong
        other = await refused(
            deployed_broker, credentials, "t1", password=credentials.password("t2")
        )
        assert "authorized" in other
        unknown = await refused(
            deployed_broker, credentials, "t9", password=WRONG, cert_client="t1"
        )
        assert "authorized" in unknown

    asyncio.run(scenario())


CONNECT = b"\x10\x0d\x00\x04MQTT\x04\x02\x00\x3c\x00\x01x"
"""An MQTT 3.1.1 CONNECT: clean session, keep-alive 60 s, client id "x", no user name."""


def first_reply(deployed_broker: Broker, context: ssl.SSLContext) -> bytes | OSError:
    """What the broker answers a CONNECT over TLS with: its first bytes, or the error."""
    try:
        with (
            socket.create_connection((HOST, deployed_broker.port), timeout=WAIT_S) as raw,
            context.wrap_socket(raw, server_hostname=HOST) as tls,
        ):
            tls.sendall(CONNECT)
            return tls.recv(4)
    except (ssl.SSLError, ConnectionError) as error:
        return error


def test_a_client_without_a_certificate_is_refused_by_tls(
    deployed_broker: Broker, credentials: Credentials
) -> None:
    # With a certificate, the CONNECT reaches MQTT: CONNACK, refused (5) for want of a user.
    assert first_reply(deployed_broker, credentials.context("t1")) == b"\x20\x02\x00\x05"
    # Without one, TLS ends the connection first: with TLS 1.3 the client's side of the
    # handshake completes before the server has checked, so the refusal (an alert, or the
    # connection closed) shows on the first read.
    refusal = first_reply(deployed_broker, credentials.context(None))
    assert refusal == b"" or isinstance(refusal, (ssl.SSLError, ConnectionError)), refusal


# The controller, with its own drivers.


def test_the_controller_reads_tables_and_writes_meters_hits_commands_and_status(
    deployed_broker: Broker, credentials: Credentials, tmp_path: Path
) -> None:
    settings = controller_settings(deployed_broker, credentials)
    status = TOPICS.controller_status(CONTROLLER)
    meter, hit, command = (
        TOPICS.meter("main"),
        TOPICS.hit("main"),
        TOPICS.table_command("t1", "state"),
    )
    checkpoint = TOPICS.controller_checkpoint(CONTROLLER)

    async def scenario(journal: Journal) -> tuple[MqttSource, MqttSink]:
        intake = JournalIntake(journal)
        source = MqttSource(settings, known_tables=set(TABLES), timeout_s=2.0)
        sink = MqttSink(settings, journal.outbox, timeout_s=2.0)
        updates: asyncio.Queue[Any] = asyncio.Queue()
        async with (
            connect(deployed_broker, credentials, "monitor", "monitor-controller") as monitor,
            connect(deployed_broker, credentials, "t1", "table-t1-controller") as table,
        ):
            await subscribe(monitor, f"{TOPICS.prefix}#")
            await subscribe(table, f"{TOPICS.prefix}table/t1/cmd/#")
            async with running(source.run(intake)), running(sink.run(feed(updates))):
                # Both connections say online: their last wills and statuses are allowed, and
                # the source's subscriptions were granted (it checks each one).
                await monitor.until(
                    lambda w: w.live().count((status, b"online")) == 2, "both connections online"
                )
                await publish(
                    table,
                    TOPICS.table_event("t1", "heartbeat"),
                    b'{"v":1,"device":"shoe","seq":1}',
                )
                await within(intake.wait_until(lambda: bool(intake.heartbeats)), "the heartbeat")
                for update in (
                    MeterUpdate(AT, 1, "main", 1_000_000, 0, 0, 1_000_000),
                    HitAnnouncement(
                        AT, 2, "p-1", "main", "t1", 3, "royal-flush", 1_000, True, True
                    ),
                    TableUpdate(AT, 3, "t1", online=False, reason="test"),
                    CheckpointUpdate(
                        AT,
                        4,
                        CheckpointRecorded(
                            "c-1", AT, CONTROLLER, 3, "ab" * 32, "cd" * 32, {}, "k", "s"
                        ),
                    ),
                ):
                    updates.put_nowait(update)
                await monitor.until(
                    lambda w: {meter, hit, command, checkpoint} <= dict(w.live()).keys(),
                    "the meter, the hit, the command and the checkpoint",
                )
                await table.until(lambda w: command in dict(w.live()), "the command at t1")
                assert intake.heartbeats == [("t1", "shoe")]
                assert source.connected
                assert sink.connected
        return source, sink

    with Journal(tmp_path / "journal.db") as journal:
        source, sink = asyncio.run(scenario(journal))
    assert source.reconnects == 0
    assert sink.reconnects == 0
