"""The load of bench/throughput.py: paced simulated tables on MQTT, and how a step is measured.

:class:`Fleet` is one side's simulated tables, each on its own MQTT client, playing whole
rounds; a :class:`Pacer` hands out their publish slots evenly at the step's rate (open loop).
:func:`delivery` and :class:`Cpu` turn a step into its figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import (
    HOST,
    SEATS,
    ProcessSample,
    ms,
    percentile,
)

from controller.events import BetsLocked
from drivers.mqtt.settings import BrokerSettings
from drivers.simulator import SimulatedTable, TablePlan
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from controller.events import DeviceInput

WAGER_CENTS = 100
"""progressive-1's one wager, $1."""
DRAIN_TIMEOUT_S = 30.0
"""How long a step may take to deliver its events after its last publish."""
KEPT_UP = 0.97
"""A side keeps up with a step if it delivers at least this share of the offered rate."""
POLL_S = 0.005
"""How often the journal (or the relay's counter) is read while a step drains."""


# The load: paced simulated tables.


class Pacer:
    """Hands out publish slots: ``rate`` a second, evenly, for one step (none in between)."""

    def __init__(self) -> None:
        self.rate = 1.0
        self.granted = 0
        self.started = 0.0
        self._limit = 0
        self._next_at = 0.0
        self._open = asyncio.Event()
        self.finished = asyncio.Event()

    def start(self, rate: float, duration_s: float) -> None:
        """Open a step."""
        self.rate, self.granted = rate, 0
        self.started = self._next_at = time.perf_counter()
        self._limit = round(rate * duration_s)
        self.finished.clear()
        self._open.set()

    def stop(self) -> None:
        """Close the step: grant no more slots (those granted are still published)."""
        self._open.clear()
        self.finished.set()

    async def slot(self) -> None:
        """Wait for this table's next slot."""
        await self._open.wait()
        at = self._next_at
        self._next_at += 1 / self.rate
        self.granted += 1
        if self.granted >= self._limit:
            self._open.clear()
            self.finished.set()
        delay = at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)


@dataclass(slots=True)
class PacedLink:
    """A table's MQTT link that waits for a slot before each event and notes when it went."""

    link: MqttTableLink
    pacer: Pacer
    sent: dict[str, float]
    every_event: bool
    """Note every event (the relay) or only locks (the controller: meters follow them)."""

    async def send(self, event: DeviceInput) -> None:
        """Publish one event in its slot; return once the broker acknowledged it."""
        await self.pacer.slot()
        if self.every_event or isinstance(event, BetsLocked):
            self.sent[event.event_id] = time.perf_counter()
        await self.link.send(event)

    async def heartbeat(self, table_id: str, device: str) -> None:
        """Not used: the daemon's tables time out after an hour."""


