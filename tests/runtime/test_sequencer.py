"""The sequencer: one order, group commit, updates only after commit, failing closed.

docs/architecture.md, "One event's way through" and "Failing closed".

A real journal file throughout. The journal is made unwritable the way a disk or a rogue
process would: a second connection holds an exclusive lock.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest

from controller.backoff import Backoff
from controller.events import BetSensed, BetsLocked, PoolOpened, TableConfigured
from controller.journal.sqlite.transaction import Transaction
from controller.ledger_journal.sqlite import Journal
from controller.outputs import ControllerUpdate, MeterUpdate, TableUpdate
from controller.ports import ControllerUnavailableError
from controller.runtime.broadcast import Broadcast
from controller.runtime.liveness import Liveness
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, AsyncIterator
    from pathlib import Path

    from controller.ledger.state import LedgerState
    from controller.outputs import AnyUpdate

AT = "2026-11-29T15:00:00Z"


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


@pytest.fixture
def one_table(tmp_path: Path) -> Journal:
    journal = Journal(tmp_path / "journal.db")
    journal.append_many(
        [
            PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
            TableConfigured(
                "table",
                AT,
                "T1",
                {"progressive-1": paytable("progressive-1")},
                progressive="progressive-1",
                pool_id="P1",
            ),
        ]
    )
    return journal


def bets(count: int) -> list[BetSensed | BetsLocked]:
    events: list[BetSensed | BetsLocked] = [
        BetSensed(f"T1/s/{seat}", AT, "T1", "s", seat, seat, "progressive", True)
        for seat in range(1, count + 1)
    ]
    events.append(BetsLocked("T1/c/1", AT, "T1", "c", 1, "R1"))
    return events


async def test_architecture_events_are_journaled_in_one_order_with_group_commit(
    one_table: Journal,
) -> None:
    broadcast = Broadcast()
    updates = broadcast.subscribe(replay=False)
    sequencer = Sequencer(one_table, broadcast)
    runner = asyncio.create_task(sequencer.run())
    receipts = await asyncio.gather(*(sequencer.submit(event) for event in bets(6)))
    runner.cancel()
    assert [receipt.seq for receipt in receipts] == list(range(3, 10))
    assert sequencer.stats.commits < len(receipts)  # batched
    assert one_table.state.pools["P1"].meter == 1_000_000 + 6 * 28
    seen = [update async for update in _drain(updates)]
    meters = [update for update in seen if isinstance(update, MeterUpdate)]
    assert meters[-1].meter_cents == 1_000_168
    assert all(update.seq <= receipts[-1].seq for update in meters)


async def test_architecture_enqueued_events_are_journaled_in_the_order_queued(
    one_table: Journal,
) -> None:
    """``enqueue`` queues at once (no task): the futures resolve in queue order, one commit.

    docs/architecture.md, "One event's way through" and "Failing closed".
    """
    sequencer = Sequencer(one_table, Broadcast())
    futures = [sequencer.enqueue(event) for event in bets(4)]
    assert not any(future.done() for future in futures)  # nothing is journaled before run()
    runner = asyncio.create_task(sequencer.run())
    receipts = await asyncio.gather(*futures)
    runner.cancel()
    assert [receipt.event_id for receipt in receipts] == [event.event_id for event in bets(4)]
    assert [receipt.seq for receipt in receipts] == list(range(3, 8))
    assert sequencer.stats.commits == 1


async def test_architecture_enqueue_while_failing_closed_gives_a_refused_receipt(
    one_table: Journal, tmp_path: Path
) -> None:
    sequencer = Sequencer(one_table, Broadcast())
    runner = asyncio.create_task(sequencer.run())
    one_table.db.execute("PRAGMA busy_timeout=20")
    blocker = sqlite3.connect(tmp_path / "journal.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    first = sequencer.enqueue(bets(1)[0])
    with pytest.raises(ControllerUnavailableError):
        await first
    refused = sequencer.enqueue(bets(2)[1])
    assert refused.done()  # refused at once: the source stops reading there
    assert isinstance(refused.exception(), ControllerUnavailableError)
    blocker.execute("ROLLBACK")
    blocker.close()
    runner.cancel()
    assert one_table.state.pools["P1"].meter == 1_000_000


async def _reopened(subscription: AsyncIterable[AnyUpdate]) -> None:
    """The next time the controller says it is online."""
    async for update in subscription:
        if isinstance(update, ControllerUpdate) and update.online:
            return


async def _drain(subscription: AsyncIterable[AnyUpdate]) -> AsyncIterator[AnyUpdate]:
    iterator = aiter(subscription)
    while True:
        try:
            yield await asyncio.wait_for(anext(iterator), 0.05)
        except TimeoutError:
            return


async def test_architecture_a_starting_sequencer_tells_the_sinks_where_the_journal_stands(
    one_table: Journal,
) -> None:
    """A sign a restart left blank shows the meters at once, not at the next wager.

    controller/runtime/updates.py, ``standing_updates``: stamped with the journal's head row.
    """
    broadcast = Broadcast()
    updates = broadcast.subscribe(replay=False)
    runner = asyncio.create_task(Sequencer(one_table, broadcast).run())
    started, meter = [update async for update in _drain(updates)]
    runner.cancel()
    assert isinstance(started, ControllerUpdate)
    assert started.online
    assert isinstance(meter, MeterUpdate)
    assert (meter.pool_id, meter.meter_cents, meter.seed_cents) == ("P1", 1_000_000, 1_000_000)
    assert (meter.epoch, meter.seq) == (one_table.epoch, one_table.head[0])


async def test_a_duplicate_event_is_acknowledged_and_not_republished(one_table: Journal) -> None:
    broadcast = Broadcast()
    sequencer = Sequencer(one_table, broadcast)
    runner = asyncio.create_task(sequencer.run())
    event = bets(1)[0]
    await sequencer.submit(event)
    updates = broadcast.subscribe(replay=False)
    again = await sequencer.submit(event)
    runner.cancel()
    assert again.duplicate
    assert [update async for update in _drain(updates)] == []


async def test_architecture_losing_the_journal_fails_closed_then_recovers(
    one_table: Journal, tmp_path: Path
) -> None:
    broadcast = Broadcast()
    updates = broadcast.subscribe(replay=False)
    sequencer = Sequencer(one_table, broadcast)
    runner = asyncio.create_task(sequencer.run())
    await sequencer.submit(bets(1)[0])
    one_table.db.execute("PRAGMA busy_timeout=20")
    blocker = sqlite3.connect(tmp_path / "journal.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    with pytest.raises(ControllerUnavailableError):
        await sequencer.submit(BetSensed("T1/s/99", AT, "T1", "s", 99, 2, "progressive", True))
    assert not sequencer.available
    with pytest.raises(ControllerUnavailableError):  # new events are refused at once
        await sequencer.submit(BetSensed("T1/s/100", AT, "T1", "s", 100, 3, "progressive", True))
    closed = [update async for update in _drain(updates)]
    assert ControllerUpdate in {type(update) for update in closed}
    assert any(isinstance(u, TableUpdate) and u.table_id == "T1" and not u.online for u in closed)
    blocker.execute("ROLLBACK")
    blocker.close()
    recovery = asyncio.create_task(sequencer.recover(Backoff(initial=0.01, cap=0.05, jitter=False)))
    async with asyncio.timeout(5):
        await _reopened(updates)  # the controller says it is online again
    receipt = await sequencer.submit(
        BetSensed("T1/s/99", AT, "T1", "s", 99, 2, "progressive", True)
    )
    recovery.cancel()
    runner.cancel()
    assert receipt.applied


async def test_architecture_a_silent_table_is_closed_and_reopens_when_heard(
    one_table: Journal,
) -> None:
    broadcast = Broadcast()

    def t1_online() -> bool:  # read afresh: each commit changes the journal's state
        return one_table.state.table_states["T1"].online

    clock = [0.0]
    liveness = Liveness({"T1": 5.0}, monotonic=lambda: clock[0], clock=lambda: AT)
    sequencer = Sequencer(one_table, broadcast, on_heartbeat=liveness.seen)
    runner = asyncio.create_task(sequencer.run())
    watcher = asyncio.create_task(liveness.run(sequencer))
    clock[0] = 6.0
    liveness.seen("other-table")  # not ours: ignored
    liveness._changed.set()  # the monitor re-reads the clock (a real clock needs no nudge)
    async with asyncio.timeout(5):
        while t1_online():
            await asyncio.sleep(0.01)
    first = await sequencer.submit(bets(1)[0])
    assert first.applied  # the sign of life reopens the table ahead of the bet it carries
    assert t1_online()
    clock[0] = 20.0  # silent again
    liveness._changed.set()
    async with asyncio.timeout(5):
        while t1_online():
            await asyncio.sleep(0.01)
    sequencer.heartbeat("T1", "console")  # a heartbeat alone reopens it too
    async with asyncio.timeout(5):
        while not t1_online():
            await asyncio.sleep(0.01)
    watcher.cancel()
    runner.cancel()
    assert liveness.silent == set()
    kinds = [row["kind"] for row in one_table.rows()]
    assert kinds.count("table-status") == 4  # closed, reopened, closed, reopened


# --- the commit beside the loop -------------------------------------------------------------


def _bet(seq: int, seat: int) -> BetSensed:
    return BetSensed(f"T1/s/{seq}", AT, "T1", "s", seq, seat, "progressive", True, 500)


def hold_first_commit(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make the first COMMIT wait (a slow disk): set when it started, and to let it go on."""
    entered, release = threading.Event(), threading.Event()
    commit = Transaction.commit

    def slow_first_commit(transaction: Transaction[LedgerState]) -> None:
        if not release.is_set():
            entered.set()
            release.wait(10)
        commit(transaction)

    monkeypatch.setattr(Transaction, "commit", slow_first_commit)
    return entered, release


