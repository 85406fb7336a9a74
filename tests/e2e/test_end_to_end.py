"""The daemon end to end against real parts: mosquitto, pty serial lines, SQLite and HTTP.

The simulator's tables speak the real protocols (MQTT or serial), as they do for the demo and
the benchmarks. Here the real service
(:func:`controller.service.wiring.serve`, everything under one TaskGroup) runs in-process on a
configuration written for the test, and :class:`drivers.simulator.SimulatedTable` tables play
against it through :mod:`drivers.simulator_links`: MQTT clients on a real mosquitto (docs/mqtt.md)
and devices on the master end of a pty whose slave the daemon opens through pyserial
(docs/architecture.md, "The reference serial protocol"). The checks are the promises of
docs/architecture.md ("The standards it meets", "One event's way through"): every event journaled
exactly once, never a cent lost or counted twice through a broker restart, meters and hits on the
signs' topics and on the display equal to the journal, bad input rejected while play goes on, and
``jackpotd verify`` passing after.

Every wait is bounded (:func:`within`); waits on the journal are woken by the sequencer's
commit hook, never by polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from support.daemon import (
    SITE,
    Daemon,
    broker_settings,
    daemon,
    local_journal,
    metric,
    probe,
    tables_announced,
    write_config,
)
from support.floor import (
    CONTRIBUTION_CENTS,
    DEVICE_KINDS,
    POOL,
    SEED_CENTS,
    WAGER_CENTS,
    within,
)

from controller.events import BetSensed, CardDealt, DeviceInput
from controller.journal.verify import verify
from drivers.mqtt.outgoing import MeterPayload, decode_hit, decode_meter
from drivers.mqtt.payloads import Heartbeat as MqttHeartbeat
from drivers.mqtt.payloads import decode_table_event
from drivers.mqtt.topics import Topics
from drivers.serial.framing import encode_frame
from drivers.serial.protocol import Heartbeat as SerialHeartbeat
from drivers.serial.protocol import decode_payload
from drivers.simulator import SimulatedTable, TablePlan
from drivers.simulator_links import (
    HEARTBEAT_SEQ_BASE,
    MqttTableLink,
    PtyPair,
    SerialTableLink,
    mqtt_event,
    mqtt_heartbeat,
    serial_heartbeat,
    serial_payload,
)

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from support.mosquitto import Broker

    from drivers.simulator import DeviceLink


TOPICS = Topics(SITE)


# Helpers of these tests (the daemon and its configuration: tests/support/daemon.py).


@dataclass
class Recorder:
    """A DeviceLink wrapper that keeps every event whose delivery the link confirmed.

    Closing :attr:`gate` holds the table's next event (its devices pause mid-round);
    :meth:`paused` returns once nothing is in flight.
    """

    link: DeviceLink
    sent: list[DeviceInput] = field(default_factory=list)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    in_flight: int = 0
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.gate.set()
        self.idle.set()

    async def send(self, event: DeviceInput) -> None:
        """Deliver through the link (once the gate is open); keep it once confirmed."""
        await self.gate.wait()
        self.in_flight += 1
        self.idle.clear()
        try:
            await self.link.send(event)
        finally:
            self.in_flight -= 1
            if not self.in_flight:
                self.idle.set()
        self.sent.append(event)

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Pass the heartbeat on."""
        await self.link.heartbeat(table_id, device, last)

    async def paused(self) -> None:
        """Hold the next event and wait until the one in flight (if any) is delivered."""
        self.gate.clear()
        await self.idle.wait()

    def ids(self) -> list[str]:
        """The ids of the confirmed events, in order."""
        return [event.event_id for event in self.sent]

    def progressive_wagers(self) -> int:
        """Progressive chips reported present; each round locks every one of them."""
        return sum(
            1
            for event in self.sent
            if isinstance(event, BetSensed) and event.spot == "progressive" and event.present
        )


def sent_ids(tables: Iterable[Recorder]) -> list[str]:
    return [event_id for table in tables for event_id in table.ids()]


async def all_journaled(running: Daemon, tables: Iterable[Recorder]) -> None:
    """Wait until every event the broker acknowledged to the tables is journaled.

    MQTT acknowledges hop by hop (docs/mqtt.md): a table's PUBACK comes from the broker, and
    the controller may still be working through what the broker holds for it.
    """
    sent = set(sent_ids(tables))
    await running.until(lambda: sent <= running.ids(), "every acknowledged event journaled")


