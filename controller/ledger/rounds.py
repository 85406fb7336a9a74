"""Ledger handlers for wagers and rounds: bets sensed and locked, cards dealt, settlement.

Two ways lead to a settled round, and both end in :func:`_settle`:

* **devices** report bets (``bet-sensed``), "no more bets" (``bets-locked``), each card
  (``card-dealt``) and the end of the deal (``deal-complete``); the table's live state
  (:mod:`controller.ledger.table_state`) follows them, and a round that does not add up is held;
* a **direct** entry locks wagers (``wager-locked``) and gives all the cards at once
  (``round-settled``): used by supervisors to settle a held round with the cards as they should
  be, and by tests.

A table that is offline (docs/architecture.md, "Failing closed") refuses bets and wagers. A wager
outside its spot's limits (:mod:`controller.ledger.wager_limits`) is refused when bets are locked.
Voids are in :mod:`controller.ledger.voids`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from controller.effects import (
    AnyEffect,
    BetChanged,
    CardRecorded,
    Contributed,
    RoundClosed,
    RoundHeld,
    RoundStarted,
    TableStatus,
    WagerRefused,
    fraction_text,
)
from controller.ledger.authority import require
from controller.ledger.levels import contribute_levels, levels_of
from controller.ledger.payout_effects import meter_paid, payout_effect
from controller.ledger.pool_life import out_of_play
from controller.ledger.settlement import (
    PayoutStatus,
    SeatWager,
    SettlementError,
    TableRound,
    settle_round,
)
from controller.ledger.state import (
    LedgerError,
    LedgerState,
    balances,
    pool_of,
    table_of,
    with_pool,
    with_table_state,
)
from controller.ledger.table_state import Phase, RoundProblem, TableState
from controller.ledger.wager_limits import out_of_limits
from controller.ledger.wide_area.property import (
    contribute,
    hold_meter_pays,
    shadow_pool,
    wide_paytable,
)
from controller.rules.cards import CardError, HandError, SevenCardHand
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from controller.events import (
        BetSensed,
        BetsLocked,
        CardDealt,
        DealComplete,
        RoundSettled,
        TableStatusChanged,
        WagerLocked,
    )
    from controller.ledger.pool import Contribution, Pool
    from controller.ledger.settlement import TableRules

Outcome = tuple[LedgerState, list[AnyEffect]]


def live(state: LedgerState, table_id: str) -> TableState:
    """A table's live state (a configured table starts online, taking bets)."""
    table_of(state, table_id)
    return state.table_states.get(table_id) or TableState(table_id)


def _require_online(state: LedgerState, table_id: str) -> TableState:
    table = live(state, table_id)
    if not table.online:
        raise LedgerError(f"table {table_id} is closed (offline): its wagers are refused")
    return table


def _spot(rules: TableRules, text: str, seat: int) -> Spot:
    try:
        spot = Spot(text)
    except ValueError as error:
        raise LedgerError(f"unknown spot {text!r}") from error
    if not 1 <= seat <= rules.seats:
        raise LedgerError(f"table {rules.table_id} has seats 1 to {rules.seats}, not {seat}")
    if rules.paytable(spot) is None:
        raise LedgerError(f"table {rules.table_id} offers no {spot} wager")
    return spot


@dataclass(frozen=True, slots=True)
class WagerRequest:
    """A chip on a spot to be locked as a wager in a round."""

    table_id: str
    round_id: str
    seat: int
    spot: str
    amount_cents: int
    at: str = ""
    """When the wager was locked (the event's time): a wide-area contribution carries it."""
    event_id: str = ""
    """The event that locked it: a mystery level keeps the feeds of one event at a time."""


