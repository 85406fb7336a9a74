"""Which ledger pools a pool's id names: the pool itself, or every level of a multi-level pool.

A multi-level pool is one ledger pool per level, ``POOL.LEVEL`` (controller/ledger/levels.py);
the configuration, the tables and the operators name the pool, ``POOL``. A step of a pool's
life named by the pool's own id (suspend, resume, transfer, retire: controller/ledger/
pool_life.py) applies to every level at once, in the paytable's order, so that no level of a
pool is left in play while another is out of it. A level's own id still names that level alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.ledger.state import LedgerError

if TYPE_CHECKING:
    from controller.ledger.pool import Pool
    from controller.ledger.state import LedgerState


def table_pool(pool_id: str) -> str:
    """The id a table names for a pool or one of its levels (a configured id holds no dot)."""
    return pool_id.partition(".")[0]


def level_name(pool: Pool) -> str:
    """The level's name (``grand`` of ``stax.grand``); empty for a pool of one level."""
    return pool.pool_id.partition(".")[2]


def named_pools(state: LedgerState, pool_id: str) -> list[Pool]:
    """The ledger pools ``pool_id`` names: itself, or its levels in the paytable's order.

    Refused: an id that names no pool and no level.
    """
    if pool_id in state.pools:
        return [state.pools[pool_id]]
    prefix = f"{pool_id}."
    levels = {key: pool for key, pool in state.pools.items() if key.startswith(prefix)}
    if not levels:
        raise LedgerError(f"unknown pool {pool_id!r}")
    order = next(
        (
            [f"{prefix}{level.level}" for level in rules.progressive.levels]
            for rules in state.tables.values()
            if rules.pool_id == pool_id and rules.progressive is not None
        ),
        [],
    )
    ranked = {key: place for place, key in enumerate(order)}
    keys = sorted(levels, key=lambda key: (ranked.get(key, len(order)), key))
    return [levels[key] for key in keys]
