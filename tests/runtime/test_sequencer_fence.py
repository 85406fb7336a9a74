"""A fenced sequencer steps down: it commits nothing, fails closed and ends its process.

controller/runtime/sequencer.py and controller/runtime/step_down.py on a real PostgreSQL
journal (tests/support/journal/postgres.py, tests/support/journal/stalled_postgres.py); docs/ha.md,
"The fenced sequencer". The process's end is recorded here (``halt``);
tests/runtime/test_fenced_processes.py lets real processes end.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psycopg
import pytest
from support.journal.journal_rig import pool_opened, table_configured, wager
from support.journal.stalled_postgres import LOCAL
from support.runtime.floor import within

from controller.journal.errors import FencedError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres.fence import Fence
from controller.ledger_journal.postgres import PostgresJournal
from controller.outputs import ControllerUpdate, MeterUpdate, TableUpdate
from controller.ports import ControllerUnavailableError
from controller.runtime.broadcast import Broadcast
from controller.runtime.sequencer import Sequencer
from controller.runtime.step_down import COMMIT_HUNG, FENCED

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from support.journal.stalled_postgres import StalledServer

    from controller.outputs import AnyUpdate


class Recorded(Broadcast):
    """A broadcast that keeps everything published, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.published: list[AnyUpdate] = []

    def publish(self, updates: Iterable[AnyUpdate]) -> None:
        """Keep them, then publish them."""
        updates = list(updates)
        self.published.extend(updates)
        super().publish(updates)


@dataclass
class Halts:
    """Stands for the process's end: what status, and why."""

    calls: list[tuple[int, str]] = field(default_factory=list)
    called: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, status: int, reason: str) -> None:
        """The process would end here."""
        self.calls.append((status, reason))
        self.called.set()


@dataclass
class Running:
    """A node's journal and its sequencer, running."""

    journal: PostgresJournal
    sequencer: Sequencer
    broadcast: Recorded
    halts: Halts
    task: asyncio.Task[None]


def _sequencer(journal: PostgresJournal, commit_hang_s: float | None = None) -> Running:
    broadcast, halts = Recorded(), Halts()
    sequencer = Sequencer(journal, broadcast, commit_hang_s=commit_hang_s, halt=halts)
    return Running(journal, sequencer, broadcast, halts, asyncio.create_task(sequencer.run()))


@pytest.fixture
async def node_a(database_url: DatabaseUrl) -> AsyncIterator[Running]:
    """Node ``a``'s sequencer on a journal holding a pool and a table, its lease 1 s."""
    journal = PostgresJournal(database_url, fence=Fence("a", lease_s=1))
    journal.append_many([pool_opened(), table_configured()])
    running = _sequencer(journal)
    yield running
    running.task.cancel()
    await asyncio.gather(running.task, return_exceptions=True)
    journal.close()


def _event_ids(database_url: str) -> list[str]:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute("SELECT event_id FROM journal ORDER BY seq").fetchall()
    return [str(event_id) for (event_id,) in rows]


def _closed_everything(published: list[AnyUpdate]) -> bool:
    offline = any(isinstance(u, ControllerUpdate) and not u.online for u in published)
    return offline and any(
        isinstance(u, TableUpdate) and u.table_id == "T1" and not u.online for u in published
    )


async def test_a_sequencer_taken_over_commits_nothing_fails_closed_and_exits_75(
    node_a: Running, database_url: DatabaseUrl
) -> None:
    sequencer = node_a.sequencer
    assert (await sequencer.submit(wager("a/w1", "r1", 1))).applied
    restarted = PostgresJournal(database_url, fence=Fence("a", lease_s=1))  # node a's next process
    published = len(node_a.broadcast.published)
    with pytest.raises(ControllerUnavailableError, match="took the sequencer over"):
        await sequencer.submit(wager("a/w2", "r1", 2))
    ((status, reason),) = node_a.halts.calls
    assert status == FENCED
    assert "epoch 2" in reason
    assert not sequencer.available
    refused = sequencer.enqueue(wager("a/w3", "r1", 3))
    assert isinstance(refused.exception(), ControllerUnavailableError)  # at once
    after = node_a.broadcast.published[published:]
    assert _closed_everything(after)
    assert not any(isinstance(update, MeterUpdate) for update in after)
    assert _event_ids(database_url.url) == ["open-a", "table-1", "a/w1"]
    restarted.close()


