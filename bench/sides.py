"""The sides bench/throughput.py compares, each on its own broker (see its docstring).

* :class:`Relay`: the baseline, a bare subscriber in its own process.
* :class:`Controller`: the daemon, with a display subscribed to the meters (its SQLite
  journal; bench/postgres_side.py puts it on a PostgreSQL database).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import re
import time
import urllib.request
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiomqtt
import msgspec
from common import (
    HOST,
    Mosquitto,
    config_text,
    free_port,
    ms,
)
from load import Cpu, Fleet, broker_dir, delivery, ms_percentiles, overrides, until
from service import Daemon, Journaled

from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    import argparse
    from multiprocessing.connection import Connection
    from multiprocessing.sharedctypes import Synchronized
    from pathlib import Path


CONTROLLER_SITE = "bench"
RELAY_SITE = "relay"
CONTROLLER_ID = CONTROLLER_SITE
"""The controller's id is its site's name (bench/common.py: config_text)."""


# The relay: a bare subscriber, in its own process.


def relay_subscriber(
    port: int, topic_filter: str, counter: Synchronized[int], conn: Connection
) -> None:
    """Receive the relay site's events (QoS 1, persistent session); report arrivals on request."""
    asyncio.run(_relay(port, topic_filter, counter, conn))


async def _relay(
    port: int, topic_filter: str, counter: Synchronized[int], conn: Connection
) -> None:
    arrivals: list[tuple[str, bytes, float]] = []
    stop = asyncio.Event()
    ready = asyncio.Event()

    def command() -> None:
        request = conn.recv()
        if request == "report":
            conn.send(list(arrivals))
            arrivals.clear()
        else:
            stop.set()

    async def receive() -> None:
        # Reconnects if an overloaded broker drops it (the session keeps what it missed).
        while True:
            client = aiomqtt.Client(HOST, port, identifier="relay-in", clean_session=False)
            with contextlib.suppress(aiomqtt.MqttError):
                async with client:
                    await client.subscribe(topic_filter, qos=1)
                    ready.set()
                    async for message in client.messages:
                        now = time.perf_counter()
                        arrivals.append((message.topic.value, message.payload, now))
                        counter.value += 1
            await asyncio.sleep(0.5)

    asyncio.get_running_loop().add_reader(conn.fileno(), command)
    receiver = asyncio.create_task(receive())
    await ready.wait()
    conn.send("ready")
    await stop.wait()
    receiver.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await receiver


class _Identity(msgspec.Struct):
    device: str
    seq: int


def _event_id(topic: str, payload: bytes) -> str:
    table_id = topic.split("/")[-3]
    identity = msgspec.json.decode(payload, type=_Identity)
    return f"{table_id}/{identity.device}/{identity.seq}"


