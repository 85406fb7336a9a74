"""What a committed event tells the sinks: the updates its effects make (docs/mqtt.md).

Pure: from a receipt's effects and the ledger's state after it, the meter, hit, table and
refusal updates the sequencer publishes once the ``COMMIT`` has returned, each stamped with
the row's ``seq`` and the journal's ``epoch`` (followers order by both: docs/ha.md, "Brokers
and followers").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.effects import Balances, PayoutMade, TableStatus, WagerRefused, WideAreaStatus
from controller.outputs import (
    MeterUpdate,
    PoolUpdate,
    TableUpdate,
    hit_announcement,
    wager_refusal,
)

if TYPE_CHECKING:
    from controller.ledger.state import LedgerState
    from controller.outputs import AnyUpdate
    from controller.ports import Receipt


def updates_of(receipt: Receipt, at: str, state: LedgerState, epoch: int) -> list[AnyUpdate]:
    """The updates of one committed event; a pool's later meter supersedes its earlier ones."""
    seq = receipt.seq
    updates: list[AnyUpdate] = []
    for effect in receipt.effects:
        if isinstance(effect, Balances):
            pool = state.pools[effect.pool_id]
            updates.append(
                MeterUpdate(
                    at,
                    seq,
                    pool.pool_id,
                    pool.meter_cents,
                    pool.reserve_cents,
                    pool.overflow_cents,
                    pool.terms.seed_cents,
                    epoch=epoch,
                )
            )
        elif isinstance(effect, PayoutMade):
            announcement = hit_announcement(effect, at, seq, epoch)
            if announcement is not None:
                updates.append(announcement)
        elif isinstance(effect, TableStatus):
            updates.append(
                TableUpdate(at, seq, effect.table_id, effect.online, effect.reason, epoch=epoch)
            )
        elif isinstance(effect, WagerRefused):
            updates.append(wager_refusal(effect, at, seq, epoch))
        elif isinstance(effect, WideAreaStatus) and state.chain is not None:
            updates += [
                PoolUpdate(at, seq, pool_id, effect.open, effect.reason, epoch=epoch)
                for pool_id in sorted(state.chain.pools)
            ]
    latest: dict[str, int] = {}
    for index, update in enumerate(updates):
        if isinstance(update, MeterUpdate):
            latest[update.pool_id] = index
    return [
        update
        for index, update in enumerate(updates)
        if not isinstance(update, MeterUpdate) or latest[update.pool_id] == index
    ]