async def started(entered: threading.Event) -> None:
    assert await asyncio.get_running_loop().run_in_executor(None, entered.wait, 10)


async def test_architecture_a_commit_cancelled_midway_still_ends_and_its_state_is_kept(
    one_table: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = hold_first_commit(monkeypatch)
    sequencer = Sequencer(one_table, Broadcast())
    runner = asyncio.create_task(sequencer.run())
    submitted = asyncio.create_task(sequencer.submit(_bet(1, 2)))
    await started(entered)
    runner.cancel()  # the daemon stops while the commit thread is in its COMMIT
    await asyncio.sleep(0.1)
    assert not runner.done()  # it does not leave the connection to a running commit
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert [row["event_id"] for row in one_table.rows()][-1] == "T1/s/1"  # durable
    assert one_table.state.table_states["T1"].bets == {(2, "progressive"): 500}  # and the ledger
    submitted.cancel()


async def test_architecture_an_event_taken_just_before_shutdown_is_still_journaled(
    one_table: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = hold_first_commit(monkeypatch)
    sequencer = Sequencer(one_table, Broadcast())
    runner = asyncio.create_task(sequencer.run())
    first = asyncio.create_task(sequencer.submit(_bet(1, 2)))
    await started(entered)
    second = asyncio.create_task(sequencer.submit(_bet(2, 3)))
    await asyncio.sleep(0)  # queued behind the commit in flight
    closing = asyncio.create_task(sequencer.close())  # waits for that commit
    await asyncio.sleep(0.05)
    release.set()  # the sequencer takes the second event, then shutdown takes the lock first
    await closing
    async with asyncio.timeout(10):
        assert (await first).seq == 3
        assert (await second).seq == 4  # journaled after all, and answered
        await runner  # its run ends, without an error, once the shutdown journaled its batch