@dataclass
class Relay:
    """The baseline: a broker, the relay site's tables and the bare subscriber."""

    args: argparse.Namespace
    directory: Path
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    async def start(self) -> None:
        """Start the broker, the subscriber and the tables."""
        self.broker = Mosquitto(broker_dir(self.args, self.directory), overrides(self.args))
        self.broker.start()
        self.stack.callback(self.broker.stop)
        context = multiprocessing.get_context("spawn")
        self.counter: Synchronized[int] = context.Value("q", 0, lock=False)
        self.conn, child = context.Pipe()
        topic_filter = f"{Topics(RELAY_SITE).prefix}table/+/event/+"
        process = context.Process(
            target=relay_subscriber,
            args=(self.broker.port, topic_filter, self.counter, child),
            daemon=True,
        )
        process.start()
        self.process = process
        self.stack.callback(self._stop_subscriber)
        if self.conn.recv() != "ready":
            raise RuntimeError("the relay subscriber did not start")
        tables = [f"r{n:03d}" for n in range(1, self.args.tables + 1)]
        self.fleet = Fleet(RELAY_SITE, tables, self.broker.port, self.args, every_event=True)
        await self.fleet.start()
        self.stack.push_async_callback(self.fleet.stop)
        pids = {"subscriber": process.pid or 0, "broker": self.broker.pid, "generator": os.getpid()}
        self.cpu = Cpu(pids)

    async def close(self) -> None:
        """Stop everything."""
        await self.stack.aclose()

    def _stop_subscriber(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send("stop")
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()

    async def step(self, rate: float, duration_s: float) -> dict[str, Any]:
        """The relay at one load."""
        fleet, counter = self.fleet, self.counter
        await fleet.run(rate, self.args.warmup)  # warm-up, not measured
        await until(lambda: counter.value >= fleet.total, fleet)
        fleet.sent.clear()
        base = counter.value
        self.cpu.start()
        events = await fleet.run(rate, duration_s)
        with contextlib.suppress(TimeoutError):
            await until(lambda: counter.value >= fleet.total, fleet)
        elapsed = time.perf_counter() - fleet.pacer.started
        delivered = counter.value - base
        result = delivery(events, duration_s, rate, delivered, elapsed)
        result |= self.cpu.per_event(delivered)
        self.conn.send("report")
        arrivals: list[tuple[str, bytes, float]] = self.conn.recv()
        latencies = [
            arrived - fleet.sent[key]
            for topic, payload, arrived in arrivals
            if (key := _event_id(topic, payload)) in fleet.sent
        ]
        return result | ms_percentiles(latencies) | {"latency_samples": len(latencies)}


# The controller: the daemon, its broker, the tables and a display.


class _Meter(msgspec.Struct):
    pool: str
    seq: int


@dataclass
class Display:
    """``meter/+`` at QoS 1: each pool's (seq, arrival) in arrival order."""

    port: int
    arrivals: defaultdict[str, list[tuple[int, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Subscribe (retained values are skipped: they say nothing about latency)."""
        ready = asyncio.Event()
        self.task = asyncio.create_task(self._read(ready))
        async with asyncio.timeout(10):
            await ready.wait()

    async def _read(self, ready: asyncio.Event) -> None:
        client = aiomqtt.Client(HOST, self.port, identifier=f"display-{os.getpid()}")
        async with client:
            await client.subscribe(f"{Topics(CONTROLLER_SITE).prefix}meter/+", qos=1)
            ready.set()
            async for message in client.messages:
                now = time.perf_counter()
                if message.retain:
                    continue
                meter = msgspec.json.decode(message.payload, type=_Meter)
                self.arrivals[meter.pool].append((meter.seq, now))

    async def stop(self) -> None:
        """Unsubscribe."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await self.task


async def wait_retained(port: int, topic: str, payload: bytes, timeout: float) -> None:
    """Wait until ``topic`` (retained) says ``payload``."""
    client = aiomqtt.Client(HOST, port, identifier=f"probe-{os.getpid()}")
    async with client, asyncio.timeout(timeout):
        await client.subscribe(topic, qos=1)
        async for message in client.messages:
            if message.payload == payload:
                return


def commits(web_port: int) -> tuple[float, float]:
    """The daemon's journal commits so far and their total seconds (from /metrics)."""
    url = f"http://{HOST}:{web_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    count = re.search(r"^jackpotd_journal_commit_seconds_count (\S+)$", text, re.MULTILINE)
    total = re.search(r"^jackpotd_journal_commit_seconds_sum (\S+)$", text, re.MULTILINE)
    return (float(count.group(1)) if count else 0.0, float(total.group(1)) if total else 0.0)


@dataclass
class Controller:
    """The daemon on its own broker, the controller site's tables, and a display."""

    args: argparse.Namespace
    directory: Path
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    reader: Journaled | None = None
    journal_base: int = 0

    @property
    def journal(self) -> Path:
        """The daemon's journal."""
        return self.directory / "journal.db"

    def location(self) -> str:
        """What the configuration's ``journal`` names: the file here."""
        return str(self.journal)

    def open_journal(self) -> Journaled:
        """The journal, read only."""
        return Journaled(self.journal)

    @property
    def journaled(self) -> Journaled:
        """The journal, read only (one connection, kept open)."""
        if self.reader is None:
            self.reader = self.open_journal()
            self.stack.callback(self.reader.close)
        return self.reader

    def table_events(self) -> int:
        """The tables' events journaled so far, over the run (not the controller's own rows)."""
        return self.journaled.device_events() - self.journal_base

    async def start(self) -> None:
        """Start the broker, the daemon, the display and the tables."""
        args = self.args
        self.broker = Mosquitto(broker_dir(args, self.directory), overrides(args))
        self.broker.start()
        self.stack.callback(self.broker.stop)
        self.web_port = free_port()
        tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
        self.pools = {table: f"p{index % args.pools + 1}" for index, table in enumerate(tables)}
        config = self.directory / "jackpotd.toml"
        text = config_text(
            site=CONTROLLER_SITE,
            journal=self.location(),
            tables=tables,
            pools=args.pools,
            transport="mqtt",
            web_port=self.web_port,
            broker_port=self.broker.port,
        )
        config.write_text(text)
        self.daemon = self.readied(config)
        self.daemon.start()
        self.stack.callback(self._stop_daemon)
        status = Topics(CONTROLLER_SITE).controller_status(CONTROLLER_ID)
        online = asyncio.create_task(wait_retained(self.broker.port, status, b"online", 60))

        def started() -> bool:
            self.daemon.check()  # one that refuses to start says why in its log: raise that
            return online.done()

        try:
            await until(started, timeout=60)
        finally:
            online.cancel()
        online.result()
        self.display = Display(self.broker.port)
        await self.display.start()
        self.stack.push_async_callback(self.display.stop)
        self.fleet = Fleet(CONTROLLER_SITE, tables, self.broker.port, args, every_event=False)
        await self.fleet.start()
        self.stack.push_async_callback(self.fleet.stop)
        # Each table's retained "online" is journaled once the daemon has subscribed.
        await until(lambda: self.journaled.of_kind("table-status") >= args.tables, timeout=60)
        self.journal_base = self.journaled.device_events()
        pids = {"daemon": self.daemon.pid, "broker": self.broker.pid, "generator": os.getpid()}
        self.cpu = Cpu(pids)

    def readied(self, config: Path) -> Daemon:
        """The daemon of ``config``, not yet started (bench/console.py adds its console first)."""
        return Daemon(config)

    async def close(self) -> None:
        """Stop everything."""
        await self.stack.aclose()

    def _stop_daemon(self) -> None:
        if self.daemon.stop() != 0:
            print("warning: jackpotd did not exit cleanly")

    async def step(self, rate: float, duration_s: float) -> dict[str, Any]:
        """The controller at one load."""
        fleet, display = self.fleet, self.display
        await fleet.run(rate, self.args.warmup)  # warm-up, not measured
        await until(lambda: self.table_events() >= fleet.total, fleet)
        fleet.sent.clear()
        for received in display.arrivals.values():
            received.clear()
        base = self.table_events()
        commits_before, commit_s_before = commits(self.web_port)
        self.cpu.start()
        events = await fleet.run(rate, duration_s)
        with contextlib.suppress(TimeoutError):
            await until(lambda: self.table_events() >= fleet.total, fleet)
        elapsed = time.perf_counter() - fleet.pacer.started
        delivered = self.table_events() - base
        result = delivery(events, duration_s, rate, delivered, elapsed)
        result |= self.cpu.per_event(delivered)
        self.daemon.check()
        commits_after, commit_s_after = commits(self.web_port)
        batches = commits_after - commits_before
        result |= {
            "commits": int(batches),
            "events_per_commit": round(delivered / batches, 1) if batches else None,
            "mean_commit_ms": ms((commit_s_after - commit_s_before) / batches) if batches else None,
        }
        locks = self.journaled.contributing_locks(fleet.sent)
        await self._meters_of(locks)
        visible, own, unmatched = meter_latencies(locks, fleet.sent, display.arrivals, self.pools)
        return (
            result
            | ms_percentiles(visible)
            | {
                "max_latency_ms": ms(max(visible, default=None)),
                "latency_samples": len(visible),
                "unmatched_locks": unmatched,
            }
            | ms_percentiles(own, "_own")
            | {"own_value_published": round(len(own) / len(visible), 3) if visible else None}
        )

    async def _meters_of(self, locks: list[tuple[str, int]]) -> None:
        """Wait (a little) for the meters of the step's last locks, still on their way."""
        last: dict[str, int] = {}
        for event_id, seq in locks:
            pool = self.pools[event_id.split("/", 1)[0]]
            last[pool] = max(last.get(pool, 0), seq)
        arrivals = self.display.arrivals

        def arrived() -> bool:
            return all(bool(arrivals[p]) and arrivals[p][-1][0] >= seq for p, seq in last.items())

        with contextlib.suppress(TimeoutError):
            await until(arrived, timeout=10.0)


def meter_latencies(
    locks: list[tuple[str, int]],
    sent: dict[str, float],
    arrivals: dict[str, list[tuple[int, float]]],
    pools: dict[str, str],
) -> tuple[list[float], list[float], int]:
    """Each lock's publish to the first meter of its pool at or after its row (see the doc).

    Returns the latencies of every lock, those of the locks whose own value was published,
    and how many locks had no meter to match (none arrived within the wait).
    """
    visible: list[float] = []
    own: list[float] = []
    unmatched = 0
    seqs = {pool: [seq for seq, _ in received] for pool, received in arrivals.items()}
    for event_id, seq in locks:
        pool = pools[event_id.split("/", 1)[0]]
        published = sent.get(event_id)
        index = bisect_left(seqs.get(pool, []), seq)
        if published is None or index == len(seqs.get(pool, [])):
            unmatched += 1
            continue
        meter_seq, arrived = arrivals[pool][index]
        visible.append(arrived - published)
        if meter_seq == seq:
            own.append(arrived - published)
    return visible, own, unmatched
