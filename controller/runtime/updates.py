"""What a committed event tells the sinks: the updates its effects make (docs/mqtt.md).

Pure: from a receipt's effects and the ledger's state after it, the meter, hit, table and
refusal updates the sequencer publishes once the ``COMMIT`` has returned, each stamped with
the row's ``seq`` and the journal's ``epoch`` (followers order by both: docs/ha.md, "Brokers
and followers"); and, when the sequencer starts, the states the journal stands at
(:func:`standing_updates`).
"""

from __future__ import annotations

from math import floor
from typing import TYPE_CHECKING, Any

from controller.effects import Balances, PayoutMade, TableStatus, WagerRefused
from controller.ledger.pool_life import SUSPENDED
from controller.outputs import (
    MeterUpdate,
    PoolUpdate,
    TableUpdate,
    hit_announcement,
    wager_refusal,
)
from controller.pool_events import PoolSuspended
from controller.wide_effects import WideAreaStatus

if TYPE_CHECKING:
    from controller.ledger.pool import Pool
    from controller.ledger.state import LedgerState
    from controller.ledger.wide_area.sites import SiteChain
    from controller.outputs import AnyUpdate
    from controller.ports import Receipt


def updates_of(
    receipt: Receipt, at: str, state: LedgerState, epoch: int, event: object = None
) -> list[AnyUpdate]:
    """The updates of one committed event; a pool's later meter supersedes its earlier ones.

    A pool suspended moves no money, so its event has no balances: its meter update (now with
    its status) is made from the event itself, for the signs and displays to show it.
    """
    seq = receipt.seq
    updates: list[AnyUpdate] = []
    if isinstance(event, PoolSuspended) and receipt.applied and event.pool_id in state.pools:
        updates.append(meter_update(state.pools[event.pool_id], at, seq, epoch, state))
    for effect in receipt.effects:
        if isinstance(effect, Balances):
            updates.append(meter_update(state.pools[effect.pool_id], at, seq, epoch, state))
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
            updates += wide_area_updates(state.chain, effect, at, seq, epoch)
    latest: dict[str, int] = {}
    for index, update in enumerate(updates):
        if isinstance(update, MeterUpdate):
            latest[update.pool_id] = index
    return [
        update
        for index, update in enumerate(updates)
        if not isinstance(update, MeterUpdate) or latest[update.pool_id] == index
    ]


def standing_updates(state: LedgerState, at: str, seq: int, epoch: int) -> list[AnyUpdate]:
    """The states the journal stands at, for the sinks when the sequencer starts.

    Every local pool's meters, and whether each wide-area pool's wagers are open and why
    (docs/wide-area.md): a sign that a controller's restart left blank, or a property restarted
    while its link to central is closed, shows the truth at once rather than at the next
    change. Stamped with the journal's head row: no row changed them since, so a follower that
    saw a later row of the same epoch keeps it, and one that did not applies these.
    """
    updates: list[AnyUpdate] = [
        meter_update(pool, at, seq, epoch, state) for _, pool in sorted(state.pools.items())
    ]
    if state.chain is not None:
        chain = state.chain  # its reason is empty while open (the ledger keeps it so)
        status = WideAreaStatus(chain.open, chain.reason)
        updates += wide_area_updates(chain, status, at, seq, epoch)
    return updates


def meter_update(
    pool: Pool, at: str, seq: int, epoch: int, state: LedgerState | None = None
) -> MeterUpdate:
    """A pool's meters as they stand after row ``seq``, with its life if it is not in play.

    The fields of a pool's life are set only when there is something to say, so that a pool
    in play's update is the one it always was (docs/signs.md, "A pool's life").
    """
    life = pool_life(pool, state)
    return MeterUpdate(
        at,
        seq,
        pool.pool_id,
        pool.meter_cents,
        pool.reserve_cents,
        pool.overflow_cents,
        pool.terms.seed_cents,
        epoch=epoch,
        **life,
    )


def pool_life(pool: Pool, state: LedgerState | None) -> dict[str, Any]:
    """What a sign or display shows of a pool's life: only the fields that are set.

    Its status and reason if it is out of play; what transfers brought onto it, in whole
    cents, and from which pools, while those stand suspended as transferred to it; a mystery
    level's ceiling (its "must hit by", never its trigger).
    """
    life: dict[str, Any] = {}
    if pool.terms.must_hit_by_cents is not None:
        life["must_hit_by_cents"] = pool.terms.must_hit_by_cents
    if pool.status:
        life["status"] = pool.status
        life["status_reason"] = pool.status_reason
    if floor(pool.transferred_in):
        life["transferred_in_cents"] = floor(pool.transferred_in)
        prefix = f"transferred to {pool.pool_id}:"
        sources = [
            other.pool_id
            for other in (state.pools.values() if state is not None else ())
            if other.status == SUSPENDED and other.status_reason.startswith(prefix)
        ]
        if sources:
            life["transferred_from"] = ", ".join(sorted(sources))
    return life


def wide_area_updates(
    chain: SiteChain, status: WideAreaStatus, at: str, seq: int, epoch: int
) -> list[AnyUpdate]:
    """Each wide-area pool open or closed with the property's link, and why."""
    return [
        PoolUpdate(at, seq, pool_id, status.open, status.reason, epoch=epoch)
        for pool_id in sorted(chain.pools)
    ]