def lock_wager(state: LedgerState, request: WagerRequest) -> Outcome:
    """Lock one wager; a progressive wager contributes to its pool at once."""
    table_id, round_id, seat = request.table_id, request.round_id, request.seat
    spot_text, amount = request.spot, request.amount_cents
    rules = table_of(state, table_id)
    spot = _spot(rules, spot_text, seat)
    if amount <= 0:
        raise LedgerError(f"a wager must be above $0, got {amount} cents")
    key = (table_id, round_id)
    locked = state.rounds.get(key, ())
    if any(wager.seat == seat and wager.spot is spot for wager in locked):
        raise LedgerError(f"seat {seat} already has a {spot} wager in round {round_id}")
    refusal = out_of_limits(rules, spot, amount)
    if refusal is not None:
        raise LedgerError(refusal)
    effects: list[AnyEffect] = []
    share: Contribution | None = None
    if spot is Spot.PROGRESSIVE:
        terms = rules.progressive.progressive if rules.progressive else None
        if terms is None or rules.pool_id is None:
            raise LedgerError(f"table {table_id} has no progressive pool")
        if amount != terms.wager_cents:
            raise LedgerError(f"the progressive wager is {terms.wager_cents} cents, not {amount}")
        if wide_paytable(state, rules.pool_id) is not None:  # central's pool: the chain's
            state, effects = contribute(
                state, rules.pool_id, (table_id, round_id, seat), amount, request.at
            )
            wager = SeatWager(seat, spot, amount, None)
            return replace(state, rounds={**state.rounds, key: (*locked, wager)}), effects
        if rules.progressive is not None and rules.progressive.levels:
            seat_key = (table_id, round_id, seat, amount)
            state, shares, effects = contribute_levels(
                state, rules.pool_id, rules.progressive, seat_key, request.event_id
            )
            wager = SeatWager(seat, spot, amount, None, shares)
            return replace(state, rounds={**state.rounds, key: (*locked, wager)}), effects
        pool = pool_of(state, rules.pool_id)
        if (refusal := out_of_play(pool)) is not None:  # its meters stay as they are
            raise LedgerError(refusal)
        pool, share = pool.contribute(amount)
        state = with_pool(state, pool)
        effects += [
            Contributed(
                pool.pool_id, table_id, round_id, seat, amount, fraction_text(share.to_meter),
                fraction_text(share.to_reserve), fraction_text(share.to_overflow),
            ),
            balances(pool),
        ]  # fmt: skip
    wager = SeatWager(seat, spot, amount, share)
    state = replace(state, rounds={**state.rounds, key: (*locked, wager)})
    return state, effects


def on_wager_locked(state: LedgerState, event: WagerLocked) -> Outcome:
    """A wager locked by direct entry (a supervisor's, once authority is signed)."""
    if state.authority.signed:
        state = require(state, event, "settle-round")
    _require_online(state, event.table_id)
    request = WagerRequest(
        event.table_id,
        event.round_id,
        event.seat,
        event.spot,
        event.amount_cents,
        event.at,
        event.event_id,
    )
    return lock_wager(state, request)


def _parse_hands(
    round_id: str, dealer: Sequence[str], seats: Mapping[int, Sequence[str]]
) -> tuple[SevenCardHand, dict[int, SevenCardHand]]:
    try:
        return SevenCardHand.parse(dealer), {s: SevenCardHand.parse(c) for s, c in seats.items()}
    except (CardError, HandError) as error:
        raise LedgerError(f"round {round_id}: {error}") from error


def _settle(
    state: LedgerState,
    table_id: str,
    round_id: str,
    cards: tuple[Sequence[str], Mapping[int, Sequence[str]]],
    settling: RoundSettled | DealComplete,
) -> Outcome:
    """Settle a round from its cards; raises :class:`LedgerError` if it cannot be settled.

    ``settling`` is the event that settles it: its id is the payouts' reference, its time a
    wide-area hit claim's.
    """
    reference, at = settling.event_id, settling.at
    rules = table_of(state, table_id)
    key = (table_id, round_id)
    dealer, hands = _parse_hands(round_id, *cards)
    wide = rules.progressive is not None and wide_paytable(state, rules.pool_id) is not None
    pool: Pool | dict[str, Pool] | None = None
    if rules.pool_id and rules.progressive is not None and rules.progressive.levels:
        pool = levels_of(state, rules.pool_id, rules.progressive)
    elif rules.pool_id:
        pool = state.pools.get(rules.pool_id)
    if wide and rules.progressive is not None and rules.pool_id is not None:
        pool = shadow_pool(rules.pool_id, rules.progressive)
    try:
        table_round = TableRound(round_id, dealer, hands, state.rounds.get(key, ()), reference)
        settlement = settle_round(rules, table_round, pool)
    except (SettlementError, HandError) as error:
        raise LedgerError(f"round {round_id}: {error}") from error
    effects: list[AnyEffect] = []
    payouts = list(settlement.payouts)
    if wide:  # central pays the meter lines: held, claimed, and no local pool moves
        state, payouts, effects = hold_meter_pays(state, rules, round_id, settlement, at)
        settlement = replace(settlement, meter_payments=(), pool=None, pools=())
    levelled = rules.progressive is not None and bool(rules.progressive.levels)
    effects += [
        meter_paid(payment.pool_id if levelled else rules.pool_id or "", payment)
        for payment in settlement.meter_payments
    ]
    pending = dict(state.pending)
    for payout in payouts:
        effects.append(payout_effect(table_id, round_id, payout))
        if payout.status is PayoutStatus.PENDING:
            pending[payout.payout_id] = payout
    rounds = {k: v for k, v in state.rounds.items() if k != key}
    state = replace(state, rounds=rounds, pending=pending)
    for settled in settlement.pools:
        state = with_pool(state, settled)
        effects.append(balances(settled))
    table = live(state, table_id)
    if table.round_id == round_id:
        state = with_table_state(state, table.cleared())
    effects.append(RoundClosed(table_id, round_id, "settled"))
    return state, effects


