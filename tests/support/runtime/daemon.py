"""The real daemon run in-process on a real broker with simulated tables, and what it publishes."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
import aiomqtt

from controller.config.load import load_config
from controller.journal.sqlite import Journal
from controller.service.startup_checks import AuthorityPolicy
from controller.service.wiring import serve
from drivers.agent.state import Changes
from drivers.mqtt.settings import BrokerSettings
from support.drivers.mqtt_watch import Watch, watching
from support.runtime.floor import (
    POOL,
    WAIT_S,
    free_port,
    within,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Sequence
    from pathlib import Path

    from controller.config.load import Config
    from controller.ledger.state import LedgerState
    from controller.ports import Receipt
    from controller.runtime.view import Runtime
    from support.drivers.mosquitto import Broker

SITE = "e2e"
CONTROLLER = "e2e"


def write_config(
    tmp_path: Path,
    *,
    broker: Broker | None = None,
    mqtt: Sequence[str] = (),
    serial: dict[str, str] | None = None,
    heartbeat_timeout_s: float = 30,
) -> Config:
    """A configuration: one pool (progressive-1), tables on MQTT and on pty lines.

    ``serial`` maps a table id to the pty slave path its devices are on.
    """
    text = (
        f'[controller]\nsite = "{SITE}"\nid = "{CONTROLLER}"\n'
        f'journal = "{tmp_path / "journal.db"}"\nheartbeat_timeout_s = {heartbeat_timeout_s}\n\n'
    )
    if broker is not None:
        text += (
            f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive_s = 5\n'
            "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        )
    for table_id, device_path in (serial or {}).items():
        text += (
            f'[[serial]]\nname = "{table_id}-line"\nurl = "{device_path}"\n'
            f'table_id = "{table_id}"\n'
            "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        )
    text += f'[[pools]]\nid = "{POOL}"\npaytable = "progressive-1"\n\n'
    transports = [(table_id, "mqtt") for table_id in mqtt]
    transports += [(table_id, f"serial:{table_id}-line") for table_id in serial or {}]
    for table_id, transport in transports:
        text += (
            f'[[tables]]\nid = "{table_id}"\ntransport = "{transport}"\nbonus = "fortune-1"\n'
            f'progressive = "progressive-1"\npool = "{POOL}"\n\n'
        )
    text += f'[web]\nhost = "127.0.0.1"\nport = {free_port()}\n'
    path = tmp_path / "jackpotd.toml"
    path.write_text(text)
    return load_config(path)


def broker_settings(broker: Broker) -> BrokerSettings:
    """What a table's MQTT client needs (the controller's own come from the configuration)."""
    return BrokerSettings(
        host=broker.host,
        port=broker.port,
        site=SITE,
        keepalive_s=5,
        backoff_initial_s=0.05,
        backoff_cap_s=0.5,
    )


@dataclass
class Daemon:
    """The service running in this event loop; its receipts, for tests to wait on."""

    runtime: Runtime
    url: str
    task: asyncio.Task[Runtime | None]
    stop_event: asyncio.Event
    receipts: list[Receipt] = field(default_factory=list)
    _commits: Changes = field(default_factory=Changes)

    def committed(self, receipts: Sequence[Receipt]) -> None:
        """The sequencer's commit hook: keep the receipts, wake the waits."""
        self.receipts.extend(receipts)
        self._commits.tell()

    async def until(self, predicate: Callable[[], bool], what: str) -> None:
        """Wait (bounded) until ``predicate()`` holds; re-checked after every commit."""
        await within(self._commits.until(predicate), what)

    async def until_more(self, count: int, what: str) -> None:
        """Wait until ``count`` more events than now are committed."""
        target = len(self.receipts) + count
        await self.until(lambda: len(self.receipts) >= target, what)

    async def until_id(self, prefix: str, what: str) -> None:
        """Wait until an event whose id starts with ``prefix`` is committed."""
        await self.until(lambda: bool(self.ids(prefix)), what)

    def ids(self, prefix: str = "") -> set[str]:
        """Ids of the events committed so far (from this run), optionally by prefix."""
        return {r.event_id for r in self.receipts if r.event_id.startswith(prefix)}

    async def stop(self) -> None:
        """SIGTERM's path: stop the sources, journal what was received, publish offline."""
        self.stop_event.set()
        await within(asyncio.shield(self.task), "the daemon to stop")

    def rows(self) -> list[dict[str, Any]]:
        """Every journal row, in order."""
        return list(local_journal(self.runtime).rows())

    async def get(self, path: str) -> tuple[int, str]:
        """GET a path of the display (``api/state``, ``metrics``): status and body."""
        async with aiohttp.ClientSession() as session, session.get(self.url + path) as response:
            return response.status, await response.text()


def local_journal(runtime: Runtime) -> Journal[LedgerState]:
    """The runtime's journal as the SQLite file it is in these tests (its rows, its ``db``)."""
    journal = runtime.journal
    assert isinstance(journal, Journal), journal
    return journal


@contextlib.asynccontextmanager
async def daemon(config: Config, authority: AuthorityPolicy | None = None) -> AsyncIterator[Daemon]:
    """Run ``serve(config, stop)`` in a task until the block ends; the journal closed after.

    ``authority``: how start-up treats the journal's authority (the demo brings a manager).
    """
    stop = asyncio.Event()
    started: asyncio.Future[tuple[Runtime, str]] = asyncio.get_running_loop().create_future()

    def on_start(runtime: Runtime, url: str) -> None:
        started.set_result((runtime, url))

    policy = authority if authority is not None else AuthorityPolicy()
    task = asyncio.create_task(serve(config, stop, started=on_start, authority=policy))
    either: set[asyncio.Future[Any]] = {task, started}
    await within(asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED), "start-up")
    if task.done():
        task.result()  # raises why it did not start
    runtime, url = started.result()
    running = Daemon(runtime, url, task, stop)
    runtime.sequencer.on_commit.append(running.committed)
    try:
        yield running
    finally:
        if not task.done():
            stop.set()
            with contextlib.suppress(Exception):
                await within(task, "the daemon to stop")
        runtime.journal.close()


@contextlib.asynccontextmanager
async def probe(broker: Broker, *filters: str) -> AsyncIterator[Watch]:
    """A sign or display subscribed at QoS 1."""
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.subscribe([(topic_filter, 1) for topic_filter in filters])
        async with watching(client, WAIT_S) as watcher:
            yield watcher


async def tables_announced(running: Daemon, table_ids: Iterable[str]) -> None:
    """Wait until the source journaled each table's retained ``online``: it is subscribed.

    Before the controller's first subscription its session does not exist, so a table's
    events would have nobody to be queued for.
    """
    for table_id in table_ids:
        await running.until_id(f"{table_id}/status/mqtt/", f"{table_id} online")


def metric(text: str, sample: str) -> float:
    """The value of one Prometheus sample line (``name{labels}``), 0 if absent."""
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0
