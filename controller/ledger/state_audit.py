"""The ledger's own checks of a journal's replay: the stored state against the replayed one.

``jackpotd verify`` replays every row of a journal through the ledger and holds the state the
journal materialized to what the replay gives (docs/journal.md, "Verification"). What a part of
the state is, and when two agree, is the ledger's to say: the journal hands both states here,
through the domain (:data:`controller.ledger.domain.LEDGER`), and reports what comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.ledger.codec import pool_json, table_state_json, wagers_json

if TYPE_CHECKING:
    from controller.ledger.state import LedgerState


def meters(state: LedgerState) -> dict[str, int]:
    """Each pool's meter, in whole cents, by pool id."""
    return {pool_id: pool.meter_cents for pool_id, pool in sorted(state.pools.items())}


def unbalanced(state: LedgerState) -> list[str]:
    """A problem for each pool whose money in is not what it holds and has paid, to the cent."""
    return [
        f"pool {pool_id}: money in does not equal money held or paid"
        for pool_id, pool in sorted(state.pools.items())
        if pool.money_in() != pool.money_held_or_paid()
    ]


def state_problems(replayed: LedgerState, stored: LedgerState) -> list[str]:
    """Each part of the stored state that differs from the replay, and each unbalanced pool."""
    found: list[str] = []
    for pool_id in sorted(replayed.pools.keys() | stored.pools.keys()):
        ours, theirs = replayed.pools.get(pool_id), stored.pools.get(pool_id)
        if ours is None or theirs is None or pool_json(ours) != pool_json(theirs):
            found.append(f"pool {pool_id}: the stored meters differ from the replay")
        if ours is not None and ours.money_in() != ours.money_held_or_paid():
            found.append(f"pool {pool_id}: money in does not equal money held or paid")
    if replayed.table_events != stored.table_events:
        found.append("tables: the stored configuration differs from the replay")
    ours_live = {key: table_state_json(value) for key, value in replayed.table_states.items()}
    theirs_live = {key: table_state_json(value) for key, value in stored.table_states.items()}
    if ours_live != theirs_live:
        found.append("tables: the stored live table states differ from the replay")
    ours_rounds = {key: wagers_json(w) for key, w in replayed.rounds.items()}
    theirs_rounds = {key: wagers_json(w) for key, w in stored.rounds.items()}
    if ours_rounds != theirs_rounds:
        found.append("rounds: the stored open rounds differ from the replay")
    if replayed.pending.keys() != stored.pending.keys():
        found.append("payouts: the stored pending payouts differ from the replay")
    if replayed.manifest != stored.manifest:
        found.append("manifest: the stored approved manifest differs from the replay")
    if dict(replayed.operators) != dict(stored.operators):
        found.append("operators: the stored operators differ from the replay")
    if replayed.revision != stored.revision:
        found.append(
            f"configuration revision: replay gives {replayed.revision}, stored {stored.revision}"
        )
    return found
