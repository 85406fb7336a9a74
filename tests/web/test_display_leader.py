"""``GET /leader``: only a node that sequences answers 200, over real HTTP (docs/ha.md).

HAProxy in front of the controller nodes asks each ``/leader`` (``option httpchk``) and sends
agents, signs and displays to the one answering 200. The daemon runs in this event loop on a
real SQLite journal, with a table on a real mosquitto; a second writer holding the file's write
lock makes it fail closed, and then it must not claim to lead until the journal is writable
again. On a real PostgreSQL journal the node answers with the fence's epoch and its own name,
and another node cannot take over while it leads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from support.runtime.daemon import CONTROLLER, daemon, write_config
from support.runtime.floor import WAIT_S

from controller.clock import utc_now
from controller.config.load import load_config
from controller.events import FaultRecorded
from controller.journal.errors import FencedError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres.fence import Fence
from controller.ledger_journal.postgres import PostgresJournal
from controller.ports import ControllerUnavailableError

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.runtime.daemon import Daemon

pytestmark = pytest.mark.slow


async def leader_becomes(running: Daemon, status: int) -> dict[str, Any]:
    """``/leader`` once it answers ``status`` (asked again every 0.1 s, at most WAIT_S)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            answer, body = await running.get("leader")
            if answer == status:
                return dict(json.loads(body))
            await asyncio.sleep(0.1)


async def test_only_a_node_whose_journal_is_writable_answers_leader(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    async with daemon(config) as running:
        leading = await leader_becomes(running, 200)
        journal = running.runtime.journal
        assert leading == {
            "node": config.controller.node, "controller": CONTROLLER, "epoch": 0,
            "seq": journal.head[0],
        }  # fmt: skip
        assert config.controller.node  # [controller] node: the host's name by default
        assert leading["seq"] > 0
        _status, body = await running.get("api/state")
        page = json.loads(body)
        assert (page["controller"]["epoch"], page["controller"]["seq"]) == (0, leading["seq"])
        assert all((pool["epoch"], pool["seq"]) == (0, leading["seq"]) for pool in page["pools"])
        # Another writer holds the journal's write lock: the next write fails, and it fails closed.
        with contextlib.closing(sqlite3.connect(tmp_path / "journal.db")) as other:
            other.execute("BEGIN EXCLUSIVE")
            fault = FaultRecorded(f"fault-{uuid.uuid4()}", utc_now(), "test", "probe")
            with pytest.raises(ControllerUnavailableError):
                await running.runtime.sequencer.submit(fault)
            refused = await leader_becomes(running, 503)
            assert "locked" in str(refused["reason"])
            assert refused["node"] == config.controller.node
            other.rollback()
        assert (await leader_becomes(running, 200))["seq"] > leading["seq"]  # the recovery
        await running.stop()


async def test_on_a_shared_journal_only_the_node_holding_the_fence_answers_with_its_epoch(
    mosquitto: Broker, tmp_path: Path, postgres_url: str
) -> None:
    write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    path = tmp_path / "jackpotd.toml"
    text = re.sub(r'journal = ".*"', f'journal = "{postgres_url}"', path.read_text())
    path.write_text(text.replace("[controller]\n", '[controller]\nnode = "pit-a"\n', 1))
    url = DatabaseUrl(postgres_url)
    async with daemon(load_config(path)) as running:
        leading = await leader_becomes(running, 200)
        assert (leading["node"], leading["epoch"]) == ("pit-a", 1)
        # Another node cannot take the sequencer over while pit-a renews its lease.
        with pytest.raises(FencedError, match="pit-a"):
            PostgresJournal(url, fence=Fence("pit-b", lease_s=0.5))
        assert (await leader_becomes(running, 200))["epoch"] == 1
        await running.stop()
    # pit-a stopped cleanly and ended its lease: pit-b takes over at once, at epoch 2.
    with PostgresJournal(url, fence=Fence("pit-b", lease_s=30)) as taken:
        assert (taken.epoch, taken.leading) == (2, True)
