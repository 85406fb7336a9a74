"""The sequencer journals a step of the wall clock once, as a fault with its size (docs/faults.md).

A real journal file; the wall and monotonic clocks are injected (tests/support/fake_clocks.py), so
that a step is someone setting the system clock while the controller runs.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.journal.journal_rig import POOL, TABLE

from controller.backoff import Backoff
from controller.events import BetSensed, FaultRecorded, decode_event
from controller.ledger_journal.sqlite import verify
from controller.outputs import ControllerUpdate
from controller.ports import ControllerUnavailableError
from controller.runtime.broadcast import Broadcast
from controller.runtime.clock_watch import ClockWatch, Direction
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from support.fake_clocks import Clocks

    from controller.ledger_journal.sqlite import Journal


def sequencer_on(
    table_journal: Journal, clocks: Clocks, broadcast: Broadcast | None = None
) -> Sequencer:
    sequencer = Sequencer(table_journal, broadcast or Broadcast(), clock=clocks.iso)
    sequencer.clock_watch = ClockWatch(wall=clocks.wall, monotonic=clocks.monotonic)
    return sequencer


def bet(seq: int, clocks: Clocks) -> BetSensed:
    """A chip on seat 1's spot, stamped by the (fake) wall clock as a driver stamps it."""
    return BetSensed(f"{TABLE}/s/{seq}", clocks.iso(), TABLE, "s", seq, 1, "progressive", True)


def clock_faults(table_journal: Journal) -> list[tuple[int, FaultRecorded]]:
    faults = []
    for row in table_journal.rows():
        event = decode_event(row["event"])
        if isinstance(event, FaultRecorded) and event.source == "clock":
            faults.append((int(row["seq"]), event))
    return faults


class Step(NamedTuple):
    """A step of the wall clock, and what the journaled fault says of it."""

    seconds: float
    direction: Direction
    words: str
    at: str
    """The clock as it reads after the step: the fault's time."""


@pytest.mark.parametrize(
    "step",
    [
        Step(-3600.0, Direction.BACKWARD, "back 3600.000 s", "2026-11-29T14:00:01.000Z"),
        Step(600.0, Direction.FORWARD, "forward 600.000 s", "2026-11-29T15:10:01.000Z"),
    ],
)
async def test_a_clock_step_is_journaled_once_as_a_fault_with_its_size(
    table_journal: Journal, clocks: Clocks, step: Step
) -> None:
    sequencer = sequencer_on(table_journal, clocks)
    runner = asyncio.create_task(sequencer.run())
    first = await sequencer.submit(bet(1, clocks))
    clocks.elapse(1)
    clocks.step(step.seconds)
    after_step = await sequencer.submit(bet(2, clocks))
    for seq in range(3, 6):
        clocks.elapse(1)
        await sequencer.submit(bet(seq, clocks))
    runner.cancel()

    ((seq, fault),) = clock_faults(table_journal)
    assert (fault.source, fault.reason) == ("clock", "clock-step")
    assert step.words in fault.detail
    assert fault.at == step.at
    # Journaled ahead of the first batch taken after the step, and applied (no meter moved).
    assert first.seq < seq == after_step.seq - 1
    assert table_journal.state.pools[POOL].meter == 1_000_000
    expected = {Direction.BACKWARD: 0, Direction.FORWARD: 0} | {step.direction: 1}
    assert sequencer.clock_watch.steps == expected
    metrics = ControllerMetrics(table_journal, sequencer, None)
    families = text_string_to_metric_families(metrics.exposition("")[0].decode())
    (steps,) = [family for family in families if family.name == "jackpotd_clock_steps"]
    counted = {sample.labels["direction"]: sample.value for sample in steps.samples}
    assert counted == {str(way): float(count) for way, count in expected.items()}


async def test_no_step_no_fault(table_journal: Journal, clocks: Clocks) -> None:
    sequencer = sequencer_on(table_journal, clocks)
    runner = asyncio.create_task(sequencer.run())
    for seq in range(1, 6):
        clocks.elapse(3600)
        await sequencer.submit(bet(seq, clocks))
    runner.cancel()
    assert clock_faults(table_journal) == []


async def _recovered(updates: AsyncIterator[object]) -> None:
    async for update in updates:
        if isinstance(update, ControllerUpdate) and update.online:
            return


async def test_a_step_while_failing_closed_is_journaled_once_the_journal_is_back(
    table_journal: Journal, clocks: Clocks, tmp_path: Path
) -> None:
    broadcast = Broadcast()
    sequencer = sequencer_on(table_journal, clocks, broadcast)
    runner = asyncio.create_task(sequencer.run())
    await sequencer.submit(bet(1, clocks))
    table_journal.db.execute("PRAGMA busy_timeout=20")
    blocker = sqlite3.connect(tmp_path / "journal.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    with pytest.raises(ControllerUnavailableError):
        await sequencer.submit(bet(2, clocks))
    clocks.elapse(1)
    clocks.step(-120)
    updates = broadcast.subscribe(replay=False)
    blocker.execute("ROLLBACK")
    blocker.close()
    recovery = asyncio.create_task(sequencer.recover(Backoff(initial=0.01, cap=0.05, jitter=False)))
    async with asyncio.timeout(5):
        await _recovered(aiter(updates))
    receipt = await sequencer.submit(bet(2, clocks))
    recovery.cancel()
    runner.cancel()
    ((seq, fault),) = clock_faults(table_journal)
    assert "back 120.000 s" in fault.detail
    assert seq == receipt.seq - 1
    table_journal.close()
    assert verify(tmp_path / "journal.db").ok
