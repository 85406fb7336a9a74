"""The running controller's checkpoints: every N rows, after T seconds, and at a clean shutdown.

The sequencer journals each signed checkpoint in its own transaction with its snapshot, and
publishes it (the MQTT sink retains it, tests/drivers/mqtt/test_mqtt_checkpoint.py) and the
metrics show it. A real journal file throughout; waits are bounded, on the updates published.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from datetime import datetime
from typing import TYPE_CHECKING

from support.journal.journal_rig import rows_of, wager

from controller.ledger_journal.sqlite import verify
from controller.outputs import CheckpointUpdate, ControllerUpdate
from controller.runtime.broadcast import Broadcast
from controller.runtime.checkpointing import CheckpointSchedule
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from controller.ledger_journal.sqlite import Journal
    from controller.runtime.broadcast import Subscription
    from controller.security.controller_key import ControllerKey

WAIT_S = 10.0


def checkpoint_rows(table_journal: Journal) -> list[int]:
    return [int(row["seq"]) for row in rows_of(table_journal.path) if row["kind"] == "checkpoint"]


async def next_checkpoint(updates: Subscription) -> CheckpointUpdate:
    async with asyncio.timeout(WAIT_S):
        async for update in updates:
            if isinstance(update, CheckpointUpdate):
                return update
    raise AssertionError("the updates ended")  # pragma: no cover - a subscription never ends


@contextlib.asynccontextmanager
async def checkpointing(
    table_journal: Journal, key: ControllerKey, *, every_rows: int = 10_000, every_s: float = 3600
) -> AsyncIterator[tuple[Sequencer, Subscription]]:
    """A running sequencer with a checkpoint schedule, and a subscription to its updates."""
    broadcast = Broadcast()
    updates = broadcast.subscribe()
    sequencer = Sequencer(table_journal, broadcast)
    sequencer.checkpoints = CheckpointSchedule(key, "c1", every_rows=every_rows, every_s=every_s)
    runner = asyncio.create_task(sequencer.run())
    try:
        yield sequencer, updates
    finally:
        runner.cancel()


async def test_the_sequencer_checkpoints_every_so_many_rows(
    table_journal: Journal, key: ControllerKey
) -> None:
    async with checkpointing(table_journal, key, every_rows=10) as (sequencer, updates):
        for number in range(25):
            await sequencer.submit(wager(f"w{number}", f"r{number}", 1))
        first, second = await next_checkpoint(updates), await next_checkpoint(updates)
    # Rows 1-2 opened the pool and the table; the wagers follow, one commit each.
    assert checkpoint_rows(table_journal) == [11, 22]
    assert (first.seq, first.checkpoint.head_seq) == (11, 10)
    assert (second.seq, second.checkpoint.head_seq) == (22, 21)
    assert first.checkpoint.head_hash == rows_of(table_journal.path)[9]["hash"]
    assert first.checkpoint.key_id == key.key_id
    report = verify(table_journal.path, keys=[key.public_key])
    assert report.ok, report.problems
    assert [summary.row for summary in report.checkpoints] == [11, 22]
    assert sequencer.checkpoints is not None
    assert sequencer.checkpoints.last is not None
    assert sequencer.checkpoints.last.row == 22


async def test_the_sequencer_checkpoints_after_the_interval_when_no_event_comes(
    table_journal: Journal, key: ControllerKey
) -> None:
    async with checkpointing(table_journal, key, every_s=0.05) as (sequencer, updates):
        receipt = await sequencer.submit(wager("w1", "r1", 1))
        update = await next_checkpoint(updates)  # no other event comes: the interval brings it
        assert (update.seq, update.checkpoint.head_seq) == (receipt.seq + 1, receipt.seq)
        # Nothing new since: no checkpoint is due, however long the controller idles.
        schedule = sequencer.checkpoints
        assert schedule is not None
        assert schedule.seconds_left(table_journal.head[0]) is None
        assert not schedule.due(table_journal.head[0])
    assert checkpoint_rows(table_journal) == [receipt.seq + 1]


async def test_a_clean_shutdown_checkpoints_the_last_rows(
    table_journal: Journal, key: ControllerKey
) -> None:
    async with checkpointing(table_journal, key) as (sequencer, updates):
        for number in range(3):
            await sequencer.submit(wager(f"w{number}", f"r{number}", 1))
        await sequencer.close()
    assert checkpoint_rows(table_journal) == [6]
    seen = []
    while True:
        update = await asyncio.wait_for(anext(updates), WAIT_S)
        seen.append(update)
        if isinstance(update, ControllerUpdate) and not update.online:
            break
    kinds = [type(update).__name__ for update in seen[-2:]]
    assert kinds == ["CheckpointUpdate", "ControllerUpdate"]  # signed, then offline


async def test_the_metrics_show_the_last_checkpoint(
    table_journal: Journal, key: ControllerKey
) -> None:
    sequencer = Sequencer(table_journal, Broadcast())
    metrics = ControllerMetrics(table_journal, sequencer, None)
    assert "jackpotd_checkpoint_seq 0.0" in metrics.exposition("")[0].decode()
    sequencer.checkpoints = CheckpointSchedule(key, "c1", every_rows=10_000, every_s=3600)
    runner = asyncio.create_task(sequencer.run())
    await sequencer.submit(wager("w1", "r1", 1))
    await sequencer.close()
    runner.cancel()
    text = metrics.exposition("")[0].decode()
    assert "jackpotd_checkpoint_seq 3.0" in text
    last = sequencer.checkpoints.last
    assert last is not None
    (when,) = re.findall(r"^jackpotd_checkpoint_timestamp_seconds (\S+)$", text, re.MULTILINE)
    assert float(when) == sequencer.checkpoints.last_timestamp
    assert float(when) == datetime.fromisoformat(last.event.at).timestamp()