def on_round_settled(state: LedgerState, event: RoundSettled) -> Outcome:
    """A round settled with all its cards given at once (a supervisor's, once signed)."""
    if state.authority.signed:
        state = require(state, event, "settle-round")
    rules = table_of(state, event.table_id)
    try:
        seats = {int(seat): cards for seat, cards in event.hands.items()}
    except ValueError as error:
        raise LedgerError(f"round {event.round_id}: seats are numbered 1 and up") from error
    if len(seats) != len(event.hands) or not all(1 <= seat <= rules.seats for seat in seats):
        raise LedgerError(
            f"round {event.round_id}: hands must be for seats 1 to {rules.seats}, each once"
        )
    return _settle(state, event.table_id, event.round_id, (event.dealer, seats), event)


def on_bet_sensed(state: LedgerState, event: BetSensed) -> Outcome:
    """A chip arrived on, or left, a spot while bets are open."""
    table = _require_online(state, event.table_id)
    rules = table_of(state, event.table_id)
    spot = _spot(rules, event.spot, event.seat)
    if table.phase is not Phase.BETTING:
        raise LedgerError(f"bets are locked on table {event.table_id} (round {table.round_id})")
    amount = event.amount_cents if event.present else 0
    if event.present and not amount:
        terms = rules.progressive.progressive if rules.progressive else None
        if spot is not Spot.PROGRESSIVE or terms is None:
            raise LedgerError(f"the sensor gave no amount for the {spot} spot of seat {event.seat}")
        amount = terms.wager_cents  # a progressive spot takes one fixed denomination
    if amount < 0:
        raise LedgerError("a bet cannot be negative")
    state = with_table_state(state, table.with_bet(event.seat, str(spot), amount))
    return state, [BetChanged(event.table_id, event.seat, str(spot), amount)]


def on_bets_locked(state: LedgerState, event: BetsLocked) -> Outcome:
    """No more bets: each chip on a spot becomes a wager, or is refused (and returned)."""
    table = _require_online(state, event.table_id)
    if table.phase is not Phase.BETTING:
        raise LedgerError(f"round {table.round_id} is still in play on table {event.table_id}")
    if (event.table_id, event.round_id) in state.rounds:
        raise LedgerError(f"round {event.round_id} already has locked wagers")
    effects: list[AnyEffect] = []
    locked = 0
    for (seat, spot), amount in sorted(table.bets.items()):
        try:
            request = WagerRequest(
                event.table_id, event.round_id, seat, spot, amount, event.at, event.event_id
            )
            state, more = lock_wager(state, request)
        except LedgerError as error:
            effects.append(
                WagerRefused(event.table_id, event.round_id, seat, spot, amount, str(error))
            )
            continue
        effects += more
        locked += 1
    state = with_table_state(state, table.locked(event.round_id))
    return state, [RoundStarted(event.table_id, event.round_id, locked), *effects]


def _in_play(state: LedgerState, table_id: str, round_id: str) -> TableState:
    table = live(state, table_id)
    if table.round_id != round_id:
        raise LedgerError(f"round {round_id} is not in play on table {table_id}")
    if table.phase is Phase.HELD:
        raise LedgerError(f"round {round_id} is held for a supervisor: {table.held_reason}")
    return table


def _hold(state: LedgerState, table: TableState, reason: str) -> Outcome:
    state = with_table_state(state, table.held(reason))
    return state, [RoundHeld(table.table_id, table.round_id or "", reason)]


def on_card_dealt(state: LedgerState, event: CardDealt) -> Outcome:
    """A card from the shoe; one that cannot be right holds the round."""
    table = _in_play(state, event.table_id, event.round_id)
    seats = table_of(state, event.table_id).seats
    try:
        dealt = table.with_card(event.position, event.card, seats)
    except RoundProblem as problem:
        return _hold(state, table, str(problem))
    state = with_table_state(state, dealt)
    return state, [
        CardRecorded(
            event.table_id, event.round_id, event.position, dealt.cards[event.position][-1]
        )
    ]


def on_deal_complete(state: LedgerState, event: DealComplete) -> Outcome:
    """The deal is over: settle, or hold the round if its cards do not add up."""
    table = _in_play(state, event.table_id, event.round_id)
    wagering = {wager.seat for wager in state.rounds.get((event.table_id, event.round_id), ())}
    try:
        dealer, seats = table.complete_hands(wagering)
        return _settle(state, event.table_id, event.round_id, (dealer, seats), event)
    except (RoundProblem, LedgerError) as problem:
        return _hold(state, table, str(problem))


def on_table_status(state: LedgerState, event: TableStatusChanged) -> Outcome:
    """A table went offline (its wagers are refused until it is back) or came back."""
    table = live(state, event.table_id)
    if table.online == event.online:
        return state, []
    state = with_table_state(state, replace(table, online=event.online))
    return state, [TableStatus(event.table_id, event.online, event.reason)]
