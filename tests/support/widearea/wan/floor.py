"""The WAN test's tables and signs: every property's floor over MQTT, on a loop of its own.

Each table is a :class:`drivers.simulator.SimulatedTable` whose devices speak MQTT to its
property's own broker (:class:`drivers.simulator_links.MqttTableLink`: QoS 1, resent until the
broker's ``PUBACK``), as a real floor's do; a property's tables never cross the WAN.
``hit_every`` rigs a jackpot hand every N rounds of each table (its rounds ``<session>-<N>``,
``<session>-<2N>``...), so that wide-area hits are claimed throughout.

Signs follow the meters (:class:`drivers.mqtt.follower.MeterFollower`): one on central's
broker, and one on each property's broker for central's pool (the property shows central's
meter there), each writing every meter it applies to ``meters.jsonl`` with its wall-clock
time, for the meter lag (:mod:`support.widearea.wan.checks`), and every open or closed status of the
pool with its reason (``meter/<pool>/status``: the property's signs show why wide-area play is
closed, :mod:`support.widearea.wan.signs`).

The harness is synchronous and drives real processes, so :class:`Floor` runs its own event
loop in a thread of the harness, as :class:`support.ha.tcp_proxy.LinkProxy` does; every call
waits a bounded time for the loop to act.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

from controller.outputs import MeterUpdate, PoolUpdate
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.settings import BrokerSettings
from drivers.simulator import SimulatedTable, TablePlan
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from pathlib import Path

T = TypeVar("T")


@dataclass(frozen=True)
class FloorProperty:
    """One property's floor: its site (its topics' prefix), its broker, its tables."""

    site: str
    port: int
    tables: list[str]


@dataclass(frozen=True, kw_only=True)
class FloorSettings:
    """What the harness gives the floor."""

    meters: Path
    """Where the signs write what they apply."""
    host: str
    seed: int
    round_pause_s: float
    hit_every: int
    heartbeat_s: float
    wait_s: float
    properties: list[FloorProperty]
    central_site: str
    central_port: int
    """Central's broker (its plain listener): the wide-area meter at its source."""
    pool: str


def settings_for(host: str, port: int, site: str) -> BrokerSettings:
    """A client of a broker under ``site``'s topics."""
    return BrokerSettings(
        host=host, port=port, site=site, keepalive_s=5, backoff_initial_s=0.05, backoff_cap_s=1.0
    )


class Table:
    """A simulated table and its devices' MQTT link."""

    def __init__(self, table: SimulatedTable, link: MqttTableLink) -> None:
        self.table = table
        self.link = link
        self.playing = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()

    async def play(self, pause_s: float) -> None:
        """Rounds while playing; idle (the round under way ended) while not."""
        while True:
            await self.playing.wait()
            self.idle.clear()
            try:
                await self.table.play_round()
            finally:
                self.idle.set()
            await asyncio.sleep(pause_s)  # the floor's pace, not a wait for anything

    async def settled(self) -> None:
        """Until the round under way ended and the broker acknowledged every event."""
        await self.idle.wait()
        while self.link.pending:
            await asyncio.sleep(0.05)  # the link tells nobody when its queue empties