def simulated(table_id: str, link: DeviceLink, seed: int, hit_every: int = 0) -> SimulatedTable:
    """A table where every seat plays both side bets (so a rigged hand is always a hit)."""
    plan = TablePlan(
        table_id, occupancy=1.0, bet_probability=1.0, progressive_wager_cents=WAGER_CENTS
    )
    rng = random.Random(seed)  # noqa: S311 - simulated players
    return SimulatedTable(plan, link, rng, uuid.uuid4().hex[:8], hit_every)


async def play(
    tables: Iterable[SimulatedTable],
    rounds: int,
    heartbeat_s: float = 0.5,
    *,
    until: asyncio.Event | None = None,
) -> None:
    """Each table plays ``rounds`` rounds, its console heartbeating meanwhile.

    Given ``until``, each plays at least ``rounds`` rounds and goes on until it is set (the
    round in play finishes): for a test that must break something while play is going on.
    """

    async def one(table: SimulatedTable) -> None:
        beats = asyncio.create_task(table.heartbeats(heartbeat_s))
        try:
            played = 0
            while played < rounds or (until is not None and not until.is_set()):
                await table.play_round()
                played += 1
        finally:
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beats

    async with asyncio.TaskGroup() as group:
        for table in tables:
            group.create_task(one(table))


def device_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if row["kind"] in DEVICE_KINDS]


def assert_journaled_once(rows: list[dict[str, Any]], sent: Iterable[str]) -> None:
    """Every sent id is a journal row exactly once, applied; no device row that was not sent."""
    sent_ids = list(sent)
    assert len(sent_ids) == len(set(sent_ids)), "the simulator reused an event id"
    devices = device_rows(rows)
    counts = Counter(row["event_id"] for row in devices)
    assert {i for i, n in counts.items() if n > 1} == set()
    assert set(counts) == set(sent_ids)
    refused = [(row["event_id"], row["reason"]) for row in devices if row["outcome"] != "applied"]
    assert refused == []


def faults(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(row["event"]) for row in rows if row["kind"] == "fault"]


async def retained_meter(broker: Broker) -> tuple[bool, MeterPayload]:
    """What a sign connecting now reads on ``meter/<pool>``: (retained flag, payload)."""
    async with probe(broker, TOPICS.meter(POOL)) as sign:
        await sign.until(lambda p: bool(p.messages), "the retained meter")
        first = sign.messages[0]
        return first.retain, decode_meter(first.payload)


# The encoders: what the links put on the wire is what the controller's decoders read.


@pytest.fixture
def sample_events() -> list[DeviceInput]:
    """Three rounds' worth of a simulated table's events, jackpot hands included."""

    @dataclass
    class Capture:
        events: list[DeviceInput] = field(default_factory=list)

        async def send(self, event: DeviceInput) -> None:
            self.events.append(event)

        async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
            pass

    capture = Capture()
    table = simulated("t1", capture, seed=7, hit_every=2)

    async def rounds() -> None:
        for _ in range(3):
            await table.play_round()

    asyncio.run(rounds())
    return capture.events


def test_simulator_mqtt_payloads_decode_to_the_events_they_encode(
    sample_events: list[DeviceInput],
) -> None:
    """docs/mqtt.md, "From the tables": decode(encode(e)) == e."""
    kinds: Counter[str] = Counter()
    for event in sample_events:
        kind, payload = mqtt_event(event)
        kinds[kind] += 1
        assert decode_table_event(event.table_id, kind, payload, at=event.at) == event
        assert json.loads(payload)["v"] == 1
    assert set(kinds) == {"bet", "lock", "card", "done"}
    beat = decode_table_event("t1", "heartbeat", mqtt_heartbeat("console-1", HEARTBEAT_SEQ_BASE))
    assert beat == MqttHeartbeat("t1", "console-1", HEARTBEAT_SEQ_BASE)
    # Position 100 does not exist (0-99): refused on the way out, as it would be on the way in.
    with pytest.raises(ValueError, match="cannot encode"):
        mqtt_event(
            CardDealt("t1/shoe/1", "2025-01-01T00:00:00.000Z", "t1", "shoe", 1, "r", 100, "As")
        )


