"""Envy bonuses (58 Pa. Code § 688a.1) and the maximum payout (§ 688a.12(e)) in a settled round.

docs/money.md, "Payouts of a round", and docs/rules.md. Every expected amount is worked out by
hand from the paytable's printed Envy column and odds (tests/support/rules/settlement_rig.py builds
the rounds).
"""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest
from support.rules.settlement_rig import (
    ACE_HIGH,
    FIVE_ACES,
    FORTUNE,
    ONE,
    PROG1,
    PROG4,
    SEED,
    SEVEN_SF,
    SEVEN_SF_HEARTS,
    dealt,
    envy,
    only,
    paytable_text,
    pool_at,
)

from controller.events import TableConfigured
from controller.ledger.settlement import PayoutKind, TableRules, settle_round
from controller.ledger.table_rules import TableRulesError, table_rules
from controller.rules.spots import DEALER_SEAT, Spot

# --- Envy, 58 Pa. Code § 688a.1 -------------------------------------------------------------
# The Envy Bonus is a fixed sum paid to a player who placed a Qualifying Wager (a Progressive
# Payout Wager or a Fortune Bonus Wager of at least $5) when another player at the table holds
# an Envy Bonus Qualifying Hand (four of a kind or better, from that player's seven cards).

ENVY_DEALER = "9c 9d 9h 9s 2c 5d Kh"  # four of a kind, the dealer's: no Envy to anyone
ENVY_HANDS = {
    1: FIVE_ACES,  # $50 Envy; pays 250 to 1
    2: "4s 5s 6s 7s 8s Td Kd",  # straight flush, $10 Envy; pays 50 to 1
    3: "Qc Qd Qh Qs 2h 4d Tc",  # four of a kind, $5 Envy; its wager is $4.99
    4: "Jc Jd Jh Js 3c 6d 8h",  # four of a kind, $5 Envy; no side wager at this seat
}
ENVY_WAGERS = [(1, Spot.BONUS, 500), (2, Spot.BONUS, 500), (3, Spot.BONUS, 499)]


def test_688a1_envy_is_paid_for_each_other_players_envy_hand_and_several_add_up() -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    settlement = settle_round(rules, dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER))
    # Seat 1: seat 2's straight flush $10, the quads of seats 3 and 4 $5 each.
    assert envy(settlement, 1) == {2: 1000, 3: 500, 4: 500}
    # Seat 2: seat 1's five aces $50, the quads of seats 3 and 4 $5 each.
    assert envy(settlement, 2) == {1: 5000, 3: 500, 4: 500}
    assert sum(envy(settlement, 1).values()) == 2000
    assert sum(envy(settlement, 2).values()) == 6000
    # Each player's own bonus is paid as well, apart from the Envy.
    assert only(settlement, 1).win_cents == 250 * 500
    assert only(settlement, 2).win_cents == 50 * 500


def test_688a1_envy_is_never_paid_for_the_dealers_hand() -> None:
    rules = TableRules("T1", bonus=FORTUNE, progressive=PROG4, pool_id="P1")
    wagers = [(1, Spot.BONUS, 500), (1, Spot.PROGRESSIVE, 500), (2, Spot.BONUS, 10_000)]
    hands = {1: "Jc Jd 2s 6c 5s 8d Qs", 2: "Kc Kd 3s 6s 8c Tc 4c"}
    for dealer in (ENVY_DEALER, "Ac Ad Ah As Jk 2d 3d", SEVEN_SF_HEARTS):
        settlement = settle_round(rules, dealt(hands, wagers, dealer), pool_at(SEED, rate=ONE))
        assert [p for p in settlement.payouts if p.kind is PayoutKind.ENVY] == []
    crowded = settle_round(rules, dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER))
    assert all(payout.envy_from_seat != DEALER_SEAT for payout in crowded.payouts)


def test_688a1_a_hand_at_a_seat_with_no_side_wager_still_pays_the_others_envy() -> None:
    settlement = settle_round(
        TableRules("T1", bonus=FORTUNE), dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER)
    )
    assert not [payout for payout in settlement.payouts if payout.seat == 4]
    assert envy(settlement, 1)[4] == envy(settlement, 2)[4] == 500