@dataclass
class Fleet:
    """One site's simulated tables on MQTT, playing rounds whenever the pacer lets them."""

    site: str
    table_ids: list[str]
    port: int
    args: argparse.Namespace
    every_event: bool
    pacer: Pacer = field(default_factory=Pacer)
    total: int = 0
    """Events granted a slot over the whole run (each is published exactly once)."""
    sent: dict[str, float] = field(default_factory=dict)
    links: list[MqttTableLink] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    async def start(self) -> None:
        """Connect every table, then let them play (paused until a step opens)."""
        settings = BrokerSettings(host=HOST, port=self.port, site=self.site, keepalive_s=30)
        session = os.urandom(4).hex()
        rng = random.Random(self.args.seed)
        for table_id in self.table_ids:
            link = await self.stack.enter_async_context(
                MqttTableLink(settings, table_id, timeout_s=30.0)
            )
            self.links.append(link)
        async with asyncio.timeout(30):
            await asyncio.gather(*(link.wait_connected() for link in self.links))
        for link in self.links:
            plan = TablePlan(
                link.table_id,
                seats=SEATS,
                bonus=True,
                progressive_wager_cents=WAGER_CENTS,
                occupancy=self.args.occupancy,
                bet_probability=self.args.bet_probability,
            )
            paced = PacedLink(link, self.pacer, self.sent, self.every_event)
            table = SimulatedTable(plan, paced, random.Random(rng.random()), session)
            self.tasks.append(asyncio.create_task(_play(table)))

    async def run(self, rate: float, duration_s: float) -> int:
        """Let the tables publish at ``rate`` for ``duration_s``; return how many events."""
        self.pacer.start(rate, duration_s)
        # Tables publish one event at a time, each once the broker acknowledged the one
        # before: a broker that falls far enough behind holds them back. The step is then
        # cut short (and counted as not kept up, since it did not deliver on time).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(duration_s + DRAIN_TIMEOUT_S):
                await self.pacer.finished.wait()
        self.pacer.stop()
        self.total += self.pacer.granted
        return self.pacer.granted

    def check(self) -> None:
        """Raise what made a table stop playing, if one did."""
        for task in self.tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise RuntimeError(f"a table of {self.site} stopped") from task.exception()

    async def stop(self) -> None:
        """Stop playing and disconnect."""
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.stack.aclose()


async def _play(table: SimulatedTable) -> None:
    while True:
        await table.play_round()


# Waiting and measuring.


async def until(
    predicate: Callable[[], bool], fleet: Fleet | None = None, timeout: float = DRAIN_TIMEOUT_S
) -> float:
    """Poll ``predicate`` every POLL_S; return the time it first held (TimeoutError if not)."""
    deadline = time.perf_counter() + timeout
    while not predicate():
        if fleet is not None:
            fleet.check()
        if time.perf_counter() > deadline:
            raise TimeoutError
        await asyncio.sleep(POLL_S)
    return time.perf_counter()


@dataclass
class Cpu:
    """CPU seconds (and bytes written to storage) of the processes of one side over a step."""

    pids: dict[str, int]
    before: dict[str, ProcessSample] = field(default_factory=dict)

    def start(self) -> None:
        """Sample now."""
        self.before = {name: ProcessSample.of(pid) for name, pid in self.pids.items()}

    def per_event(self, events: int) -> dict[str, Any]:
        """CPU ms per event of each process, and bytes each wrote per event, since start()."""
        now = {name: ProcessSample.of(pid) for name, pid in self.pids.items()}
        events = max(events, 1)
        return {
            "cpu_ms_per_event": {
                name: round((now[name].cpu_s - self.before[name].cpu_s) * 1000 / events, 4)
                for name in now
            },
            "bytes_written_per_event": {
                name: round((now[name].written_bytes - self.before[name].written_bytes) / events)
                for name in now
            },
        }


def delivery(
    events: int, duration_s: float, rate: float, delivered: int, elapsed: float
) -> dict[str, Any]:
    """A step's throughput figures (``delivered`` of ``events`` within ``elapsed`` seconds)."""
    throughput = delivered / elapsed
    return {
        "events": events,
        "delivered": delivered,
        "offered_events_per_s": round(events / duration_s, 1),
        "events_per_s": round(throughput, 1),
        "kept_up": delivered == events and throughput >= KEPT_UP * rate,
    }


def ms_percentiles(latencies: list[float], suffix: str = "") -> dict[str, float | None]:
    return {
        f"p50_latency{suffix}_ms": ms(percentile(latencies, 0.50)),
        f"p99_latency{suffix}_ms": ms(percentile(latencies, 0.99)),
    }


def broker_dir(args: argparse.Namespace, directory: Path) -> Path:
    """Where a side's broker keeps its persistence (and configuration and log)."""
    return Path(args.broker_dir) / directory.name if args.broker_dir else directory / "mosquitto"


def overrides(args: argparse.Namespace) -> dict[str, str]:
    return dict(item.split("=", 1) for item in args.broker_set)
