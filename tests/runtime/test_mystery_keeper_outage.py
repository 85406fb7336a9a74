"""A mystery level's keeper out of reach: the controller closes, and asks it first on the way back.

docs/faults.md; controller/runtime/recovery.py. The sequencer asks the keeper after every event
that feeds a mystery level, before it takes another. A keeper out of reach (the signer
restarting) fails the controller closed; the journal's recovery probe then asks the keeper
the question it owes, the journal's lock held, before the tables reopen: while the keeper stays
out of reach the probe's attempt closes the controller again and no table's event is taken, so
no wager can carry the level past its trigger unasked. A keeper that refuses (or raises the
alarm) is a person's to look at: the probe does not reopen the controller at all
(tests/runtime/test_mystery_failover.py). A real journal and sequencer; the keeper is the
in-process one behind a switch that makes it unreachable, as a signer's socket would be.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import pytest
from support.journal.mystery_journal import GRAND, TABLE, WAGER_CENTS, mystery_journal
from support.runtime.floor import within

from controller.backoff import Backoff
from controller.clock import utc_now
from controller.events import WagerLocked
from controller.mystery.keeper import LocalKeeper, Query, Verdict
from controller.outputs import ControllerUpdate
from controller.ports import ControllerUnavailableError
from controller.runtime.broadcast import Broadcast, Subscription
from controller.runtime.mystery_watch import MysteryWatch
from controller.runtime.sequencer import Sequencer
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from pathlib import Path

    from support.journal.mystery_journal import MysteryJournal

    from controller.mystery.core import Meter


class UnreachableKeeper(LocalKeeper):
    """The in-process keeper, which answers ``OSError`` while ``down`` (a socket refused)."""

    def __init__(self, key: ControllerKey) -> None:
        super().__init__(key)
        self.down = False
        self.asked: list[int] = []
        """The meters (whole cents) it answered, in order."""
        self.answered = asyncio.Event()
        """Set at each answer (a test clears it to wait for the next)."""

    def check(self, query: Query, since: Meter | None) -> Verdict:
        """The keeper's verdict, or the socket refused while ``down``."""
        if self.down:
            raise ConnectionRefusedError("the signer's socket refused the connection")
        verdict = super().check(query, since)
        self.asked.append(query.meter.cents)
        self.answered.set()
        return verdict


async def offline(subscription: Subscription) -> None:
    """The next time the controller says it went offline."""
    async for update in subscription:
        if isinstance(update, ControllerUpdate) and not update.online:
            return


async def online(subscription: Subscription) -> None:
    """The next time the controller says it is online again."""
    async for update in subscription:
        if isinstance(update, ControllerUpdate) and update.online:
            return


def wager(floor_: MysteryJournal, number: int) -> WagerLocked:
    round_id = f"o{number}"
    locked = WagerLocked(f"{round_id}-1", utc_now(), TABLE, round_id, 1, "progressive", WAGER_CENTS)
    return floor_.site.sign(locked, "sup1")


@pytest.fixture
def floor_(tmp_path: Path) -> MysteryJournal:
    return mystery_journal(tmp_path / "journal.db")


async def test_a_keeper_out_of_reach_is_asked_the_question_it_owes_before_any_table_reopens(
    floor_: MysteryJournal,
) -> None:
    key = ControllerKey.generate()
    keeper = UnreachableKeeper(key)
    broadcast = Broadcast()
    sequencer = Sequencer(floor_.journal, broadcast)
    sequencer.mystery = MysteryWatch(keeper, "c1", key.key_id, utc_now)
    runner = asyncio.create_task(sequencer.run())
    recovering: asyncio.Task[None] | None = None
    subscription = broadcast.subscribe(replay=False)
    try:
        await within(sequencer.submit(wager(floor_, 1)), "the first wager")  # drawn, then asked
        await within(keeper.answered.wait(), "the keeper asked about the first wager")
        assert floor_.journal.state.pools[GRAND].draw is not None
        keeper.down = True
        owed = await within(sequencer.submit(wager(floor_, 2)), "a wager while the keeper is down")
        assert owed.applied
        await within(offline(subscription), "the controller failing closed")
        assert "the mystery levels' keeper" in (sequencer.failed_reason or "")
        assert not sequencer.until_restart  # out of reach: the probe may reopen it
        with pytest.raises(ControllerUnavailableError):
            await sequencer.submit(wager(floor_, 3))
        meter = floor_.journal.state.pools[GRAND].meter
        recovering = asyncio.create_task(sequencer.recover(Backoff(initial=0.01, cap=0.05)))
        await within(offline(subscription), "a probe that found the keeper still down")
        assert floor_.journal.state.pools[GRAND].meter == meter  # nothing taken meanwhile
        keeper.down = False
        await within(online(subscription), "the tables reopened")
        assert keeper.asked[-1] == int(meter)  # the question owed, asked before reopening
        assert sequencer.failed_reason is None
        assert (await within(sequencer.submit(wager(floor_, 4)), "a wager after")).applied
    finally:
        # Each task ends before the journal closes: a commit still in the commit thread
        # keeps its task until it ends, and the connection must not close under it.
        for task in (recovering, runner):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await within(task, "the sequencer's tasks ending")
        broadcast.unsubscribe(subscription)
        floor_.journal.close()