def test_simulator_serial_payloads_decode_to_the_events_they_encode(
    sample_events: list[DeviceInput],
) -> None:
    """docs/architecture.md, "The reference serial protocol": decode(encode(e)) == e."""
    for event in sample_events:
        payload = serial_payload(event)
        assert decode_payload(payload, event.table_id, at=event.at) == event
        assert encode_frame(payload).endswith(b"\r\n")
    beat = decode_payload(serial_heartbeat("console-1", HEARTBEAT_SEQ_BASE + 1), "t1")
    assert beat == SerialHeartbeat("t1", "console-1", HEARTBEAT_SEQ_BASE + 1)


# MQTT end to end.


async def test_mqtt_tables_end_to_end_journal_once_meters_hits_and_display_agree(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """Two tables over a real mosquitto: each event journaled once, signs and display = journal.

    docs/signs.md (signs show the meters live and JACKPOT on a hit), docs/architecture.md (on a
    hit the signs show the winning table and the amount; nothing reaches a sink before it is
    journaled), docs/mqtt.md (QoS 1, persistent sessions, last wills).
    """
    rounds = 12
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    settings = broker_settings(mosquitto)
    hit_filter = f"{TOPICS.prefix}meter/+/hit"
    async with (
        daemon(config) as running,
        probe(mosquitto, hit_filter) as signs,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [
            simulated("t1", tables[0], seed=11, hit_every=4),
            simulated("t2", tables[1], seed=12, hit_every=4),
        ]
        await within(play(simulation, rounds), f"{rounds} rounds on two tables")
        await all_journaled(running, tables)

        rows = running.rows()
        assert_journaled_once(rows, tables[0].ids() + tables[1].ids())
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)

        # Every meter hit (and any payout pending verification) reached the signs, with its
        # amount; fixed progressive pays ($75 for four of a kind) are not announced as jackpots.
        payouts = list(
            local_journal(running.runtime).db.query(
                "SELECT payout_id, table_id, win_cents, from_meter_cents FROM payouts "
                "WHERE from_meter_cents > 0 OR status = 'pending' ORDER BY seq"
            )
        )
        jackpots = [p for p in payouts if p["from_meter_cents"] > 0]
        assert len(jackpots) >= 2, "hit_every deals a jackpot hand every 4th round"
        await signs.until(lambda p: len(p.payloads(hit_filter)) >= len(payouts), "every hit")
        shown = {
            hit.payout: (hit.table, hit.amount_cents, hit.pool)
            for hit in map(decode_hit, signs.payloads(hit_filter))
        }
        assert shown == {p["payout_id"]: (p["table_id"], p["win_cents"], POOL) for p in payouts}

        # The retained meter a sign reads equals the journal's (the sink coalesces: wait for
        # the latest), and so does the display's /api/state.
        expected = (pool.meter_cents, pool.reserve_cents, pool.overflow_cents)
        async with probe(mosquitto, TOPICS.meter(POOL)) as meter_sign:
            await meter_sign.until(
                lambda p: any(
                    (m.meter_cents, m.reserve_cents, m.overflow_cents) == expected
                    for m in map(decode_meter, p.payloads(TOPICS.meter(POOL)))
                ),
                "the sign to show the journal's meter",
            )
        retained, meter = await retained_meter(mosquitto)
        assert retained
        assert (meter.meter_cents, meter.reserve_cents, meter.overflow_cents) == expected
        assert (meter.pool, meter.seed_cents) == (POOL, SEED_CENTS)
        status, body = await running.get("api/state")
        assert status == 200
        state = json.loads(body)
        (shown_pool,) = state["pools"]
        assert (shown_pool["meter_cents"], shown_pool["hits"]) == (pool.meter_cents, len(jackpots))
        assert {(h["table_id"], h["win_cents"]) for h in state["hits"]} == {
            (p["table_id"], p["win_cents"]) for p in jackpots
        }
        assert [t["online"] for t in state["tables"]] == [True, True]
        assert link1.republished == link2.republished == 0
        await running.stop()

    assert verify(tmp_path / "journal.db").ok


# Broker restarts in the middle of play.


async def test_broker_restart_mid_play_loses_and_double_counts_no_wager(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """Two broker restarts (SIGTERM) while two tables play: no wager lost, none counted twice.

    docs/faults.md, "Broker restarts and crashes": never lose or double-count a cent through
    broker restarts. mosquitto saves its
    sessions when it stops; the tables publish again what the broker had not acknowledged; the
    controller's session keeps what was queued for it; the journal applies each id once.
    """
    rounds = 14
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    settings = broker_settings(mosquitto)
    async with (
        daemon(config) as running,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [simulated("t1", tables[0], seed=21), simulated("t2", tables[1], seed=22)]
        restarted = asyncio.Event()
        game = asyncio.create_task(play(simulation, rounds, until=restarted))
        for restart in range(2):
            await running.until_more(150, "play")
            await asyncio.to_thread(mosquitto.stop)
            await asyncio.sleep(0.3)  # the tables keep trying, with backoff
            await asyncio.to_thread(mosquitto.start)
            assert not game.done(), f"play ended before restart {restart}"
        restarted.set()
        await within(game, "play to finish after the restarts")
        await all_journaled(running, tables)

        assert_journaled_once(running.rows(), sent_ids(tables))
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
        assert pool.hits_count == 0
        assert pool.meter_cents == SEED_CENTS + CONTRIBUTION_CENTS * pool.wagers_count
        assert min(link1.connections, link2.connections) >= 2
        await running.stop()
    assert verify(tmp_path / "journal.db").ok


@pytest.mark.fault
async def test_broker_crash_sigkill_with_autosave_loses_and_double_counts_nothing(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """The broker SIGKILLed twice mid-round (persistence autosaved on every change), restarted.

    The broker comes back with whatever it last saved: stale in-flight state, so it delivers
    the controller many messages again (each a duplicate the journal applies once). What no
    broker can give back is a message it acknowledged to a table and had not saved
    (docs/mqtt.md: MQTT acknowledges hop by hop); so the tables pause mid-round and the kill
    comes once the controller has journaled everything acknowledged, as a crash between two
    bursts would. Everything published after the crash (while the broker is down, and once
    it is back) must then be journaled exactly once.
    """
    await asyncio.to_thread(mosquitto.stop)
    with mosquitto.config.open("a") as conf:  # docs/mqtt.md: "Recommended: autosave_on_changes"
        conf.write("autosave_on_changes true\nautosave_interval 1\n")
    await asyncio.to_thread(mosquitto.start)
    rounds = 12
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    settings = broker_settings(mosquitto)
    async with (
        daemon(config) as running,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [simulated("t1", tables[0], seed=61), simulated("t2", tables[1], seed=62)]
        game = asyncio.create_task(play(simulation, rounds))
        for _crash in range(2):
            await running.until_more(150, "play")
            await within(asyncio.gather(*(t.paused() for t in tables)), "the tables to pause")
            await all_journaled(running, tables)
            await asyncio.to_thread(mosquitto.kill)
            for table in tables:
                table.gate.set()  # play on: the links hold the events until the broker is back
            await asyncio.sleep(0.3)
            await asyncio.to_thread(mosquitto.start)
        await within(game, "play to finish after the crashes")
        await all_journaled(running, tables)

        assert_journaled_once(running.rows(), sent_ids(tables))
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
        assert pool.meter_cents == SEED_CENTS + CONTRIBUTION_CENTS * pool.wagers_count
        await running.stop()
    assert verify(tmp_path / "journal.db").ok


async def test_outage_past_heartbeat_timeout_closes_tables_then_reopens_them(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """A broker outage longer than the tables' timeout: CLOSED (journaled, told), then reopened.

    docs/architecture.md, "The standards it meets": losing communication with a table makes its
    progressive unplayable and its sign shows CLOSED until it is back. The tables hear it on
    ``table/<tid>/cmd/state`` once the broker is back (the sink's outbox, the table's persistent
    session), then play on.
    """
    rounds = 8
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"], heartbeat_timeout_s=1)
    settings = broker_settings(mosquitto)
    async with (
        daemon(config) as running,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [simulated("t1", tables[0], seed=31), simulated("t2", tables[1], seed=32)]
        game = asyncio.create_task(play(simulation, rounds, heartbeat_s=0.2))
        await running.until_more(200, "play")
        await asyncio.to_thread(mosquitto.stop)
        # Closed by whichever row comes first: the monitor's, once the timeout passes unheard,
        # or the tables' last wills, which a broker shutting down may still deliver.
        for table_id in ("t1", "t2"):

            def table_closed(table: str = table_id) -> bool:
                return not running.runtime.journal.state.table_states[table].online

            await running.until(table_closed, f"{table_id} closed")
        _status, body = await running.get("api/state")
        assert [t["online"] for t in json.loads(body)["tables"]] == [False, False]
        await asyncio.to_thread(mosquitto.start)
        await within(game, "play to finish after the outage")
        await all_journaled(running, tables)
        for link in (link1, link2):
            # The sign's "open again" comes through the sink after the reopening commit.
            await within(link.wait_state(is_open=True), f"{link.table_id} told open again")

        rows = running.rows()
        assert_journaled_once(rows, sent_ids(tables))
        for table_id, link in (("t1", link1), ("t2", link2)):
            changes = [
                json.loads(row["event"])
                for row in rows
                if row["kind"] == "table-status" and f'"table_id":"{table_id}"' in row["event"]
            ]
            closed = [c for c in changes if not c["online"]]
            assert closed, f"{table_id} was not closed during the outage"
            assert any(c["online"] for c in changes[changes.index(closed[0]) :])
            # Its sign was told CLOSED, then open again.
            assert [s.open for s in link.states][-1] is True
            assert False in [s.open for s in link.states]
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
        _status, body = await running.get("api/state")
        assert [t["online"] for t in json.loads(body)["tables"]] == [True, True]
        await running.stop()
    assert verify(tmp_path / "journal.db").ok


# Serial end to end.


async def line_up(link: SerialTableLink) -> None:
    """Wait until the daemon has the port open: a heartbeat of a probe device is answered."""
    await within(link.exchange(serial_heartbeat("probe", HEARTBEAT_SEQ_BASE)), "the port open")


async def test_serial_table_over_a_pty_through_pyserial_end_to_end(
    tmp_path: Path,
) -> None:
    """A table's devices on a pty line, the daemon on its slave through pyserial: N rounds.

    docs/architecture.md, "The reference serial protocol": frames with CRC, ACK after the journal
    commit, resend until ACKed. Serial acknowledges end to end, so once a send returns its
    event is journaled.
    """
    rounds = 8
    with PtyPair() as pty:
        config = write_config(tmp_path, serial={"t3": pty.path})
        reader, writer = await pty.open()
        async with daemon(config) as running, SerialTableLink("t3", reader, writer) as link:
            await line_up(link)
            table = Recorder(link)
            await within(play([simulated("t3", table, seed=41)], rounds), f"{rounds} rounds")

            rows = running.rows()
            assert_journaled_once(rows, table.ids())
            assert link.acknowledged == table.ids()
            pool = running.runtime.journal.state.pools[POOL]
            assert pool.wagers_count == table.progressive_wagers() > 0
            assert pool.hits_count == 0
            assert pool.meter_cents == SEED_CENTS + CONTRIBUTION_CENTS * pool.wagers_count
            closed = [
                effect.get("how", "held")
                for row in rows
                for effect in json.loads(row["effects"])
                if effect["effect"] in {"round-closed", "round-held"}
            ]
            assert closed == ["settled"] * rounds
            assert faults(rows) == []
            await running.stop()
    assert verify(tmp_path / "journal.db").ok


# Malformed input end to end.


async def test_malformed_mqtt_payload_and_bad_serial_frames_are_rejected_play_goes_on(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """Garbage on MQTT and a bad-CRC (and a bad-payload) serial frame: faults, counters, no harm.

    docs/architecture.md: unreasonable input is rejected ("The standards it meets"); on a bad CRC
    the host resyncs and the device resends; docs/mqtt.md "Rejected input": counted, journaled as a
    fault, acknowledged.
    """
    with PtyPair() as pty:
        config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"], serial={"t3": pty.path})
        reader, writer = await pty.open()
        async with (
            daemon(config) as running,
            MqttTableLink(broker_settings(mosquitto), "t1") as mqtt_link,
            SerialTableLink("t3", reader, writer) as serial_link,
        ):
            await tables_announced(running, ["t1"])
            await line_up(serial_link)
            tables = [Recorder(mqtt_link), Recorder(serial_link)]
            simulation = [simulated("t1", tables[0], seed=51), simulated("t3", tables[1], seed=52)]
            await within(play(simulation, 2), "rounds before the bad input")

            await mqtt_link.publish_raw("bet", b'{"v":1,"device":')  # cut short: not JSON
            await mqtt_link.publish_raw("lock", b'{"v":2,"device":"console","seq":1}')
            # A poison message: msgspec raises RecursionError, not a DecodeError, on it.
            await mqtt_link.publish_raw("bet", b"[" * 2000 + b"]" * 2000)
            twice = b'{"v":1,"device":"x","seq":1,"seat":1,"spot":"bonus","present":true,'
            await mqtt_link.publish_raw("bet", twice + b'"amount_cents":500,"amount_cents":9}')
            good = encode_frame("LOCK,console-x,1,r-x")
            crc = good[-6:-2]
            damaged = good[:-6] + (b"0000" if crc != b"0000" else b"FFFF") + b"\r\n"
            await serial_link.write_raw(damaged)
            nak = await within(serial_link.exchange("BET,sensor-x,1,0,progressive,1"), "a NAK")
            assert nak == "NAK,sensor-x,1,bad-seat"
            await running.until(lambda: len(running.ids("fault-")) >= 6, "six faults journaled")

            await within(play(simulation, 2), "rounds after the bad input")
            await all_journaled(running, tables)
            rows = running.rows()
            assert_journaled_once(rows, sent_ids(tables))
            pool = running.runtime.journal.state.pools[POOL]
            assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
            rejected = Counter((fault["source"], fault["reason"]) for fault in faults(rows))
            event_topic = f"mqtt:{TOPICS.prefix}table/t1/event/"
            assert rejected == {
                (event_topic + "bet", "bad-json"): 1,
                (event_topic + "lock", "bad-version"): 1,
                (event_topic + "bet", "undecodable"): 1,
                (event_topic + "bet", "duplicate-key"): 1,
                ("serial:t3-line", "bad-crc"): 1,
                ("serial:t3-line", "bad-seat"): 1,
            }
            status, metrics = await running.get("metrics")
            assert status == 200
            health = await running.get("healthz")
            assert health[0] == 200, health  # every MQTT table still plays: no crash loop
            for reason in ("bad-json", "bad-version", "undecodable", "duplicate-key", "bad-crc"):
                assert metric(metrics, f'jackpotd_rejected_inputs_total{{reason="{reason}"}}') == 1
            frame_errors = (
                'jackpotd_serial_frame_errors_total{port="serial:t3-line",reason="bad-crc"}'
            )
            assert metric(metrics, frame_errors) == 1
            await running.stop()
    assert verify(tmp_path / "journal.db").ok


# Liveness: a table heard again.


async def test_a_table_heard_again_after_silence_has_its_first_bet_accepted(
    tmp_path: Path,
) -> None:
    """A table closed for silence reopens when it is heard again, and that bet counts.

    docs/architecture.md, "The standards it meets": a table's wagers are refused while it is
    offline, "until it is back"; the architecture (docs/architecture.md, "Failing closed"): it
    "reopens when it is heard again". The first thing heard from the table here is a progressive bet
    on its sensor (serial, so no status topic reopens it first): the table is back, the chip is on
    the spot, and the wager must be locked and contribute like every other.
    """
    with PtyPair() as pty:
        config = write_config(tmp_path, serial={"t3": pty.path}, heartbeat_timeout_s=1)
        reader, writer = await pty.open()
        async with daemon(config) as running, SerialTableLink("t3", reader, writer) as link:
            await line_up(link)
            table = Recorder(link)
            simulation = [simulated("t3", table, seed=71)]
            await within(play(simulation, 1, heartbeat_s=0.2), "a round")
            # Silence (no heartbeat, no event) past the timeout: the table is closed.
            await running.until_id("t3/liveness/", "t3 closed")
            await within(play(simulation, 1, heartbeat_s=0.2), "a round after the silence")

            rows = running.rows()
            refused = [
                (row["event_id"], row["reason"])
                for row in device_rows(rows)
                if row["outcome"] != "applied"
            ]
            assert refused == []
            pool = running.runtime.journal.state.pools[POOL]
            assert pool.wagers_count == table.progressive_wagers()
            await running.stop()