async def test_an_idle_sequencer_learns_it_was_taken_over_when_it_renews_its_lease(
    node_a: Running, database_url: DatabaseUrl
) -> None:
    restarted = PostgresJournal(database_url, fence=Fence("a", lease_s=1))
    await within(node_a.halts.called.wait(), "the renewal timer to find the fence taken")
    assert [status for status, _ in node_a.halts.calls] == [FENCED]
    assert _closed_everything(node_a.broadcast.published)
    restarted.close()


async def test_a_sequencer_renewing_its_lease_keeps_another_node_out(
    node_a: Running, database_url: DatabaseUrl
) -> None:
    # Node b waits once for the lease it finds to run out; node a's timer renews it meanwhile.
    with pytest.raises(FencedError, match="node 'a' holds the sequencer"):
        await within(
            asyncio.to_thread(PostgresJournal, database_url, fence=Fence("b", lease_s=1)), "node b"
        )
    assert (await node_a.sequencer.submit(wager("a/w1", "r1", 1))).applied
    assert node_a.halts.calls == []


async def test_a_commit_waiting_on_replication_is_never_cancelled_and_nothing_leaves_before_it(
    stalled_postgres: StalledServer,
) -> None:
    """Strict synchronous mode without a standby: the ``COMMIT`` waits, and is left waiting.

    Past ``commit_hang_s`` the sequencer fails closed and ends the process (74): no receipt,
    no meter update, the ``COMMIT`` still waiting in the server, also after the sequencer's
    task is cancelled. Once the standby is back it returns: the row is in, never acknowledged,
    and the next process acknowledges its resend as the duplicate it is.
    """
    with PostgresJournal(DatabaseUrl(f"{stalled_postgres.url}?{LOCAL}")) as setup:
        setup.append_many([pool_opened(), table_configured()])
    database_url = DatabaseUrl(stalled_postgres.url)
    node = _sequencer(PostgresJournal(database_url, fence=Fence("a", lease_s=30)), commit_hang_s=1)
    receipt = node.sequencer.enqueue(wager("a/w1", "r1", 1))
    await within(node.halts.called.wait(), "the commit-hang bound")
    assert [status for status, _ in node.halts.calls] == [COMMIT_HUNG]
    assert "jackpotd" in stalled_postgres.waiting_on_replication()
    assert not receipt.done()
    assert _closed_everything(node.broadcast.published)
    # Only the meters the journal stood at when the sequencer started (row 2), none of row 3.
    meters = [u.seq for u in node.broadcast.published if isinstance(u, MeterUpdate)]
    assert meters == [2]
    node.task.cancel()
    for _ in range(3):  # let the task take its cancellation
        await asyncio.sleep(0)
    assert not node.task.done()
    assert "jackpotd" in stalled_postgres.waiting_on_replication()  # the cancel reached no COMMIT
    stalled_postgres.release()
    with pytest.raises(asyncio.CancelledError):
        await within(node.task, "the COMMIT to return once the standby is back")
    assert not receipt.done()
    assert _event_ids(database_url.url) == ["open-a", "table-1", "a/w1"]
    node.journal.close()

    restarted = _sequencer(
        PostgresJournal(database_url, fence=Fence("a", lease_s=30)), commit_hang_s=1
    )
    again = await restarted.sequencer.submit(wager("a/w1", "r1", 1))
    assert again.duplicate
    assert again.applied
    assert (await restarted.sequencer.submit(wager("a/w2", "r1", 2))).applied
    assert any(isinstance(u, MeterUpdate) and u.seq > 3 for u in restarted.broadcast.published)
    assert restarted.journal.verify().ok
    assert restarted.halts.calls == []
    restarted.task.cancel()
    await asyncio.gather(restarted.task, return_exceptions=True)
    restarted.journal.close()