def test_688a1_the_qualifying_wager_is_at_least_5_dollars_inclusive() -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    settlement = settle_round(rules, dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER))
    assert envy(settlement, 3) == {}  # $4.99 is under the $5 minimum
    assert only(settlement, 3).win_cents == 20 * 499  # the bonus itself is still paid
    assert envy(settlement, 2) != {}  # exactly $5.00 qualifies
    at_five = [(1, Spot.BONUS, 500), (3, Spot.BONUS, 500)]
    assert envy(settle_round(rules, dealt(ENVY_HANDS, at_five, ENVY_DEALER)), 3) == {
        1: 5000,
        2: 1000,
        4: 500,
    }
    higher = TableRules("T1", bonus=FORTUNE, envy_minimum_cents=501)
    assert envy(settle_round(higher, dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER)), 1) == {}


def test_688a1_either_qualifying_wager_earns_envy_fortune_bonus_or_progressive_payout() -> None:
    # Seat 1 wagers on the Fortune Bonus only, seat 2 on the Progressive Payout only; seat 3,
    # without a side wager, holds a natural seven-card straight flush: $1,000 Envy on both
    # fortune-1 and progressive-4, each paid from its own paytable's Envy column.
    rules = TableRules("T1", bonus=FORTUNE, progressive=PROG4, pool_id="P1")
    hands = {1: "Jc Jd 2s 6c 5s 8d Qs", 2: "Qc Qd 3s 7c 9d Ts 2c", 3: SEVEN_SF_HEARTS}
    wagers = [(1, Spot.BONUS, 500), (2, Spot.PROGRESSIVE, 500)]
    settlement = settle_round(rules, dealt(hands, wagers), pool_at(SEED, rate=ONE))
    paid = [(p.seat, p.spot, p.envy_from_seat, p.win_cents) for p in settlement.payouts]
    assert [entry for entry in paid if entry[2] is not None] == [
        (1, Spot.BONUS, 3, 100_000),
        (2, Spot.PROGRESSIVE, 3, 100_000),
    ]


def test_688a1_rules_journaled_before_the_rule_still_pay_the_dealers_envy() -> None:
    """A table whose journal predates § 688a.1's reading replays as it was paid."""
    rules = TableRules("T1", bonus=FORTUNE, envy_includes_dealer=True)
    settlement = settle_round(rules, dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER))
    assert envy(settlement, 1) == {2: 1000, 3: 500, 4: 500, DEALER_SEAT: 500}
    assert envy(settlement, 2) == {1: 5000, 3: 500, 4: 500, DEALER_SEAT: 500}


def test_688a1_a_player_never_receives_envy_for_their_own_hand() -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    settlement = settle_round(rules, dealt({1: SEVEN_SF}, [(1, Spot.BONUS, 10_000)]))
    assert envy(settlement, 1) == {}
    assert [payout.kind for payout in settlement.payouts] == [PayoutKind.WIN]
    crowded = settle_round(rules, dealt(ENVY_HANDS, ENVY_WAGERS, ENVY_DEALER))
    for payout in crowded.payouts:
        assert payout.envy_from_seat != payout.seat


def test_688a1_envy_on_a_progressive_paytable_with_an_envy_column() -> None:
    # Progressive Paytable 4: seat 2's natural seven-card straight flush is $1,000 Envy to seat 1.
    rules = TableRules("T1", progressive=PROG4, pool_id="P1")
    table_round = dealt(
        {1: "Jc Jd 2s 6c 5s 9d Qs", 2: SEVEN_SF_HEARTS},
        [(1, Spot.PROGRESSIVE, 500), (2, Spot.PROGRESSIVE, 500)],
    )
    settlement = settle_round(rules, table_round, pool_at(SEED, rate=Fraction(1, 100)))
    assert envy(settlement, 1) == {2: 100_000}
    assert envy(settlement, 2) == {}
    assert only(settlement, 2).from_meter_cents == SEED


# --- maximum payout, § 688a.12(e) ---------------------------------------------------------


