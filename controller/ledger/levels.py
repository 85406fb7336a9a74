"""A multi-level pool in the ledger: each level is a pool of its own, fed by the same wager.

A pool of several levels (docs/paytables.md, "Levels") keeps each level's meter, reserve,
overflow, terms and counters exactly as a one-level pool does, so each level is a
:class:`~controller.ledger.pool.Pool` under the id ``POOL.LEVEL`` (a configured pool's id holds
no dot, so a level's never collides with another pool). The table still names ``POOL``; its
paytable lists the levels, in order, and this module finds them. A one-level pool is the pool
itself, under its own id, and nothing here changes it.

* At lock (:func:`contribute_levels`), one wager contributes to every level at the level's own
  rates, each part exact; the wager keeps each level's contribution so a void takes back
  exactly that (:func:`refund_levels`).
* At settlement, each row pays from its level's meter (controller/ledger/settlement.py).
* The conservation identity holds level by level, hence for the pool as a whole
  (tests/ledger/test_levels_money.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.effects import Contributed, ContributionRefunded, fraction_text
from controller.ledger.mystery_level import fed as fed_mystery
from controller.ledger.pool import Feed, PoolError
from controller.ledger.pool_life import out_of_play
from controller.ledger.state import LedgerError, balances, pool_of, with_pool

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import RoundVoided
    from controller.ledger.pool import Contribution, Pool
    from controller.ledger.state import LedgerState
    from controller.rules.paytable import Paytable

SEPARATOR: Final = "."
"""Between a pool's id and its level's name in the ledger's id of a level."""


def level_pool_id(pool_id: str, level: str) -> str:
    """The ledger's id of one level of a pool (a one-level pool's only level: the pool's)."""
    return f"{pool_id}{SEPARATOR}{level}" if level else pool_id


def level_ids(pool_id: str, paytable: Paytable) -> dict[str, str]:
    """Each level's name and ledger id, in the paytable's order (``{"": pool_id}``: one level)."""
    if not paytable.levels:
        return {"": pool_id}
    return {level.level: level_pool_id(pool_id, level.level) for level in paytable.levels}


def levels_of(state: LedgerState, pool_id: str, paytable: Paytable) -> dict[str, Pool]:
    """A pool's levels as the ledger holds them, by name; refuses an unknown one."""
    return {name: pool_of(state, key) for name, key in level_ids(pool_id, paytable).items()}


def contribute_levels(
    state: LedgerState,
    pool_id: str,
    paytable: Paytable,
    wager: tuple[str, str, int, int],
    event_id: str = "",
) -> tuple[LedgerState, tuple[Contribution, ...], list[AnyEffect]]:
    """One locked wager's contribution to every level of a multi-level pool.

    ``wager`` is the table, round, seat and amount; ``event_id`` the event locking it. Every
    level must be in play: a level suspended or retired refuses the wager, as does a mystery
    level with no draw open (its trigger is drawn at each reseed, before the next wager), and
    no level's meter moves.
    """
    table_id, round_id, seat, amount = wager
    levels = levels_of(state, pool_id, paytable)
    for pool in levels.values():
        if (refusal := out_of_play(pool)) is not None:
            raise LedgerError(refusal)
        if pool.terms.must_hit_by_cents is not None and pool.draw is None:
            raise LedgerError(f"pool {pool.pool_id} is a mystery level with no draw open yet")
    shares: list[Contribution] = []
    effects: list[AnyEffect] = []
    for pool in levels.values():
        fed, share = pool.contribute(amount)
        feed = Feed(event_id, table_id, round_id, seat, amount, pool.meter, fed.meter)
        fed = fed_mystery(fed, pool, feed)
        state = with_pool(state, fed)
        shares.append(share)
        effects += [
            Contributed(
                fed.pool_id, table_id, round_id, seat, amount, fraction_text(share.to_meter),
                fraction_text(share.to_reserve), fraction_text(share.to_overflow),
            ),
            balances(fed),
        ]  # fmt: skip
    return state, tuple(shares), effects


def refund_levels(
    state: LedgerState,
    event: RoundVoided,
    paytable: Paytable,
    pool_id: str,
    wagers: list[tuple[int, tuple[Contribution, ...]]],
) -> tuple[LedgerState, list[AnyEffect]]:
    """A void's reversal of each wager's contribution to each level, seat by seat."""
    levels = levels_of(state, pool_id, paytable)
    effects: list[AnyEffect] = []
    for seat, shares in wagers:
        if len(shares) != len(levels):
            raise LedgerError(
                f"round {event.round_id}: seat {seat}'s progressive wager fed "
                f"{len(shares)} levels, the pool has {len(levels)}"
            )
        for (name, pool), share in zip(levels.items(), shares, strict=True):
            try:
                levels[name], refund = pool.refund(share)
            except PoolError as error:
                raise LedgerError(f"pool {pool.pool_id}: {error}") from error
            contribution = refund.contribution
            effects.append(
                ContributionRefunded(
                    pool.pool_id, event.table_id, event.round_id, seat,
                    contribution.wager_cents, fraction_text(contribution.to_meter),
                    fraction_text(contribution.to_reserve),
                    fraction_text(contribution.to_overflow), fraction_text(refund.from_meter),
                    fraction_text(refund.from_reserve), fraction_text(refund.from_overflow),
                    refund.reseed_cents, refund.reseed_from_reserve_cents,
                    refund.reseed_from_house_cents,
                )
            )  # fmt: skip
    for pool in levels.values():
        state = with_pool(state, pool)
        effects.append(balances(pool))
    return state, effects
