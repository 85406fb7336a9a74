"""Settling one table round: every side-bet payout, progressive hit and Envy bonus (docs/money.md).

Given the table's rules, the locked wagers, the seven-card hands of the seats and of the
dealer, and the pool the table's progressive wagers feed, :func:`settle_round` returns the new
pool and one :class:`Payout` per wager (win, push or loss) and per Envy bonus. It is pure.
What it takes and gives (the round, the table's rules, the payouts) is
:mod:`controller.ledger.settlement_terms`, and is imported from here as well.

The rules it applies, in order:

1. Bonus (odds) wagers, Dynasty Bonus wagers and Ace High wagers are paid on the
   highest-paying line, "N to 1" with the wager returned, a push returning the wager.
2. Progressive wagers are taken seat by seat from the dealer's left (seat 1 upward); each hit
   is paid from the meter as it stands after the one before (or, with ``HitOrder.SPLIT``,
   seats that hit the same meter line share one pay equally). On a multi-level pool each row
   pays from its level's meter, and a hand's row is chosen at the meters as they then stand
   (docs/paytables.md, "Levels"): hits on several levels in one round are ordered the same way.
3. Envy (58 Pa. Code § 688a.1): every seat with a qualifying wager (a Progressive Payout,
   Fortune Bonus or Dynasty Bonus wager of at least ``envy_minimum_cents`` on a paytable with
   an Envy column; § 645a.6(g), N.J.A.C. 13:69F-11(i) for the Dynasty Bonus) receives the
   Envy amount for each *other player's* hand at the table that makes an Envy line, whether
   or not that player wagered. Several add up. Never for its own hand, never for
   the dealer's (only rules rebuilt from a journal written before this rule say otherwise).
4. The maximum payout (§ 688a.12(e)) caps a player's odds winnings on one hand; it never
   touches meter pays or Envy.
5. A payout at or above the verification amount is PENDING until a supervisor verifies it;
   one at or above the tax threshold and the wager multiple is flagged for tax reporting.

The NJ insurance wager (the ``insurance`` spot) is an odds wager like the bonus: it is paid on
the seat's own seven cards when they are a pai gow hand, the joker an ace (N.J.A.C.
13:69F-11.2(h)), and the maximum payout caps it with the seat's other odds pays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from controller.ledger.pool import HitRecord
from controller.ledger.settlement_terms import (
    HitOrder,
    Payout,
    PayoutKind,
    PayoutStatus,
    SeatWager,
    Settlement,
    SettlementError,
    TableRound,
    TableRules,
)
from controller.rules.paytable import MAIN_LEVEL, FixedPay, MeterPay, Odds, Push
from controller.rules.spot_pays import hand_mask
from controller.rules.spots import DEALER_SEAT, Spot, spec_of

if TYPE_CHECKING:
    from controller.ledger.pool import MeterPayment, Pool
    from controller.rules.paytable import Meters, PaytableLine

__all__ = [
    "HitOrder",
    "Payout",
    "PayoutKind",
    "PayoutStatus",
    "SeatWager",
    "Settlement",
    "SettlementError",
    "TableRound",
    "TableRules",
    "flagged",
    "settle_round",
]


def _odds_payout(payout_id: str, wager: SeatWager, row: PaytableLine | None) -> Payout:
    if row is None:
        return Payout(payout_id, wager.seat, wager.spot, PayoutKind.LOSS, wager.amount_cents)
    if isinstance(row.pays, Push):
        return Payout(
            payout_id,
            wager.seat,
            wager.spot,
            PayoutKind.PUSH,
            wager.amount_cents,
            str(row.line),
            returned_cents=wager.amount_cents,
        )
    if not isinstance(row.pays, Odds):
        raise SettlementError(f"{row.outcome}: an odds wager cannot pay {row.pays}")
    return Payout(
        payout_id,
        wager.seat,
        wager.spot,
        PayoutKind.WIN,
        wager.amount_cents,
        str(row.line),
        win_cents=wager.amount_cents * row.pays.to_one,
        returned_cents=wager.amount_cents,
    )


def _cap(payouts: list[Payout], cap: int | None) -> list[Payout]:
    """Cut one seat's odds winnings down to the maximum payout, largest win first."""
    if cap is None:
        return payouts
    excess = sum(p.win_cents for p in payouts if p.kind is PayoutKind.WIN) - cap
    if excess <= 0:
        return payouts
    capped = list(payouts)
    for index in sorted(range(len(capped)), key=lambda i: -capped[i].win_cents):
        payout = capped[index]
        if payout.kind is not PayoutKind.WIN or excess <= 0:
            continue
        cut = min(excess, payout.win_cents)
        capped[index] = replace(payout, win_cents=payout.win_cents - cut, capped_cents=cut)
        excess -= cut
    return capped