def test_688a12_e_max_payout_never_touches_meter_pays_or_envy() -> None:
    cap = 5_000_000  # $50,000
    rules = TableRules(
        "T1",
        bonus=FORTUNE,
        ace_high=ACE_HIGH,
        progressive=PROG1,
        pool_id="P1",
        max_payout_cents=cap,
    )
    table_round = dealt(
        {1: SEVEN_SF, 2: "Qc Qd Qh Qs 2c 4d Tc"},
        [
            (1, Spot.BONUS, 10_000),  # 5,000 to 1: $500,000
            (1, Spot.ACE_HIGH, 10_000),  # dealer-only ace high, 8 to 1: $800
            (1, Spot.PROGRESSIVE, 100),  # 100% of the meter
            (2, Spot.BONUS, 500),
        ],
        dealer="As Kd Jh 8h 5s 3d 2h",
    )
    meter = 7_654_321
    settlement = settle_round(rules, table_round, pool_at(meter))
    odds = [p for p in settlement.payouts if p.seat == 1 and p.kind is PayoutKind.WIN]
    assert {p.spot for p in odds} == {Spot.BONUS, Spot.ACE_HIGH}
    assert sum(p.win_cents for p in odds) == cap
    assert sum(p.capped_cents for p in odds) == 10_000 * 5000 + 10_000 * 8 - cap
    assert all(p.returned_cents == 10_000 for p in odds)  # the wagers come back in full
    progressive = only(settlement, 1, PayoutKind.PROGRESSIVE)
    assert (progressive.win_cents, progressive.capped_cents) == (meter, 0)
    assert envy(settlement, 1) == {2: 500}
    assert envy(settlement, 2) == {1: 100_000}
    assert only(settlement, 2).win_cents == 20 * 500


def test_688a12_e_max_payout_is_per_player_and_leaves_smaller_wins_alone() -> None:
    rules = TableRules("T1", bonus=FORTUNE, max_payout_cents=5_000_000)
    settlement = settle_round(
        rules,
        dealt({1: SEVEN_SF, 2: FIVE_ACES}, [(1, Spot.BONUS, 1000), (2, Spot.BONUS, 30_000)]),
    )
    # Seat 1: 5,000 x $10 = exactly $50,000, not cut. Seat 2: 250 x $300 = $75,000, cut.
    assert (only(settlement, 1).win_cents, only(settlement, 1).capped_cents) == (5_000_000, 0)
    assert (only(settlement, 2).win_cents, only(settlement, 2).capped_cents) == (
        5_000_000,
        2_500_000,
    )


def configured(
    max_payout_cents: int | None, minimum_wager_cents: int, seats: int
) -> TableConfigured:
    return TableConfigured(
        event_id="e1",
        at="2024-01-01T00:00:00Z",
        table_id="T1",
        paytables={"fortune-1": paytable_text("fortune-1")},
        seats=seats,
        minimum_wager_cents=minimum_wager_cents,
        bonus="fortune-1",
        envy_includes_dealer=False,
        max_payout_cents=max_payout_cents,
    )


def test_688a12_e_max_payout_below_50000_dollars_is_refused() -> None:
    with pytest.raises(TableRulesError, match=r"688a\.12"):
        table_rules(configured(4_999_999, 100, 6))
    assert table_rules(configured(5_000_000, 100, 6)).max_payout_cents == 5_000_000


def test_688a12_e_max_payout_below_the_most_one_player_wins_at_the_minimum_is_refused() -> None:
    # Two seats: $20 x 5,000 = $100,000 plus $1,000 Envy for the other player's hand (never
    # the dealer's, § 688a.1).
    floor = 20 * 100 * 5000 + 100_000
    with pytest.raises(TableRulesError, match=r"688a\.12"):
        table_rules(configured(floor - 1, 2000, 2))
    assert table_rules(configured(floor, 2000, 2)).max_payout_cents == floor
    alone = 20 * 100 * 5000  # one seat: no other player, so no Envy to count
    assert table_rules(configured(alone, 2000, 1)).max_payout_cents == alone


def test_688a12_e_floor_of_a_table_journaled_before_688a1_counts_the_dealers_envy() -> None:
    old = msgspec.structs.replace(configured(None, 2000, 1), envy_includes_dealer=msgspec.UNSET)
    floor = 20 * 100 * 5000 + 100_000  # the dealer's hand counted, as it was paid then
    with pytest.raises(TableRulesError, match=r"688a\.12"):
        table_rules(msgspec.structs.replace(old, max_payout_cents=floor - 1))
