"""The service on a shared PostgreSQL journal: it sequences as its ``[controller] node``.

controller/service/wiring.py opens the journal fenced (controller/journal/sequencing.py) with
the configuration's node and lease, and its sequencer with its ``commit_hang_s``; docs/ha.md,
"The fenced sequencer". The whole service runs in this process on simulated tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest
from support.daemon import daemon
from support.mosquitto import free_port

from controller.config.load import load_config
from controller.journal.errors import FencedError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres import checks

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


async def test_the_service_sequences_as_its_node_keeps_others_out_and_hands_over_at_stop(
    tmp_path: Path, postgres_url: str
) -> None:
    first = node_config(tmp_path, postgres_url, "pit-a", lease_s=5)
    second = node_config(tmp_path, postgres_url, "pit-b", lease_s=1)
    async with daemon(first) as running:
        await running.until_more(20, "node pit-a's rounds")
        assert running.runtime.journal.epoch == 1
        assert running.runtime.sequencer.commit_hang_s == 20
        assert fence(postgres_url) == (1, "pit-a")
        # pit-a's lease has more left than pit-b's whole lease: refused at once, nothing written.
        with pytest.raises(FencedError, match="node 'pit-a' holds the sequencer"):
            async with daemon(second):
                pass
        head = running.runtime.journal.head[0]
        await running.until_more(5, "node pit-a going on")
        assert running.runtime.journal.head[0] > head
    async with daemon(second) as running:  # a clean stop ended pit-a's lease: no wait
        assert running.runtime.journal.epoch == 2
        await running.until_more(20, "node pit-b's rounds")
        assert fence(postgres_url) == (2, "pit-b")
    assert checks.verify(DatabaseUrl(postgres_url)).ok