def _progressive(
    rules: TableRules, table_round: TableRound, levels: dict[str, Pool]
) -> tuple[list[Payout], list[MeterPayment]]:
    """Progressive wagers seat by seat; meter pays come off the levels' meters in that order.

    ``levels`` holds the pool's meters by level (a one-level pool's under ``""``) and is
    updated in place as each hit is paid.
    """
    table = rules.progressive
    hands = table_round.hands
    wagers = [wager for wager in table_round.wagers if wager.spot is Spot.PROGRESSIVE]
    if not wagers:
        return [], []
    if table is None or table.progressive is None or not levels:
        raise SettlementError(f"table {rules.table_id} takes no progressive wagers")
    terms = table.progressive
    ordered = sorted(wagers, key=lambda wager: wager.seat)
    for wager in ordered:
        if wager.amount_cents != terms.wager_cents:
            raise SettlementError(
                f"seat {wager.seat}: the progressive wager is {terms.wager_cents} cents, "
                f"not {wager.amount_cents}"
            )
    masks = {wager.seat: hand_mask(table, hands[wager.seat]) for wager in ordered}
    split = rules.hit_order is HitOrder.SPLIT
    # Seats are taken in order, each line chosen at the meters as they then stand. With SPLIT,
    # the other seats whose best line at those same meters is the same meter line share the pay.
    shares: dict[int, tuple[PaytableLine, int]] = {}
    payouts: list[Payout] = []
    payments: list[MeterPayment] = []
    for wager in ordered:
        payout_id = table_round.payout_id(wager.seat, wager.spot)
        row: PaytableLine | None
        if wager.seat in shares:
            row, from_meter = shares[wager.seat]
        else:
            meters = _meters(levels)
            row, from_meter = table.line_for(masks[wager.seat], meters), 0
            if row is not None and isinstance(row.pays, MeterPay):
                sharing = [wager.seat]
                if split:
                    sharing += [
                        other.seat
                        for other in ordered
                        if other.seat > wager.seat
                        and other.seat not in shares
                        and table.line_for(masks[other.seat], meters) == row
                    ]
                hit = HitRecord(payout_id, rules.table_id, wager.seat, str(row.line), 0, 0)
                if row.level not in levels:
                    raise SettlementError(f"{row.outcome}: the pool has no level {row.level!r}")
                paid, payment = levels[row.level].pay(row.pays.percent, hit, ways=len(sharing))
                levels[row.level] = paid
                payments.append(payment)
                from_meter = payment.paid_cents // len(sharing)
                shares.update(dict.fromkeys(sharing, (row, from_meter)))
        if row is None:
            payouts.append(
                Payout(payout_id, wager.seat, wager.spot, PayoutKind.LOSS, wager.amount_cents)
            )
            continue
        fixed = row.pays.fixed_cents if isinstance(row.pays, MeterPay) else 0
        fixed = row.pays.cents if isinstance(row.pays, FixedPay) else fixed
        source = levels.get(row.level)  # a multi-level pool's fixed pay: from the pool itself
        payouts.append(
            Payout(
                payout_id,
                wager.seat,
                wager.spot,
                PayoutKind.PROGRESSIVE,
                wager.amount_cents,
                str(row.line),
                win_cents=fixed + from_meter,
                returned_cents=wager.amount_cents if terms.original_wager_returned else 0,
                from_meter_cents=from_meter,
                pool_id=source.pool_id if source is not None else rules.pool_id,
            )
        )
    return payouts, payments


def _meters(levels: Mapping[str, Pool]) -> Meters:
    """The meters a row is chosen at: a one-level pool's meter, or each level's by name."""
    if set(levels) == {MAIN_LEVEL}:
        return levels[MAIN_LEVEL].meter
    return {level: pool.meter for level, pool in levels.items()}


