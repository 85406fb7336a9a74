"""A slowloris flood on the display's port cannot starve the money path.

The real daemon (``python -m controller run``) serves a table on a real mosquitto, with its
open-file limit set to :data:`FILE_LIMIT` (``RLIMIT_NOFILE``, set by ``prlimit`` as it
starts): far fewer descriptors than the flood's connections, so that without the web port's
cap the flood would take the last one from the journal and the broker. While the table sends
:data:`EVENTS` events through the broker, this process opens :data:`FLOOD` connections to the
port, each sending half a request head and never the rest, and :data:`SLOW_READERS`
``/events`` streams that never read a byte (all on 127.0.0.1). It checks (docs/operations.md,
"The web port"):

* every event the table sent is journaled, the flood notwithstanding;
* ``/healthz`` answers 200 within :data:`ANSWER_S` throughout the flood, and after it;
* the daemon's descriptors stay below its limit, its web connections at the cap sized from
  that limit (``FILE_LIMIT`` less the headroom), and the connections beyond the cap were
  displaced, those left closed at ``header_timeout_s``: the cap is what saved it;
* the log stays small: a few throttled lines, not one per connection.

Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
import aiomqtt
import pytest
from support.drivers.mosquitto import Broker
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import ROOT, approved_site, free_port, journal_rows, within

from controller.web.limits import FD_HEADROOM
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.slow

FILE_LIMIT = 600
"""The daemon's RLIMIT_NOFILE: well under the flood."""
CAP = FILE_LIMIT - FD_HEADROOM
"""The web connections it may hold, sized at start from its limit."""
FLOOD = 1500
SLOW_READERS = 40
MAX_STREAMS = 16
EVENTS = 200
HEADER_TIMEOUT_S = 3.0
ANSWER_S = 2.0
"""How long /healthz may take during the flood; it answers in milliseconds."""
LOG_BYTES = 16_384
"""The most the daemon's log may grow to, flood and all."""
SITE = "flood"
TABLE = "t1"
TOPICS = Topics(SITE)
PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"
"""util-linux's prlimit: runs a command under the limits it is given."""


def write_config(folder: Path, broker: Broker, port: int) -> Path:
    config = folder / "jackpotd.toml"
    write_controller_key(folder)
    config.write_text(
        f'[controller]\nsite = "{SITE}"\nid = "{SITE}"\njournal = "journal.db"\n{KEY_LINE}\n'
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        f'[[tables]]\nid = "{TABLE}"\ntransport = "mqtt"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f"[web]\nport = {port}\nmax_streams = {MAX_STREAMS}\nmax_connections = 1024\n"
        f"header_timeout_s = {HEADER_TIMEOUT_S}\nidle_timeout_s = {HEADER_TIMEOUT_S}\n"
        "send_timeout_s = 60\n"
    )
    approved_site(config)
    return config


class Daemon:
    """``jackpotd run`` in a child process under :data:`FILE_LIMIT`, its log in a file."""

    def __init__(self, folder: Path, broker: Broker) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = folder / "jackpotd.log"
        self.journal = folder / "journal.db"
        config = write_config(folder, broker, self.port)
        with self.log.open("w") as stderr:
            # prlimit sets the limit and execs the daemon in the same process.
            self.process = subprocess.Popen(
                [PRLIMIT, f"--nofile={FILE_LIMIT}:{FILE_LIMIT}",
                 sys.executable, "-m", "controller", "run", "--config", str(config)],
                stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
            )  # fmt: skip
        assert self.process.stdout is not None
        assert "meter display" in self.process.stdout.readline(), self.log.read_text()

    def descriptors(self) -> int:
        """The daemon's open file descriptors now."""
        return sum(1 for _ in Path(f"/proc/{self.process.pid}/fd").iterdir())

    def file_limit(self) -> int:
        """The daemon's soft open-file limit, as the kernel has it."""
        for line in Path(f"/proc/{self.process.pid}/limits").read_text().splitlines():
            if line.startswith("Max open files"):
                return int(line.split()[3])
        raise AssertionError("no open-file limit")

    def journaled(self, prefix: str) -> set[str]:
        """The ids of the journal's rows that start with ``prefix``."""
        return {
            str(row["event_id"])
            for row in journal_rows(self.journal)
            if str(row["event_id"]).startswith(prefix)
        }

    def stop(self) -> int:
        """SIGTERM; the exit status (killed after 30 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate(timeout=30)
            pytest.fail("the daemon did not stop within 30 s")
        return self.process.returncode


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    running = Broker(tmp_path / "mosquitto")
    running.start()
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def flooded_daemon(tmp_path: Path, broker: Broker) -> Iterator[Daemon]:
    running = Daemon(tmp_path, broker)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.communicate(timeout=30)


@pytest.fixture(autouse=True)
def room_for_the_flood() -> None:
    """This process holds the flood's sockets: its own soft limit raised to fit them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = FLOOD + SLOW_READERS + 512
    if soft < needed:
        assert hard >= needed, f"the hard open-file limit {hard} is below {needed}"
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