class MeterLog:
    """``meters.jsonl``: each meter and pool status a sign applied, with when (flushed at once)."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self.statuses: dict[str, PoolUpdate] = {}
        """The last pool status each sign applied."""
        self.changed = asyncio.Event()

    async def follow(self, where: str, sign: MeterFollower) -> None:
        """Write each meter and status ``sign`` applies until cancelled."""
        async for update in sign.updates():
            base = {"where": where, "t": time.time(), "pool": "", "epoch": update.epoch}
            if isinstance(update, MeterUpdate):
                fact = base | {
                    "pool": update.pool_id, "seq": update.seq, "at": update.at,
                    "cents": update.meter_cents,
                }  # fmt: skip
            elif isinstance(update, PoolUpdate):
                fact = base | {"pool": update.pool_id, "open": update.open, "reason": update.reason}
                self.statuses[where] = update
            else:
                continue
            self._file.write(json.dumps(fact, separators=(",", ":")) + "\n")
            self._file.flush()
            self.changed.set()

    async def until_open(self, signs: list[str]) -> None:
        """Until each of ``signs`` last showed its pool open."""
        while not all(w in self.statuses and self.statuses[w].open for w in signs):
            self.changed.clear()
            await self.changed.wait()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


class Floor:
    """Every property's tables and the signs, on their own loop (module docstring)."""

    def __init__(self, settings: FloorSettings) -> None:
        self.settings = settings
        self.session = uuid.uuid4().hex[:8]
        self.tables: list[Table] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._meters: MeterLog | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> None:
        """Connect every table and sign; the tables heartbeat, and play once told to."""
        self._thread.start()
        self._call(self._start())

    def play(self) -> None:
        """Rounds at every table, a pause between them."""
        self._call(self._play())

    def stop(self) -> dict[str, int]:
        """No new rounds: the rounds under way end, every event acknowledged by its broker.

        The rounds each table played.
        """
        return self._call(self._stop())

    def signs_open(self, sites: list[str]) -> None:
        """Until each property's sign shows its wide-area pool open (bounded)."""
        meters = self._meters
        if meters is None:
            raise RuntimeError("the floor has not started")
        self._call(meters.until_open(sites))

    def close(self) -> None:
        """Stop everything and the loop's thread."""
        if not self._thread.is_alive():
            return
        with contextlib.suppress(TimeoutError, RuntimeError):
            self._call(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(self.settings.wait_s)
        if not self._loop.is_running():
            self._loop.close()

    def _call(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(self.settings.wait_s)

    def _signs(self) -> dict[str, MeterFollower]:
        settings = self.settings
        brokers = {
            "central": settings_for(settings.host, settings.central_port, settings.central_site)
        }
        brokers |= {
            f.site: settings_for(settings.host, f.port, f.site) for f in settings.properties
        }
        return {
            where: MeterFollower(broker, client_id=f"sign-{where}", pools=[settings.pool])
            for where, broker in brokers.items()
        }

    async def _start(self) -> None:
        settings = self.settings
        rng = random.Random(settings.seed)  # noqa: S311 - simulated players
        for floor in settings.properties:
            broker = settings_for(settings.host, floor.port, floor.site)
            for table_id in floor.tables:
                link = MqttTableLink(broker, table_id)
                plan = TablePlan(table_id, occupancy=0.8, bet_probability=0.7)
                players = random.Random(rng.random())  # noqa: S311 - simulated players
                simulated = SimulatedTable(plan, link, players, self.session, settings.hit_every)
                self.tables.append(Table(simulated, link))
        meters = self._meters = MeterLog(settings.meters)
        for where, sign in self._signs().items():
            self._tasks += [
                asyncio.create_task(sign.run()),
                asyncio.create_task(meters.follow(where, sign)),
            ]
        for table in self.tables:
            await table.link.__aenter__()
            self._tasks.append(asyncio.create_task(table.table.heartbeats(settings.heartbeat_s)))
        for table in self.tables:
            await table.link.wait_connected()
        self._tasks += [asyncio.create_task(t.play(settings.round_pause_s)) for t in self.tables]

    async def _play(self) -> None:
        for table in self.tables:
            table.playing.set()

    async def _stop(self) -> dict[str, int]:
        for table in self.tables:
            table.playing.clear()
        for table in self.tables:
            await table.settled()
        for task in self._tasks:
            if task.done() and not task.cancelled() and (error := task.exception()) is not None:
                raise RuntimeError(f"the floor failed: {task.get_name()}") from error
        return {t.table.plan.table_id: t.table.rounds_played for t in self.tables}

    async def _close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for table in self.tables:
            with contextlib.suppress(Exception):
                await table.link.close()
        if self._meters is not None:
            self._meters.close()
