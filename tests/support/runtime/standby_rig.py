"""Controller nodes on one PostgreSQL journal, run in the test's process.

Their configurations, the fence row as the database holds it, and systemd's end of
``$NOTIFY_SOCKET`` (docs/ha.md, "The fenced sequencer" and "A warm standby";
tests/service/test_fenced_service.py and test_standby_service.py).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import TYPE_CHECKING

import aiohttp
import psycopg

from controller.config.load import load_config
from support.drivers.mosquitto import free_port
from support.runtime.floor import within

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.load import Config


def node_config(folder: Path, url: str, node: str, lease_s: float) -> Config:
    """One pool, one simulated table, the journal at ``url``, sequenced as ``node``."""
    path = folder / f"{node}.toml"
    path.write_text(
        f"""
[controller]
site = "lab"
id = "pit"
journal = "{url}"
node = "{node}"
lease_s = {lease_s}
commit_hang_s = 20

[[pools]]
id = "P1"
paytable = "progressive-1"

[[tables]]
id = "T1"
transport = "simulator"
bonus = "fortune-1"
progressive = "progressive-1"
pool = "P1"

[web]
host = "127.0.0.1"
port = {free_port()}

[simulator]
round_interval_s = 0.02
"""
    )
    return load_config(path)


def fence(url: str) -> tuple[int, str]:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT epoch, holder FROM sequencer_fence").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def takeovers(url: str) -> list[tuple[int, str, dict[str, object]]]:
    """The journal's ``sequencer-took-over`` rows: their ``seq``, id and fields, in order."""
    query = "SELECT seq, event_id, event FROM journal WHERE kind = %s ORDER BY seq"
    with psycopg.connect(url) as connection:
        rows = connection.execute(query, ["sequencer-took-over"]).fetchall()
    return [(int(seq), str(event_id), json.loads(str(event))) for seq, event_id, event in rows]


class NotifySocket:
    """systemd's end of ``$NOTIFY_SOCKET``: the datagrams a service sends, awaited one by one."""

    def __init__(self, folder: Path) -> None:
        self.address = str(folder / "notify.sock")
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.address)
        self.socket.setblocking(False)
        self.messages: list[str] = []

    async def until(self, prefix: str) -> str:
        """The first message starting with ``prefix`` (bounded wait)."""
        loop = asyncio.get_running_loop()
        while not any(message.startswith(prefix) for message in self.messages):
            data = await within(loop.sock_recv(self.socket, 4096), f"systemd to hear {prefix!r}")
            self.messages.append(data.decode())
        return next(message for message in self.messages if message.startswith(prefix))


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def until_answered(url: str) -> None:
    """Until something answers ``url``: a page is up (wrap it in a bounded wait).

    Nothing tells a client when another task's server starts listening; the connection is
    tried again every 50 ms.
    """
    while True:
        try:
            await get(url)
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.05)
        else:
            return
