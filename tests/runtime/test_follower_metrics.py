"""jackpotd_follower_stale_updates_dropped_total: what signs dropped as older (docs/metrics.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.runtime.daemon import daemon, metric
from support.web.display_rig import demo_floor, played

from controller.ledger_journal.sqlite import Journal
from controller.outputs import MeterUpdate
from controller.runtime.broadcast import Broadcast
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from drivers.signs.behaviour import SignBehaviour
from drivers.signs.metrics import FollowerFamilies
from drivers.signs.rules import SignRules

if TYPE_CHECKING:
    from pathlib import Path

AT = "2025-06-01T21:14:03.118Z"
FAMILY = "jackpotd_follower_stale_updates_dropped_total"
SAMPLE = FAMILY + '{follower="alpha-sign:pit-2"}'


def test_a_signs_stale_updates_are_counted_by_its_name(tmp_path: Path) -> None:
    sign = SignBehaviour(SignRules(pool_id="main"), "alpha-sign:pit-2")
    with Journal(tmp_path / "journal.db") as journal:
        metrics = ControllerMetrics(journal, Sequencer(journal, Broadcast()), None)
        metrics.collectors.append(FollowerFamilies(sign.order))
        assert metric(metrics.exposition("")[0].decode(), SAMPLE) == 0
        sign.update(MeterUpdate(AT, 10, "main", 500, 0, 0, 100, epoch=2), 0.0)
        sign.update(MeterUpdate(AT, 11, "main", 400, 0, 0, 100, epoch=1), 1.0)
        sign.update(MeterUpdate(AT, 9, "main", 450, 0, 0, 100, epoch=2), 2.0)
        assert metric(metrics.exposition("")[0].decode(), SAMPLE) == 2
    assert sign.meter_cents == 500


async def test_the_daemon_counts_each_signs_stale_updates_from_the_start(tmp_path: Path) -> None:
    config = demo_floor(tmp_path, tables=1, signs=("pit-1",), rounds=2)
    async with daemon(config) as running:
        await played(running)
        _status, text = await running.get("metrics")
        (sign,) = [line for line in text.splitlines() if line.startswith(FAMILY + "{")]
        assert sign == FAMILY + '{follower="alpha-sign:pit-1"} 0.0'
        await running.stop()
