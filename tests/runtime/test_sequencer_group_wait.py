"""Group commit's wait for company: a batch's oldest event waits a moment for others.

controller/runtime/sequencer.py, "A batch waits a moment for company": events that come one
after another within ``group_wait_s`` of the first share its commit; a batch that fills up
(``batch_max``) is committed at once, without waiting the rest out; a lone event is committed
once its wait has passed. What is written is what appending the events one at a time writes
(tests/journal/test_journal_batches.py). A real journal throughout, in memory (the SQLite
journal's code without a file: docs/journal.md, "Backends"); waits are bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest

from controller.events import BetSensed, PoolOpened, TableConfigured
from controller.journal.location import MemoryLocation
from controller.journal.memory import database as memory
from controller.ledger_journal.memory import MemoryJournal
from controller.runtime.broadcast import Broadcast
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator


AT = "2026-11-29T15:00:00Z"
BOUND_S = 10.0
"""The longest any step here may take: far under the hour-long waits the tests configure."""
AN_HOUR = 3600.0


@pytest.fixture
def memory_table() -> Iterator[MemoryJournal]:
    paytable = (resources.files("controller") / "paytables" / "progressive-1.toml").read_text()
    location = MemoryLocation(f"group-wait-{uuid.uuid4().hex}")
    journal = MemoryJournal(location)
    journal.append_many(
        [
            PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
            TableConfigured(
                "table", AT, "T1", {"progressive-1": paytable}, progressive="progressive-1",
                pool_id="P1",
            ),
        ]
    )  # fmt: skip
    yield journal
    journal.close()
    memory.discard(location)


def bet(seat: int) -> BetSensed:
    return BetSensed(f"T1/s/{seat}", AT, "T1", "s", seat, seat, "progressive", True)


@contextlib.asynccontextmanager
async def running(sequencer: Sequencer) -> AsyncIterator[Sequencer]:
    runner = asyncio.create_task(sequencer.run())
    try:
        yield sequencer
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner


async def gathering(sequencer: Sequencer) -> None:
    """Until the sequencer has taken the first event and waits for company (bounded)."""
    async with asyncio.timeout(BOUND_S):
        while not sequencer.gathering:
            await asyncio.sleep(0)


async def test_group_commit_events_coming_one_after_another_share_the_first_ones_commit(
    memory_table: MemoryJournal,
) -> None:
    sequencer = Sequencer(memory_table, Broadcast(), group_wait_s=AN_HOUR, batch_max=3)
    async with running(sequencer):
        first = sequencer.enqueue(bet(1))
        await gathering(sequencer)
        second = sequencer.enqueue(bet(2))
        await asyncio.sleep(0)  # a turn of the loop between arrivals, as from a broker
        assert sequencer.gathering  # two of three: still waiting
        third = sequencer.enqueue(bet(3))  # the batch is full: committed without the hour
        async with asyncio.timeout(BOUND_S):
            receipts = await asyncio.gather(first, second, third)
    assert [receipt.seq for receipt in receipts] == [3, 4, 5]
    assert sequencer.stats.commits == 1


async def test_group_commit_a_lone_event_is_committed_once_its_wait_has_passed(
    memory_table: MemoryJournal,
) -> None:
    sequencer = Sequencer(memory_table, Broadcast(), group_wait_s=0.01)
    async with running(sequencer):
        async with asyncio.timeout(BOUND_S):
            receipt = await sequencer.submit(bet(1))
    assert receipt.seq == 3
    assert sequencer.stats.commits == 1
    assert not sequencer.gathering


async def test_group_commit_without_a_wait_commits_what_is_queued_at_once(
    memory_table: MemoryJournal,
) -> None:
    sequencer = Sequencer(memory_table, Broadcast(), group_wait_s=0.0)
    async with running(sequencer):
        async with asyncio.timeout(BOUND_S):
            first = await sequencer.submit(bet(1))
            second = await sequencer.submit(bet(2))
    assert (first.seq, second.seq) == (3, 4)
    assert sequencer.stats.commits == 2


async def test_group_commit_a_stop_while_a_batch_waits_journals_its_events_in_arrival_order(
    memory_table: MemoryJournal,
) -> None:
    """The shutdown journals what is queued; the batch waiting for company goes first.

    The first event is the waiting batch's (the sequencer has taken it from the queue), the
    second is still queued when the service stops (controller/service/wiring.py closes the
    sequencer with its run still going): both are journaled once, in the order they came.
    """
    sequencer = Sequencer(memory_table, Broadcast(), group_wait_s=AN_HOUR, batch_max=3)
    async with running(sequencer):
        first = sequencer.enqueue(bet(1))
        await gathering(sequencer)
        second = sequencer.enqueue(bet(2))
        async with asyncio.timeout(BOUND_S):
            await sequencer.close()
            receipts = await asyncio.gather(first, second)
    assert [receipt.seq for receipt in receipts] == [3, 4]
    assert not receipts[0].duplicate
    assert not receipts[1].duplicate
    assert [row["event_id"] for row in memory_table.rows()][2:] == ["T1/s/1", "T1/s/2"]