def _envy(rules: TableRules, table_round: TableRound, meter: Meters | None) -> list[Payout]:
    """Envy bonuses: for each qualifying wager, one per other hand that makes an Envy line."""
    tables = {spot: table for spot, table in rules.offered().items() if spec_of(spot).envy}
    others = dict(table_round.hands)
    if rules.envy_includes_dealer:
        others[DEALER_SEAT] = table_round.dealer
    payouts = []
    for wager in sorted(table_round.wagers, key=lambda w: (w.seat, w.spot)):
        table = tables.get(wager.spot)
        if table is None or not table.has_envy or wager.amount_cents < rules.envy_minimum_cents:
            continue
        for seat, hand in sorted(others.items()):
            if seat == wager.seat:
                continue
            row = table.line_for(hand_mask(table, hand), meter if table.progressive else None)
            if row is None or not row.envy_cents:
                continue
            payouts.append(
                Payout(
                    table_round.payout_id(wager.seat, wager.spot, "envy", seat),
                    wager.seat,
                    wager.spot,
                    PayoutKind.ENVY,
                    wager.amount_cents,
                    str(row.line),
                    win_cents=row.envy_cents,
                    envy_from_seat=seat,
                )
            )
    return payouts


def flagged(rules: TableRules, payout: Payout) -> Payout:
    """The payout marked pending verification, or for a tax report, as the table's rules say."""
    pending = rules.verification_cents is not None and payout.win_cents >= rules.verification_cents
    taxable = payout.win_cents >= rules.tax_threshold_cents and payout.win_cents >= (
        rules.tax_wager_multiple * payout.wager_cents
    )
    if not pending and not taxable:
        return payout
    return replace(
        payout,
        status=PayoutStatus.PENDING if pending else PayoutStatus.PAID,
        tax_report=taxable,
    )


def _odds_wagers(rules: TableRules, table_round: TableRound, seat: int) -> list[Payout]:
    """One seat's odds wagers (bonus, Ace High, insurance, Dynasty...), capped by the maximum.

    Each is paid as its spot says (:mod:`controller.rules.spot_pays`); the progressive wager
    is paid from its pool's meter, by :func:`_progressive`.
    """
    payouts = []
    hand = table_round.hands[seat]
    for wager in table_round.wagers:
        pays = spec_of(wager.spot).pays
        if wager.seat != seat or pays is None:
            continue
        table = rules.paytable(wager.spot)
        if table is None:
            title = spec_of(wager.spot).title
            raise SettlementError(f"table {rules.table_id} takes no {title} wagers")
        row = pays.line(table, hand, table_round.dealer)
        payouts.append(_odds_payout(table_round.payout_id(seat, wager.spot), wager, row))
    return _cap(payouts, rules.max_payout_cents)


def settle_round(
    rules: TableRules, table_round: TableRound, pool: Pool | Mapping[str, Pool] | None = None
) -> Settlement:
    """Every payout of a round, in seat order, and the pool after its hits.

    ``pool``: the one pool the table's progressive wagers feed, or a multi-level pool's
    levels by name (controller/ledger/levels.py).
    """
    table_round.check()
    if pool is None:
        levels: dict[str, Pool] = {}
    elif isinstance(pool, Mapping):
        levels = dict(pool)
    else:
        levels = {MAIN_LEVEL: pool}
    meter_before = _meters(levels) if levels else None
    payouts: list[Payout] = []
    for seat in sorted({wager.seat for wager in table_round.wagers}):
        payouts.extend(_odds_wagers(rules, table_round, seat))
    progressive, payments = _progressive(rules, table_round, levels)
    payouts.extend(progressive)
    payouts.extend(_envy(rules, table_round, meter_before))
    payouts.sort(key=lambda payout: (payout.seat, payout.kind is PayoutKind.ENVY))
    hands = {DEALER_SEAT: table_round.dealer, **table_round.hands}

    def shown(payout: Payout) -> Payout:
        source = payout.envy_from_seat if payout.envy_from_seat is not None else payout.seat
        return replace(flagged(rules, payout), hand=str(hands[source]))

    one = levels.get(MAIN_LEVEL) if len(levels) == 1 else None
    return Settlement(
        tuple(shown(payout) for payout in payouts), tuple(payments), one, tuple(levels.values())
    )