async def until(condition: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    """Check ``condition`` every 50 ms until it holds, failing after ``seconds``."""

    async def checking() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await within(checking(), what, seconds)


async def healthy(url: str) -> float:
    """GET /healthz on a fresh connection: 200 within ANSWER_S; the seconds it took."""
    started = time.monotonic()
    timeout = aiohttp.ClientTimeout(total=ANSWER_S)
    connector = aiohttp.TCPConnector(force_close=True)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout, connector=connector) as session,
            session.get(url + "healthz") as response,
        ):
            body = await response.text()
    except TimeoutError:
        pytest.fail(f"/healthz did not answer within {ANSWER_S:g} s during the flood")
    assert response.status == 200, body
    return time.monotonic() - started


async def half_sent(port: int, index: int) -> socket.socket | None:
    """A connection that sends half a request head and nothing more (None if it was refused)."""
    sock = socket.socket()
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        await loop.sock_sendall(sock, f"GET /api/state?{index} HTTP/1.1\r\nHost: f\r\nX-".encode())
    except OSError:  # displaced before it had sent: what the cap does
        sock.close()
        return None
    return sock


async def slow_reader(port: int) -> socket.socket:
    """A whole ``GET /events`` whose answer is never read (a receive buffer kept tiny)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, b"GET /events HTTP/1.1\r\nHost: f\r\n\r\n")
    return sock


def bet(seq: int) -> bytes:
    """The table's bet sensor: a chip on seat 1's bonus spot, on and off."""
    fields = {"v": 1, "device": "bs", "seq": seq, "seat": 1, "spot": "bonus"}
    return json.dumps(fields | {"present": seq % 2 == 1}).encode()


async def test_a_slowloris_flood_on_the_web_port_leaves_every_table_event_journaled(
    flooded_daemon: Daemon, broker: Broker
) -> None:
    assert flooded_daemon.file_limit() == FILE_LIMIT < FLOOD
    held: list[socket.socket] = []
    async with aiomqtt.Client(broker.host, broker.port, identifier="table-t1") as table:
        await table.publish(TOPICS.table_status(TABLE), b"online", qos=1, retain=True)
        # Journaled once the controller has subscribed: its session now queues the events.
        await until(lambda: bool(flooded_daemon.journaled(f"{TABLE}/status/")), "the table online")
        peak = flooded_daemon.descriptors()
        answers: list[float] = []
        flooding = True

        async def floods() -> None:
            nonlocal flooding
            held.extend([await slow_reader(flooded_daemon.port) for _ in range(SLOW_READERS)])
            for start in range(0, FLOOD, 100):
                batch = [half_sent(flooded_daemon.port, start + i) for i in range(100)]
                held.extend(s for s in await asyncio.gather(*batch) if s is not None)
            flooding = False

        async def table_plays() -> None:
            for seq in range(1, EVENTS + 1):
                await table.publish(TOPICS.table_event(TABLE, "bet"), bet(seq), qos=1)
                await asyncio.sleep(0.01)  # a table's pace, beside the flood

        async def watch() -> None:
            nonlocal peak
            while flooding:
                answers.append(await healthy(flooded_daemon.url))
                peak = max(peak, flooded_daemon.descriptors())

        await within(asyncio.gather(floods(), table_plays(), watch()), "the flood", 60)
        expected = {f"{TABLE}/bs/{seq}" for seq in range(1, EVENTS + 1)}
        await until(
            lambda: expected <= flooded_daemon.journaled(f"{TABLE}/bs/"), "every event journaled"
        )
        assert len(answers) >= 3, answers  # /healthz was asked throughout the flood
        assert peak < FILE_LIMIT, f"{peak} descriptors open under a limit of {FILE_LIMIT}"

        metrics = await scrape(flooded_daemon.url)
        assert sample(metrics, "jackpotd_web_connections_max") == CAP
        assert sample(metrics, "jackpotd_web_connections") <= CAP
        displaced = sample(metrics, 'jackpotd_web_connections_dropped_total{reason="displaced"}')
        assert displaced >= FLOOD + SLOW_READERS - CAP, metrics
        # Those left waiting are closed at the header deadline; /healthz answers after.
        await until(
            lambda: open_web(flooded_daemon.url) <= MAX_STREAMS + 2,
            "the half-sent requests to be closed",
            HEADER_TIMEOUT_S + 10,
        )
        await healthy(flooded_daemon.url)
        metrics = await scrape(flooded_daemon.url)
        assert sample(metrics, 'jackpotd_web_connections_dropped_total{reason="header-timeout"}')
    for sock in held:
        sock.close()
    assert flooded_daemon.stop() == 0
    log = flooded_daemon.log.read_text()
    assert len(log.encode()) < LOG_BYTES, log[-4000:]
    assert "Too many open files" not in log, log[-4000:]


async def scrape(url: str) -> str:
    timeout = aiohttp.ClientTimeout(total=ANSWER_S)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(url + "metrics") as response,
    ):
        assert response.status == 200
        return await response.text()


def sample(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} in the metrics")


def open_web(url: str) -> float:
    """``jackpotd_web_connections`` now (a blocking scrape, for :func:`until`)."""
    import urllib.request  # noqa: PLC0415

    with contextlib.closing(urllib.request.urlopen(url + "metrics", timeout=ANSWER_S)) as answer:  # noqa: S310 - our own daemon
        return sample(answer.read().decode(), "jackpotd_web_connections")
