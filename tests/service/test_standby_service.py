"""A warm standby's life: its page, the database lost and back, the takeover (docs/ha.md).

controller/service/standby.py and controller/web/standby.py, the whole service in this process
on simulated tables, on a real PostgreSQL server; the standby reaches it through a TCP proxy
(tests/support/ha/tcp_proxy.py) that the test cuts, as a network or a database failover would.
What systemd hears comes through a real ``$NOTIFY_SOCKET``.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from support.ha.tcp_proxy import LinkProxy
from support.runtime.daemon import daemon
from support.runtime.floor import within
from support.runtime.standby_rig import NotifySocket, fence, get, node_config

from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import verify as verify_database
from controller.service.wiring import serve

if TYPE_CHECKING:
    import pytest

    from controller.runtime.view import Runtime


def through(link: LinkProxy, url: str) -> str:
    """``url`` with its host and port replaced by the proxy's."""
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    return parts._replace(netloc=f"{user}127.0.0.1:{link.port}").geturl()


async def test_a_standby_reports_itself_and_rides_out_the_database_lost_until_it_leads(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = node_config(tmp_path, postgres_url, "pit-a", lease_s=3)
    with LinkProxy("127.0.0.1", urlsplit(postgres_url).port or 5432) as link:
        second = node_config(tmp_path, through(link, postgres_url), "pit-b", lease_s=1)
        page = f"http://{second.web.host}:{second.web.port}/"
        systemd = NotifySocket(Path(tempfile.mkdtemp(dir="/tmp")))
        monkeypatch.setenv("NOTIFY_SOCKET", systemd.address)
        stop = asyncio.Event()
        led: asyncio.Future[Runtime] = asyncio.get_running_loop().create_future()
        async with daemon(first) as running:
            await running.until_more(10, "node pit-a's rounds")
            standby = asyncio.create_task(
                serve(second, stop, started=lambda runtime, _url: led.set_result(runtime))
            )
            try:
                await systemd.until("STATUS=standby: node 'pit-a' holds the sequencer (epoch 1)")
                status, body = await get(page + "healthz")
                assert status == 503
                assert json.loads(body)["reason"].startswith("standby: node 'pit-a' holds")
                status, text = await get(page + "metrics")
                assert status == 200
                for sample in ("jackpotd_standby 1.0", "jackpotd_sequencer_epoch 1.0"):
                    assert sample in text
                # The database lost to the standby: it stays up and says why, writing nothing.
                link.cut("reset")
                await systemd.until("STATUS=standby: postgresql://")
                status, body = await get(page + "leader")
                assert status == 503
                assert "cannot" in json.loads(body)["reason"]
                assert not standby.done()
                link.heal()
                await systemd.until("STATUS=standby: node 'pit-a' holds the sequencer (epoch 1)")
                assert fence(postgres_url) == (1, "pit-a")
                await running.until_more(5, "node pit-a going on")
            except BaseException:
                stop.set()
                raise
        # pit-a stopped cleanly: its lease ended, and the standby takes over in process.
        try:
            runtime = await within(asyncio.shield(led), "pit-b to take over")
            assert runtime.journal.epoch == 2
            assert fence(postgres_url) == (2, "pit-b")
            status, text = await get(page + "metrics")
            assert "jackpotd_standby 0.0" in text
            assert "jackpotd_sequencer_epoch 2.0" in text
        finally:
            stop.set()
            await within(standby, "pit-b to stop")
    leader = standby.result()
    assert leader is not None
    leader.journal.close()
    assert verify_database(DatabaseUrl(postgres_url)).ok
