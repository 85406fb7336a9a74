"""The service on a shared PostgreSQL journal: it sequences as its ``[controller] node``.

controller/service/wiring.py opens the journal fenced (controller/journal/sequencing.py) with
the configuration's node and lease, and its sequencer with its ``commit_hang_s``; docs/ha.md,
"The fenced sequencer". A node that finds the fence held stands by, warm, and takes over in
the same process when the holder's lease ends (controller/service/standby.py; docs/ha.md, "A
warm standby"). The whole service runs in this process on simulated tables.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from support.runtime.daemon import daemon
from support.runtime.floor import within
from support.runtime.standby_rig import (
    NotifySocket,
    fence,
    get,
    node_config,
    takeovers,
    until_answered,
)

from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import verify as verify_database
from controller.service.wiring import serve

if TYPE_CHECKING:
    import pytest

    from controller.runtime.view import Runtime


async def test_a_second_node_stands_by_warm_and_takes_over_in_process_when_the_first_stops(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = node_config(tmp_path, postgres_url, "pit-a", lease_s=5)
    second = node_config(tmp_path, postgres_url, "pit-b", lease_s=1)
    second_url = f"http://{second.web.host}:{second.web.port}/"
    async with daemon(first) as running:
        await running.until_more(20, "node pit-a's rounds")
        assert running.runtime.journal.epoch == 1
        assert running.runtime.sequencer.commit_hang_s == 20
        assert fence(postgres_url) == (1, "pit-a")
        systemd = NotifySocket(Path(tempfile.mkdtemp(dir="/tmp")))
        monkeypatch.setenv("NOTIFY_SOCKET", systemd.address)
        stop = asyncio.Event()
        led: asyncio.Future[Runtime] = asyncio.get_running_loop().create_future()
        standby = asyncio.create_task(
            serve(second, stop, started=lambda runtime, _url: led.set_result(runtime))
        )
        try:
            ready = await systemd.until("READY=1")
            assert ready.startswith("READY=1\nSTATUS=standby: ")
            await systemd.until("STATUS=standby: node 'pit-a' holds the sequencer (epoch 1)")
            status, body = await get(second_url + "leader")
            assert status == 503  # HAProxy sends nobody to a standby
            assert json.loads(body) | {"seq": 0} == {
                "node": "pit-b", "controller": "pit", "standby": True, "holder": "pit-a",
                "epoch": 1, "seq": 0, "reason": "node 'pit-a' holds the sequencer (epoch 1)",
            }  # fmt: skip
            assert "jackpotd_standby 1.0" in (await get(second_url + "metrics"))[1]
            head = running.runtime.journal.head[0]
            await running.until_more(5, "node pit-a going on beside its standby")
            assert running.runtime.journal.head[0] > head
            assert fence(postgres_url) == (1, "pit-a")  # the standby wrote nothing
            assert not led.done()
            await running.stop()  # a clean stop ends pit-a's lease: pit-b takes over now
            runtime = await within(asyncio.shield(led), "pit-b to take over, in process")
            assert runtime.journal.epoch == 2
            assert fence(postgres_url) == (2, "pit-b")
            assert standby.done() is False  # the same process, not a restart
            await systemd.until("READY=1\nSTATUS=serving")
            status, body = await get(second_url + "leader")
            assert (status, json.loads(body)["node"]) == (200, "pit-b")
        finally:
            stop.set()
            await within(standby, "pit-b to stop")
    leader = standby.result()
    assert leader is not None
    leader.journal.close()
    assert verify_database(DatabaseUrl(postgres_url)).ok
    # docs/ha.md, "Takeovers in the journal": each epoch's first row says who took over, from
    # whom: pit-a first, then pit-b once pit-a's released lease had run out.
    (first_seq, first_id, took_a), (_seq, second_id, took_b) = takeovers(postgres_url)
    assert (first_seq, first_id) == (1, "takeover-1")
    assert (took_a["node"], took_a["epoch"], took_a.get("previous_node", "")) == ("pit-a", 1, "")
    assert took_a["why"] == "the journal's first sequencer"
    assert second_id == "takeover-2"
    assert (took_b["node"], took_b["previous_node"], took_b["previous_epoch"]) == (
        "pit-b",
        "pit-a",
        1,
    )
    assert int(str(took_b.get("lease_left_ms", 0))) <= 0
    assert str(took_b["why"]).startswith("node 'pit-a''s lease (epoch 1) ran out")


async def test_a_standby_stopped_before_it_leads_returns_having_written_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    first = node_config(tmp_path, postgres_url, "pit-a", lease_s=30)
    second = node_config(tmp_path, postgres_url, "pit-b", lease_s=1)
    async with daemon(first) as running:
        await running.until_more(5, "node pit-a's rounds")
        stop = asyncio.Event()
        standby = asyncio.create_task(serve(second, stop))
        second_url = f"http://{second.web.host}:{second.web.port}/leader"
        await within(until_answered(second_url), "pit-b's standby page")
        stop.set()
        assert await within(standby, "pit-b to stop") is None
        assert fence(postgres_url) == (1, "pit-a")
        await running.until_more(5, "node pit-a going on")
