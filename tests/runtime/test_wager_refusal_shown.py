"""A wager refused at lock is shown to its table (docs/faults.md "Wager limits").

The sequencer publishes a ``wager-refused`` update (:class:`controller.outputs.WagerRefusal`)
for every chip that did not become a wager, once the journal row that refused it has
committed: the web display's event stream carries it, and the MQTT sink can send it to the
table; ``jackpotd_wagers_refused_total`` counts it. A real journal file and the real sequencer.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

from controller.effects import WagerRefused
from controller.events import BetSensed, BetsLocked, PoolOpened, SpotLimits, TableConfigured
from controller.ledger_journal.sqlite import Journal
from controller.outputs import WagerRefusal
from controller.runtime.broadcast import Broadcast
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from pathlib import Path

    from controller.outputs import AnyUpdate

AT = "2026-11-29T15:00:00Z"


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


async def test_a_ten_billion_dollar_bonus_chip_is_refused_at_lock_and_shown_to_the_table(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "journal.db")
    tables = {name: paytable(name) for name in ("fortune-1", "progressive-1")}
    journal.append_many([
        PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal(0)),
        TableConfigured("cfg", AT, "T1", tables, bonus="fortune-1", progressive="progressive-1",
                        pool_id="P1", wager_limits={"bonus": SpotLimits(500, 10_000)}),
    ])  # fmt: skip
    broadcast = Broadcast()
    updates = broadcast.subscribe(replay=False)
    sequencer = Sequencer(journal, broadcast)
    metrics = ControllerMetrics(journal, sequencer, None)
    sequencer.on_commit.append(metrics.observe)
    runner = asyncio.create_task(sequencer.run())
    try:
        await sequencer.submit(BetSensed("T1/s/1", AT, "T1", "s", 1, 1, "bonus", True, 10**12))
        await sequencer.submit(BetSensed("T1/s/2", AT, "T1", "s", 2, 2, "bonus", True, 2_500))
        locked = await sequencer.submit(BetsLocked("T1/c/1", AT, "T1", "c", 1, "R1"))
        update: AnyUpdate = await asyncio.wait_for(_next_refusal(updates), 5)
    finally:
        runner.cancel()
        journal.close()
    assert locked.applied
    (refused,) = [effect for effect in locked.effects if isinstance(effect, WagerRefused)]
    assert update == WagerRefusal(
        AT, locked.seq, "T1", "R1", 1, "bonus", 10**12,
        "the bonus wager of $10,000,000,000.00 is above table T1's maximum of $100.00",
    )  # fmt: skip
    assert update.reason == refused.reason
    exposition = metrics.exposition("")[0].decode()
    assert 'jackpotd_wagers_refused_total{spot="bonus",table="T1"} 1.0' in exposition


async def _next_refusal(updates: object) -> AnyUpdate:
    async for update in updates:  # type: ignore[attr-defined]
        if isinstance(update, WagerRefusal):
            return update
    raise AssertionError("the updates ended")
