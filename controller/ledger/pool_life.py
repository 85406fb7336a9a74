"""A pool's life after it opened: suspended, resumed, transferred, retired (docs/money.md).

Regulators allow a progressive jackpot in play to be stopped, moved or closed only on a
documented decision, never by reducing what the players funded (docs/rules.md, "A pool's
life"). So each step is an operator's signed action with its reason, checked here:

* **Suspend.** A supervisor or manager takes a pool out of play (a malfunction, a table
  removed): one signature, since it protects. Its meters stay exactly as they are; every
  progressive wager on it is refused at lock, with the reason (controller/ledger/rounds.py),
  until a manager resumes it. A pool with progressive wagers locked in a round still in play
  is not suspended: the round is settled or voided first, so that no contribution is left on
  a pool that may not pay it.
* **Resume.** A manager puts a suspended pool back in play.

The pool's state (:attr:`Pool.status`, :attr:`Pool.status_reason`) is part of its record, so
``jackpotd meters`` and ``jackpotd report`` show it; a pool in play encodes it not at all
(controller/ledger/codec.py), so every journal written before keeps its snapshots' digests.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from controller.ledger.authority import require
from controller.ledger.state import LedgerError, pool_of, with_pool

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.ledger.pool import Pool
    from controller.ledger.state import LedgerState
    from controller.pool_events import PoolResumed, PoolRetired, PoolSuspended, PoolTransferred

    Outcome = tuple[LedgerState, list[AnyEffect]]

IN_PLAY: Final = ""
"""A pool's status while it takes wagers (the default, never encoded)."""
SUSPENDED: Final = "suspended"
RETIRED: Final = "retired"


def out_of_play(pool: Pool) -> str | None:
    """Why ``pool`` takes no wager now (suspended or retired, and why), or None if it does."""
    if pool.status == SUSPENDED:
        return f"pool {pool.pool_id} is suspended: {pool.status_reason}"
    if pool.status == RETIRED:
        return f"pool {pool.pool_id} is retired: {pool.status_reason}"
    return None


def _documented(event: PoolSuspended | PoolResumed | PoolTransferred | PoolRetired) -> None:
    if not event.by.strip() or not event.reason.strip():
        raise LedgerError(f"pool {event.pool_id}: it needs who did it and why")


def _wagers_in_play(state: LedgerState, pool_id: str) -> list[str]:
    """The rounds still in play holding a progressive wager that contributed to ``pool_id``."""
    held: list[str] = []
    for (table_id, round_id), wagers in state.rounds.items():
        rules = state.tables.get(table_id)
        if rules is None or rules.pool_id != pool_id:
            continue
        if any(wager.contribution is not None for wager in wagers):
            held.append(f"{table_id}/{round_id}")
    return sorted(held)


def on_pool_suspended(state: LedgerState, event: PoolSuspended) -> Outcome:
    """Take a pool out of play: its meters stay, its wagers are refused until it resumes."""
    pool = pool_of(state, event.pool_id)
    _documented(event)
    if (refusal := out_of_play(pool)) is not None:
        raise LedgerError(refusal)
    if held := _wagers_in_play(state, pool.pool_id):
        raise LedgerError(
            f"pool {pool.pool_id}: progressive wagers are locked in {', '.join(held)}; "
            "settle or void the round first"
        )
    state = require(state, event, "suspend-pool")
    suspended = replace(pool, status=SUSPENDED, status_reason=event.reason.strip())
    return with_pool(state, suspended), []


def on_pool_resumed(state: LedgerState, event: PoolResumed) -> Outcome:
    """Put a suspended pool back in play (a manager's decision)."""
    pool = pool_of(state, event.pool_id)
    _documented(event)
    if pool.status != SUSPENDED:
        raise LedgerError(
            out_of_play(pool) or f"pool {pool.pool_id} is in play: there is nothing to resume"
        )
    state = require(state, event, "resume-pool")
    return with_pool(state, replace(pool, status=IN_PLAY, status_reason="")), []


def on_pool_transferred(state: LedgerState, event: PoolTransferred) -> Outcome:
    """A transfer of a pool's money to another: not taken by this version."""
    del state
    raise LedgerError(f"pool {event.pool_id}: a transfer is not taken by this version")


def on_pool_retired(state: LedgerState, event: PoolRetired) -> Outcome:
    """A pool's retirement: not taken by this version."""
    del state
    raise LedgerError(f"pool {event.pool_id}: a retirement is not taken by this version")
