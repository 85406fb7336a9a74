"""Voiding a round: its wagers are returned and their contributions reversed exactly.

A void after lock must not move a pool: otherwise bet, lock and void, again and again, would
raise the meter with the house's money. Each progressive wager's contribution, as recorded
when it was locked (the terms may have changed since), is taken back from the pool to the
fraction of a cent, and the qualifying-wager counters go down (:meth:`Pool.refund`, and
docs/money.md "Voids" for what happens when a hit paid the meter in between).

Who may void what:

* a **supervisor** (an operator allowed to ``void-round``, once a site has enrolled one) may
  void any round open on a table: being dealt, held, or locked by direct entry;
* a **device** (``by`` is ``device <name>``, as the drivers write it: a dealer's console
  reporting a misdeal) may void only its table's round while it is being dealt, as a dealer
  may; never a round the controller has held for a supervisor.

A void journaled before contributions were refunded (``refund_contributions`` unset) keeps the
meaning it had when it was played: its wagers are returned, their contributions stay, and a
device could void any open round. Old journals therefore replay to the same meters.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from controller.effects import AnyEffect, ContributionRefunded, RoundClosed, fraction_text
from controller.ledger.authority import require
from controller.ledger.levels import refund_levels
from controller.ledger.payout_effects import payout_effect
from controller.ledger.pool import PoolError
from controller.ledger.rounds import live
from controller.ledger.settlement import Payout, PayoutKind, SeatWager
from controller.ledger.state import (
    LedgerError,
    LedgerState,
    balances,
    pool_of,
    table_of,
    with_pool,
    with_table_state,
)
from controller.ledger.table_state import Phase
from controller.ledger.wide_area.property import wide_paytable
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from controller.events import RoundVoided
    from controller.ledger.pool import ContributionRefund
    from controller.ledger.rounds import Outcome
    from controller.ledger.table_state import TableState

DEVICE: Final = "device "
"""How the drivers name a device in ``by``: ``device <name>``."""


def _authorize(state: LedgerState, table: TableState, event: RoundVoided) -> LedgerState:
    """Refuse a void by someone who may not void this round now; the state after the check."""
    if not event.by.startswith(DEVICE):
        return require(state, event, "void-round")
    if not event.refund_contributions:
        if state.authority.signed:
            raise LedgerError("a device's void reverses the round's contributions")
        return state  # journaled under the first rules, replayed under them
    if table.round_id == event.round_id and table.phase is Phase.HELD:
        raise LedgerError(
            f"round {event.round_id} is held for a supervisor ({table.held_reason}): "
            "only a supervisor may void it"
        )
    if table.round_id != event.round_id or table.phase is not Phase.DEALING:
        raise LedgerError(
            f"a device may void only the round being dealt on table {event.table_id}, "
            f"not round {event.round_id}"
        )
    return state


def _refunded(pool_id: str, event: RoundVoided, seat: int, refund: ContributionRefund) -> AnyEffect:
    contribution = refund.contribution
    return ContributionRefunded(
        pool_id, event.table_id, event.round_id, seat, contribution.wager_cents,
        fraction_text(contribution.to_meter), fraction_text(contribution.to_reserve),
        fraction_text(contribution.to_overflow), fraction_text(refund.from_meter),
        fraction_text(refund.from_reserve), fraction_text(refund.from_overflow),
        refund.reseed_cents, refund.reseed_from_reserve_cents, refund.reseed_from_house_cents,
    )  # fmt: skip


def _refund_contributions(
    state: LedgerState, event: RoundVoided, wagers: tuple[SeatWager, ...]
) -> Outcome:
    """Take every progressive wager's contribution back from the pool, seat by seat."""
    progressive = sorted(
        (wager for wager in wagers if wager.spot is Spot.PROGRESSIVE), key=lambda w: w.seat
    )
    if not progressive:
        return state, []
    # A table cannot be reconfigured while a round is open: its pool is the one the wagers fed.
    pool_id = table_of(state, event.table_id).pool_id
    if pool_id is None:
        raise LedgerError(f"table {event.table_id} has no progressive pool")
    if wide_paytable(state, pool_id) is not None:
        raise LedgerError(
            f"round {event.round_id}: pool {pool_id} is central's (a wide-area pool): its "
            "contributions are refunded there, not here; void without refunding them "
            "(docs/wide-area.md)"
        )
    paytable = table_of(state, event.table_id).progressive
    if paytable is not None and paytable.levels:
        fed = [(wager.seat, wager.levels) for wager in progressive]
        return refund_levels(state, event, paytable, pool_id, fed)
    pool = pool_of(state, pool_id)
    effects: list[AnyEffect] = []
    for wager in progressive:
        if wager.contribution is None:
            raise LedgerError(
                f"round {event.round_id}: the contribution of seat {wager.seat}'s progressive "
                "wager was not recorded when it was locked"
            )
        try:
            pool, refund = pool.refund(wager.contribution)
        except PoolError as error:
            raise LedgerError(f"pool {pool_id}: {error}") from error
        effects.append(_refunded(pool_id, event, wager.seat, refund))
    return with_pool(state, pool), [*effects, balances(pool)]


def on_round_voided(state: LedgerState, event: RoundVoided) -> Outcome:
    """Void a round: every locked wager is returned and, if asked, its contribution reversed."""
    table = live(state, event.table_id)
    key = (event.table_id, event.round_id)
    if table.round_id != event.round_id and key not in state.rounds:
        raise LedgerError(f"round {event.round_id} is not open on table {event.table_id}")
    if not event.by or not event.reason:
        raise LedgerError("a void needs who decided it and why")
    state = _authorize(state, table, event)
    wagers = state.rounds.get(key, ())
    effects: list[AnyEffect] = []
    for wager in wagers:
        returned = Payout(
            f"{event.event_id}/{wager.seat}/{wager.spot}", wager.seat, wager.spot, PayoutKind.VOID,
            wager.amount_cents, returned_cents=wager.amount_cents,
        )  # fmt: skip
        effects.append(payout_effect(event.table_id, event.round_id, returned))
    if event.refund_contributions:
        state, reversed_ = _refund_contributions(state, event, wagers)
        effects += reversed_
    rounds = {k: v for k, v in state.rounds.items() if k != key}
    state = replace(state, rounds=rounds)
    if table.round_id == event.round_id:
        state = with_table_state(state, table.cleared())
    return state, [*effects, RoundClosed(event.table_id, event.round_id, "void")]
