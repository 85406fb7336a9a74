"""Simulated tables played against the in-process daemon, and what their links confirmed.

The end-to-end tests (tests/e2e/) run the real service (:func:`controller.service.wiring.serve`)
on a configuration written for the test (tests/support/runtime/daemon.py), and
:class:`drivers.simulator.SimulatedTable` tables play against it through
:mod:`drivers.simulator_links`: MQTT clients on a real mosquitto (docs/mqtt.md) and devices on
the master end of a pty whose slave the daemon opens through pyserial (docs/architecture.md,
"The reference serial protocol"). :class:`Recorder` keeps what each link confirmed, so that
the journal can be checked against it: every event journaled exactly once.

Every wait is bounded (:func:`support.runtime.floor.within`); waits on the journal are woken by the
sequencer's commit hook, never by polling.
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

from controller.events import BetSensed, DeviceInput
from drivers.mqtt.outgoing import MeterPayload, decode_meter
from drivers.mqtt.topics import Topics
from drivers.simulator import SimulatedTable, TablePlan
from drivers.simulator_links import HEARTBEAT_SEQ_BASE, SerialTableLink, serial_heartbeat
from support.runtime.daemon import SITE, Daemon, probe
from support.runtime.floor import DEVICE_KINDS, POOL, WAGER_CENTS, within

if TYPE_CHECKING:
    from collections.abc import Iterable

    from drivers.simulator import DeviceLink
    from support.drivers.mosquitto import Broker


TOPICS = Topics(SITE)


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


async def line_up(link: SerialTableLink) -> None:
    """Wait until the daemon has the port open: a heartbeat of a probe device is answered."""
    await within(link.exchange(serial_heartbeat("probe", HEARTBEAT_SEQ_BASE)), "the port open")
