"""The ledger: the single owner of every pool, applying one event at a time, deterministically.

:func:`apply` takes the state and an event and returns the new state and the event's effects;
it never reads a clock, a file or a socket, so replaying the journal rebuilds the same state to
the cent. An event the ledger must refuse (an unknown table, a wager outside the paytable's
denomination, a round whose cards do not add up, a meter change without reason) raises
:class:`LedgerError` and changes nothing; the journal records the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.cards import CardError, HandError, SevenCardHand
from controller.effects import (
    Adjusted,
    AnyEffect,
    Balances,
    Contributed,
    MeterPaid,
    PayoutMade,
    PoolOpenedEffect,
    TableSet,
    TermsChanged,
    Verified,
    fraction_text,
)
from controller.events import (
    AnyEvent,
    FaultRecorded,
    HitVerified,
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    RoundSettled,
    TableConfigured,
    WagerLocked,
)
from controller.pool import MeterPayment, Pool, PoolError, PoolTerms
from controller.settlement import (
    Payout,
    PayoutStatus,
    SeatWager,
    SettlementError,
    Spot,
    TableRound,
    TableRules,
    settle_round,
)
from controller.table_rules import TableRulesError, table_rules

if TYPE_CHECKING:
    from collections.abc import Mapping


class LedgerError(ValueError):
    """An event the ledger refuses; the state is unchanged."""


@dataclass(frozen=True, slots=True)
class LedgerState:
    """Everything the ledger owns. Mappings are replaced, never mutated, on each event."""

    pools: Mapping[str, Pool] = field(default_factory=dict)
    tables: Mapping[str, TableRules] = field(default_factory=dict)
    table_events: Mapping[str, TableConfigured] = field(default_factory=dict)
    rounds: Mapping[tuple[str, str], tuple[SeatWager, ...]] = field(default_factory=dict)
    pending: Mapping[str, Payout] = field(default_factory=dict)
    revision: int = 0


def _balances(pool: Pool) -> Balances:
    return Balances(
        pool.pool_id,
        fraction_text(pool.meter),
        fraction_text(pool.reserve),
        fraction_text(pool.overflow),
        fraction_text(pool.contributions),
        pool.paid_cents,
        pool.house_funding_cents,
        pool.reserve_funding_cents,
        pool.adjustments_cents,
    )


def _terms(event: PoolOpened | PoolTermsChanged) -> PoolTerms:
    try:
        return PoolTerms(
            seed_cents=event.seed_cents,
            rate_of_progression=Fraction(event.rate_of_progression),
            reserve_rate=Fraction(event.reserve_rate),
            limit_cents=event.limit_cents,
            paytable=event.paytable,
        )
    except PoolError as error:
        raise LedgerError(f"pool {event.pool_id}: {error}") from None


def _pool(state: LedgerState, pool_id: str) -> Pool:
    try:
        return state.pools[pool_id]
    except KeyError:
        raise LedgerError(f"unknown pool {pool_id!r}") from None


def _with_pool(state: LedgerState, pool: Pool) -> LedgerState:
    return replace(state, pools={**state.pools, pool.pool_id: pool})


def _open_pool(state: LedgerState, event: PoolOpened) -> tuple[LedgerState, list[AnyEffect]]:
    if event.pool_id in state.pools:
        raise LedgerError(f"pool {event.pool_id!r} is already open")
    revision = state.revision + 1
    pool = Pool.open(event.pool_id, _terms(event), revision)
    state = replace(_with_pool(state, pool), revision=revision)
    return state, [PoolOpenedEffect(pool.pool_id, revision, event.seed_cents), _balances(pool)]


def _change_terms(
    state: LedgerState, event: PoolTermsChanged
) -> tuple[LedgerState, list[AnyEffect]]:
    pool = _pool(state, event.pool_id)
    if not event.by or not event.reason:
        raise LedgerError("a change of terms needs who made it and why")
    revision = state.revision + 1
    try:
        changed = pool.change_terms(_terms(event), revision, now=event.apply_now)
    except PoolError as error:
        raise LedgerError(f"pool {event.pool_id}: {error}") from None
    reseed = changed.house_funding_cents + changed.reserve_funding_cents
    reseed -= pool.house_funding_cents + pool.reserve_funding_cents
    state = replace(_with_pool(state, changed), revision=revision)
    effect = TermsChanged(pool.pool_id, revision, event.apply_now, reseed)
    return state, [effect, _balances(changed)]


def _configure_table(
    state: LedgerState, event: TableConfigured
) -> tuple[LedgerState, list[AnyEffect]]:
    try:
        rules = table_rules(event)
    except TableRulesError as error:
        raise LedgerError(str(error)) from None
    if rules.pool_id is not None and rules.pool_id not in state.pools:
        raise LedgerError(f"table {event.table_id}: unknown pool {rules.pool_id!r}")
    revision = state.revision + 1
    state = replace(
        state,
        tables={**state.tables, event.table_id: rules},
        table_events={**state.table_events, event.table_id: event},
        revision=revision,
    )
    return state, [TableSet(event.table_id, revision)]


def _table(state: LedgerState, table_id: str) -> TableRules:
    try:
        return state.tables[table_id]
    except KeyError:
        raise LedgerError(f"unknown table {table_id!r}") from None


def _lock_wager(state: LedgerState, event: WagerLocked) -> tuple[LedgerState, list[AnyEffect]]:
    rules = _table(state, event.table_id)
    try:
        spot = Spot(event.spot)
    except ValueError:
        raise LedgerError(f"unknown spot {event.spot!r}") from None
    if event.amount_cents <= 0:
        raise LedgerError(f"a wager must be above $0, got {event.amount_cents} cents")
    if not 1 <= event.seat <= rules.seats:
        raise LedgerError(f"table {rules.table_id} has seats 1 to {rules.seats}, not {event.seat}")
    offered = {
        Spot.BONUS: rules.bonus,
        Spot.ACE_HIGH: rules.ace_high,
        Spot.PROGRESSIVE: rules.progressive,
    }
    if offered[spot] is None:
        raise LedgerError(f"table {rules.table_id} offers no {spot} wager")
    key = (event.table_id, event.round_id)
    locked = state.rounds.get(key, ())
    if any(wager.seat == event.seat and wager.spot is spot for wager in locked):
        raise LedgerError(f"seat {event.seat} already has a {spot} wager in round {event.round_id}")
    wager = SeatWager(event.seat, spot, event.amount_cents)
    effects: list[AnyEffect] = []
    if spot is Spot.PROGRESSIVE:
        terms = rules.progressive.progressive if rules.progressive else None
        if terms is None or rules.pool_id is None:
            raise LedgerError(f"table {rules.table_id} has no progressive pool")
        if event.amount_cents != terms.wager_cents:
            raise LedgerError(
                f"the progressive wager is {terms.wager_cents} cents, not {event.amount_cents}"
            )
        pool, contribution = _pool(state, rules.pool_id).contribute(event.amount_cents)
        state = _with_pool(state, pool)
        effects += [
            Contributed(
                pool.pool_id, event.table_id, event.round_id, event.seat, event.amount_cents,
                fraction_text(contribution.to_meter), fraction_text(contribution.to_reserve),
                fraction_text(contribution.to_overflow),
            ),
            _balances(pool),
        ]  # fmt: skip
    state = replace(state, rounds={**state.rounds, key: (*locked, wager)})
    return state, effects


def _hands(event: RoundSettled) -> tuple[SevenCardHand, dict[int, SevenCardHand]]:
    try:
        dealer = SevenCardHand.parse(event.dealer)
        hands = {int(seat): SevenCardHand.parse(cards) for seat, cards in event.hands.items()}
    except (CardError, HandError) as error:
        raise LedgerError(f"round {event.round_id}: {error}") from None
    except ValueError:
        raise LedgerError(f"round {event.round_id}: seats are numbered 1 and up") from None
    return dealer, hands


def _settle(state: LedgerState, event: RoundSettled) -> tuple[LedgerState, list[AnyEffect]]:
    rules = _table(state, event.table_id)
    key = (event.table_id, event.round_id)
    wagers = state.rounds.get(key, ())
    dealer, hands = _hands(event)
    pool = state.pools.get(rules.pool_id) if rules.pool_id else None
    try:
        table_round = TableRound(event.round_id, dealer, hands, wagers, event.event_id)
        settlement = settle_round(rules, table_round, pool)
    except (SettlementError, HandError) as error:
        raise LedgerError(f"round {event.round_id}: {error}") from None
    effects: list[AnyEffect] = [
        _meter_paid(rules.pool_id or "", payment) for payment in settlement.meter_payments
    ]
    pending = dict(state.pending)
    for payout in settlement.payouts:
        effects.append(_payout_effect(event, payout))
        if payout.status is PayoutStatus.PENDING:
            pending[payout.payout_id] = payout
    rounds = {k: v for k, v in state.rounds.items() if k != key}
    state = replace(state, rounds=rounds, pending=pending)
    if settlement.pool is not None:
        state = _with_pool(state, settlement.pool)
        effects.append(_balances(settlement.pool))
    return state, effects


def _meter_paid(pool_id: str, payment: MeterPayment) -> MeterPaid:
    return MeterPaid(
        pool_id, payment.hit_id or "", payment.paid_cents, fraction_text(payment.meter_before),
        payment.reseed_cents, payment.from_reserve_cents, payment.from_house_cents,
        fraction_text(payment.from_overflow), payment.reset, payment.terms_applied,
    )  # fmt: skip


def _payout_effect(event: RoundSettled, payout: Payout) -> PayoutMade:
    return PayoutMade(
        payout.payout_id, event.table_id, event.round_id, payout.seat, str(payout.spot),
        str(payout.kind), payout.wager_cents, payout.line, payout.win_cents,
        payout.returned_cents, payout.from_meter_cents, payout.pool_id, payout.capped_cents,
        payout.envy_from_seat, str(payout.status), payout.tax_report,
    )  # fmt: skip


def _verify_hit(state: LedgerState, event: HitVerified) -> tuple[LedgerState, list[AnyEffect]]:
    if event.payout_id not in state.pending:
        raise LedgerError(f"no pending payout {event.payout_id!r}")
    if not event.by:
        raise LedgerError("a verification needs the supervisor's name")
    pending = {k: v for k, v in state.pending.items() if k != event.payout_id}
    return replace(state, pending=pending), [Verified(event.payout_id, event.by)]


def _adjust(state: LedgerState, event: MeterAdjusted) -> tuple[LedgerState, list[AnyEffect]]:
    pool = _pool(state, event.pool_id)
    if not event.by or not event.reason.strip():
        raise LedgerError("an adjustment needs who made it and why")
    try:
        adjusted = pool.adjust(event.account, event.amount_cents)
    except PoolError as error:
        raise LedgerError(f"pool {event.pool_id}: {error}") from None
    effects: list[AnyEffect] = [
        Adjusted(pool.pool_id, event.account, event.amount_cents),
        _balances(adjusted),
    ]
    return _with_pool(state, adjusted), effects


def apply(state: LedgerState, event: AnyEvent) -> tuple[LedgerState, tuple[AnyEffect, ...]]:
    """Apply one event; raise :class:`LedgerError` (state unchanged) if it must be refused."""
    match event:
        case PoolOpened():
            new_state, effects = _open_pool(state, event)
        case PoolTermsChanged():
            new_state, effects = _change_terms(state, event)
        case TableConfigured():
            new_state, effects = _configure_table(state, event)
        case WagerLocked():
            new_state, effects = _lock_wager(state, event)
        case RoundSettled():
            new_state, effects = _settle(state, event)
        case HitVerified():
            new_state, effects = _verify_hit(state, event)
        case MeterAdjusted():
            new_state, effects = _adjust(state, event)
        case FaultRecorded():
            new_state, effects = state, []
    return new_state, tuple(effects)
