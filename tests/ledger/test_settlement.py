"""Settling a round pays what the rules say, on hand-built rounds and the real seed paytables.

docs/money.md, "Payouts of a round", and docs/rules.md.

Every expected amount is worked out by hand in the test from the paytable's printed value:
Fortune odds (N to 1 with the wager returned, a push, a loss), Ace High with the dealer's and
the player's hands, progressive fixed and percent-of-meter pays (wager returned or not), two
hits on one pool in one round taken seat by seat or split, Envy bonuses, the § 688a.12(e)
maximum payout, pending verification, the tax flag, and the rounds that must be refused.

Hands used (checked against the paytables in the tests themselves):

* ``Ac Ad Ah As Jk 2d 3d``: five aces (the semi-wild joker plays as the fifth ace);
* ``3c 4c 5c 6c 7c 8c 9c``: a natural seven-card straight flush;
* ``Ts Js Qs Ks As Kh Qh``: a royal flush plus a natural suited king-queen (royal match).
"""

from __future__ import annotations

from fractions import Fraction
from importlib import resources
from typing import TYPE_CHECKING

import msgspec
import pytest

from controller.events import TableConfigured
from controller.ledger.pool import Pool, PoolTerms
from controller.ledger.settlement import (
    HitOrder,
    Payout,
    PayoutKind,
    PayoutStatus,
    SeatWager,
    Settlement,
    SettlementError,
    TableRound,
    TableRules,
    settle_round,
)
from controller.ledger.table_rules import TableRulesError, table_rules
from controller.rules.cards import HandError, SevenCardHand
from controller.rules.paytable_files import seed_paytables
from controller.rules.spots import DEALER_SEAT, Spot

if TYPE_CHECKING:
    from controller.rules.paytable import Paytable

TABLES = seed_paytables()
FORTUNE = TABLES["fortune-1"]
ACE_HIGH = TABLES["ace-high-1"]
PROG1 = TABLES["progressive-1"]  # $1, $10,000 seed, wager not returned, semi-wild
PROG4 = TABLES["progressive-4"]  # $5, $5,000 + % of meter, wager returned, Envy column
PROG5 = TABLES["progressive-5"]  # $1, $5,000 seed, fully wild joker

SEED = 1_000_000
ONE = Fraction(1, 100)  # progressive-4's 1 % rate of progression
FIVE_ACES = "Ac Ad Ah As Jk 2d 3d"
SEVEN_SF = "3c 4c 5c 6c 7c 8c 9c"
SEVEN_SF_HEARTS = "3h 4h 5h 6h 7h 8h 9h"
ROYAL_MATCH = "Ts Js Qs Ks As Kh Qh"
ROYAL_MATCH_DIAMONDS = "Td Jd Qd Kd Ad Kc Qc"
DEALER_NOTHING = "Kc Kd 2h 4s 6d 8s Tc"  # a pair of kings: no line on any table here


def hand(text: str) -> SevenCardHand:
    return SevenCardHand.parse(text)


def dealt(
    hands: dict[int, str],
    wagers: list[tuple[int, Spot, int]],
    dealer: str = DEALER_NOTHING,
) -> TableRound:
    return TableRound(
        "R1",
        hand(dealer),
        {seat: hand(cards) for seat, cards in hands.items()},
        tuple(SeatWager(seat, spot, cents) for seat, spot, cents in wagers),
    )


def pool_at(meter_cents: int, seed_cents: int = SEED, rate: Fraction = Fraction(28, 100)) -> Pool:
    pool = Pool.open("P1", PoolTerms(seed_cents, rate))
    if meter_cents != seed_cents:
        pool = pool.adjust("meter", meter_cents - seed_cents)
    return pool


def only(settlement: Settlement, seat: int, kind: PayoutKind | None = None) -> Payout:
    found = [
        payout
        for payout in settlement.payouts
        if payout.seat == seat
        and payout.kind is not PayoutKind.ENVY
        and (kind is None or payout.kind is kind)
    ]
    assert len(found) == 1, found
    return found[0]


def envy(settlement: Settlement, seat: int) -> dict[int, int]:
    """Envy paid to ``seat``, by the seat whose hand earned it (0 is the dealer)."""
    paid: dict[int, int] = {}
    for payout in settlement.payouts:
        if payout.seat == seat and payout.kind is PayoutKind.ENVY:
            assert payout.envy_from_seat is not None
            assert payout.envy_from_seat not in paid
            paid[payout.envy_from_seat] = payout.win_cents
    return paid


def paytable_text(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


# --- Fortune Bonus odds -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "line", "to_one"),
    [
        (SEVEN_SF, "seven-card-straight-flush-natural", 5000),
        (ROYAL_MATCH, "royal-flush-plus-natural-suited-king-queen", 1000),
        ("3h 4h 5h 6h 7h 8h Jk", "seven-card-straight-flush-with-joker", 750),
        (FIVE_ACES, "five-aces", 250),
        ("Th Jh Qh Kh Ah 3c 5d", "royal-flush", 100),
        ("4c 5c 6c 7c 8c Qd 2s", "straight-flush", 50),
        ("9c 9d 9h 9s 2c 5d Jh", "four-of-a-kind", 20),
        ("Qc Qd Qh 7s 7c 3d 2c", "full-house", 5),
        ("2c 5c 7c 9c Jc 3d 4h", "flush", 4),
        ("7c 7d 7h Js 2c 4d 9h", "three-of-a-kind", 3),
        ("5c 6h 7h 8c 9d Js 2c", "straight", 2),
    ],
)
def test_money_payouts_fortune_bonus_pays_n_to_1_on_the_highest_line_and_returns_the_wager(
    cards: str, line: str, to_one: int
) -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    settlement = settle_round(rules, dealt({1: cards}, [(1, Spot.BONUS, 500)]))
    payout = only(settlement, 1)
    assert payout.kind is PayoutKind.WIN
    assert payout.line == line
    assert payout.win_cents == 500 * to_one
    assert payout.returned_cents == 500
    assert payout.total_cents == 500 * (to_one + 1)
    assert payout.from_meter_cents == 0
    assert settlement.pool is None
    assert settlement.meter_payments == ()


def test_money_payouts_fortune_three_pair_is_a_push_returning_the_wager() -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    settlement = settle_round(rules, dealt({1: "Qc Qd 9h 9s 5c 5h 7d"}, [(1, Spot.BONUS, 500)]))
    payout = only(settlement, 1)
    assert payout.kind is PayoutKind.PUSH
    assert payout.line == "three-pair"
    assert (payout.win_cents, payout.returned_cents, payout.total_cents) == (0, 500, 500)


@pytest.mark.parametrize("cards", ["Jc Jd 3h 6s 7h 9d Qh", "As Qd 9h 7c 5s 3d 2c"])
def test_money_payouts_fortune_hand_without_a_line_loses_the_wager(cards: str) -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    payout = only(settle_round(rules, dealt({1: cards}, [(1, Spot.BONUS, 500)])), 1)
    assert payout.kind is PayoutKind.LOSS
    assert payout.line is None
    assert payout.total_cents == 0


# --- Ace High -----------------------------------------------------------------------------

DEALER_ACE_HIGH = "As Kd 9h 7c 5s 3d 2h"
DEALER_ACE_HIGH_JOKER = "Jk Kd Qh 9h 7c 5s 3d"  # the joker plays as the ace


@pytest.mark.parametrize(
    ("dealer", "player", "line", "to_one"),
    [
        (DEALER_ACE_HIGH, "Ah Ks 8d 6c 4h 2s Tc", "dealer-and-player-ace-high", 20),
        (DEALER_ACE_HIGH_JOKER, "Ah Ks 8d 6c 4h 2s Tc", "dealer-and-player-ace-high", 20),
        (DEALER_ACE_HIGH_JOKER, "Tc Td 8h 6s 4c 2c Jd", "dealer-only-ace-high-with-joker", 10),
        (DEALER_ACE_HIGH, "Qc Qd 8h 6s 4c 3c Jd", "dealer-only-ace-high-no-joker", 8),
    ],
)
def test_rules_5_7_ace_high_pays_on_the_dealer_and_player_hands(
    dealer: str, player: str, line: str, to_one: int
) -> None:
    rules = TableRules("T1", ace_high=ACE_HIGH)
    table_round = dealt({1: player}, [(1, Spot.ACE_HIGH, 1000)], dealer=dealer)
    payout = only(settle_round(rules, table_round), 1)
    assert payout.kind is PayoutKind.WIN
    assert payout.line == line
    assert payout.win_cents == 1000 * to_one
    assert payout.returned_cents == 1000


@pytest.mark.parametrize(
    "dealer",
    [
        DEALER_NOTHING,  # a pair
        "As Ks 9s 7s 2s 4d 6h",  # ace on top, but a flush
        "Jk Kd Qh Jc Ts 5d 3h",  # the joker completes A-K-Q-J-T: a straight
        "Jk Ad 9h 7c 5s 3d Qh",  # joker + ace is a pair of aces
    ],
)
def test_rules_5_7_ace_high_loses_when_the_dealer_hand_is_not_a_pai_gow_ace_high(
    dealer: str,
) -> None:
    rules = TableRules("T1", ace_high=ACE_HIGH)
    player = "Ah Qd 8d 6c 4h 3c 9c"  # an ace-high player hand does not help
    payout = only(settle_round(rules, dealt({1: player}, [(1, Spot.ACE_HIGH, 1000)], dealer)), 1)
    assert payout.kind is PayoutKind.LOSS


# --- progressive pays ---------------------------------------------------------------------


def test_money_payouts_progressive_fixed_pay_is_the_whole_amount_if_the_wager_is_not_returned() -> (
    None
):
    rules = TableRules("T1", progressive=PROG1, pool_id="P1")
    pool = pool_at(1_234_567)
    table_round = dealt({1: "Th Jh Qh Kh Ah 3c 5d"}, [(1, Spot.PROGRESSIVE, 100)])
    settlement = settle_round(rules, table_round, pool)
    payout = only(settlement, 1)
    assert payout.kind is PayoutKind.PROGRESSIVE
    assert payout.line == "royal-flush"
    assert (payout.win_cents, payout.returned_cents, payout.from_meter_cents) == (50_000, 0, 0)
    assert payout.pool_id == "P1"
    assert settlement.meter_payments == ()
    assert settlement.pool == pool  # a fixed pay never touches the meter


def test_money_payouts_progressive_fixed_pay_returns_the_wager_where_the_paytable_says_so() -> None:
    rules = TableRules("T1", progressive=PROG4, pool_id="P1")
    table_round = dealt({1: "9c 9d 9h 9s 2c 5d Jh"}, [(1, Spot.PROGRESSIVE, 500)])
    payout = only(settle_round(rules, table_round, pool_at(SEED)), 1)
    assert payout.line == "four-of-a-kind"
    assert (payout.win_cents, payout.returned_cents, payout.total_cents) == (10_000, 500, 10_500)


def test_money_payouts_progressive_loss_returns_nothing() -> None:
    for table, wager in ((PROG1, 100), (PROG4, 500)):
        rules = TableRules("T1", progressive=table, pool_id="P1")
        table_round = dealt({1: "Jc Jd 3h 6s 7h 9d Qh"}, [(1, Spot.PROGRESSIVE, wager)])
        payout = only(settle_round(rules, table_round, pool_at(SEED)), 1)
        assert payout.kind is PayoutKind.LOSS
        assert payout.total_cents == 0


def test_money_payouts_progressive_percent_pay_is_rounded_down_and_the_rest_stays() -> None:
    rules = TableRules("T1", progressive=PROG1, pool_id="P1")
    pool = pool_at(2_000_005)
    settlement = settle_round(rules, dealt({1: FIVE_ACES}, [(1, Spot.PROGRESSIVE, 100)]), pool)
    payout = only(settlement, 1)
    # 10% of 2,000,005 cents is 200,000.5: the player gets 200,000, 1,800,005 stays.
    assert payout.line == "five-aces"
    assert (payout.win_cents, payout.from_meter_cents, payout.returned_cents) == (
        200_000,
        200_000,
        0,
    )
    assert settlement.pool is not None
    assert settlement.pool.meter == 1_800_005
    assert settlement.pool.paid_cents == 200_000
    (payment,) = settlement.meter_payments
    assert payment.hit_id == payout.payout_id


def test_money_payouts_fixed_plus_hundred_percent_of_meter_pays_both_and_reseeds() -> None:
    # Progressive Paytable 4, "$5,000/100% of meter": $5,000 plus the whole meter, wager back.
    rules = TableRules("T1", progressive=PROG4, pool_id="P1")
    pool = pool_at(3_456_789, rate=Fraction(1, 100))
    settlement = settle_round(rules, dealt({1: SEVEN_SF}, [(1, Spot.PROGRESSIVE, 500)]), pool)
    payout = only(settlement, 1)
    assert payout.line == "seven-card-straight-flush-natural"
    assert payout.from_meter_cents == 3_456_789
    assert payout.win_cents == 500_000 + 3_456_789
    assert payout.returned_cents == 500
    assert settlement.pool is not None
    assert settlement.pool.meter == SEED
    (payment,) = settlement.meter_payments
    assert payment.reset
    assert payment.from_house_cents == SEED


@pytest.mark.parametrize(("table", "wager"), [(PROG1, 500), (PROG1, 99), (PROG4, 100)])
def test_rules_8_progressive_wager_must_equal_the_paytable_wager(
    table: Paytable, wager: int
) -> None:
    rules = TableRules("T1", progressive=table, pool_id="P1")
    with pytest.raises(SettlementError, match="progressive wager"):
        settle_round(rules, dealt({1: FIVE_ACES}, [(1, Spot.PROGRESSIVE, wager)]), pool_at(SEED))


# --- several hits on one pool in one round ------------------------------------------------


def test_money_payouts_two_hits_in_a_round_are_paid_seat_1_first_from_the_meter_as_it_stands() -> (
    None
):
    rules = TableRules("T1", progressive=PROG1, pool_id="P1")
    pool = pool_at(2_000_005)
    # Wagers listed out of order: seat 1 (five aces, 10%) is still paid first.
    table_round = dealt(
        {1: FIVE_ACES, 2: SEVEN_SF},
        [(2, Spot.PROGRESSIVE, 100), (1, Spot.PROGRESSIVE, 100)],
    )
    settlement = settle_round(rules, table_round, pool)
    first, second = only(settlement, 1), only(settlement, 2)
    assert first.from_meter_cents == 200_000  # 10% of 2,000,005, rounded down
    assert second.from_meter_cents == 1_800_005  # 100% of what was left
    assert [p.paid_cents for p in settlement.meter_payments] == [200_000, 1_800_005]
    assert [p.hit_id for p in settlement.meter_payments] == [first.payout_id, second.payout_id]
    assert settlement.pool is not None
    assert settlement.pool.meter == SEED
    assert settlement.pool.paid_cents == 2_000_005


def test_money_payouts_10_percent_hit_after_a_reset_takes_meter_below_seed_and_is_refunded() -> (
    None
):
    rules = TableRules("T1", progressive=PROG1, pool_id="P1")
    pool = pool_at(2_000_005)
    table_round = dealt(
        {1: SEVEN_SF, 2: FIVE_ACES}, [(1, Spot.PROGRESSIVE, 100), (2, Spot.PROGRESSIVE, 100)]
    )
    settlement = settle_round(rules, table_round, pool)
    assert only(settlement, 1).from_meter_cents == 2_000_005
    # Seat 2 is paid 10% of the reseeded $10,000: $1,000; the house tops it back up to $10,000.
    assert only(settlement, 2).from_meter_cents == 100_000
    reset, partial = settlement.meter_payments
    assert (reset.reset, reset.from_house_cents) == (True, SEED)
    assert (partial.reset, partial.reseed_cents, partial.from_house_cents) == (
        False,
        100_000,
        100_000,
    )
    assert settlement.pool is not None
    assert settlement.pool.meter == SEED
    assert settlement.pool.house_funding_cents == SEED + SEED + 100_000


def test_money_payouts_two_full_hits_sequential_second_gets_the_new_seed() -> None:
    rules = TableRules("T1", progressive=PROG1, pool_id="P1")
    table_round = dealt(
        {1: SEVEN_SF, 2: SEVEN_SF_HEARTS}, [(1, Spot.PROGRESSIVE, 100), (2, Spot.PROGRESSIVE, 100)]
    )
    settlement = settle_round(rules, table_round, pool_at(2_000_001))
    assert only(settlement, 1).from_meter_cents == 2_000_001
    assert only(settlement, 2).from_meter_cents == SEED
    assert settlement.pool is not None
    assert settlement.pool.hits_count == 2


def test_money_payouts_split_option_shares_one_full_hit_equally() -> None:
    rules = TableRules("T1", progressive=PROG1, pool_id="P1", hit_order=HitOrder.SPLIT)
    table_round = dealt(
        {1: SEVEN_SF, 2: SEVEN_SF_HEARTS}, [(1, Spot.PROGRESSIVE, 100), (2, Spot.PROGRESSIVE, 100)]
    )
    settlement = settle_round(rules, table_round, pool_at(2_000_001))
    # 2,000,001 cents between two: 1,000,000 each; the odd cent stays toward the new seed.
    assert only(settlement, 1).from_meter_cents == 1_000_000
    assert only(settlement, 2).from_meter_cents == 1_000_000
    (payment,) = settlement.meter_payments
    assert payment.paid_cents == 2_000_000
    assert payment.from_house_cents == SEED - 1
    assert settlement.pool is not None
    assert settlement.pool.meter == SEED
    assert settlement.pool.hits_count == 1


def test_money_payouts_split_option_shares_a_percent_line_and_each_keeps_the_fixed_part() -> None:
    # Progressive Paytable 4, royal match "$5,000/20% of meter", hit by seats 1 and 2.
    table_round = dealt(
        {1: ROYAL_MATCH, 2: ROYAL_MATCH_DIAMONDS},
        [(1, Spot.PROGRESSIVE, 500), (2, Spot.PROGRESSIVE, 500)],
        dealer="2c 3s 5h 7d 9c 4h Jh",
    )
    meter = 2_000_017
    split = settle_round(
        TableRules("T1", progressive=PROG4, pool_id="P1", hit_order=HitOrder.SPLIT),
        table_round,
        pool_at(meter, rate=Fraction(1, 100)),
    )
    # 20% of 2,000,017 = 400,003.4; half is 200,001.7: each gets 200,001.
    for seat in (1, 2):
        payout = only(split, seat)
        assert payout.line == "royal-flush-plus-natural-suited-king-queen"
        assert payout.from_meter_cents == 200_001
        assert payout.win_cents == 500_000 + 200_001
        assert payout.returned_cents == 500
    assert split.pool is not None
    assert split.pool.meter == meter - 400_002
    sequential = settle_round(
        TableRules("T1", progressive=PROG4, pool_id="P1"),
        table_round,
        pool_at(meter, rate=Fraction(1, 100)),
    )
    # Sequential: 20% of 2,000,017 = 400,003; then 20% of 1,600,014 = 320,002.
    assert only(sequential, 1).from_meter_cents == 400_003
    assert only(sequential, 2).from_meter_cents == 320_002


def test_money_payouts_sequential_hit_after_a_reset_is_paid_on_the_best_line_at_the_new_meter() -> (
    None
):
    # Progressive Paytable 5 (fully wild): five aces is both "Five aces" (10% of the meter) and
    # "Five-of-a-kind" ($1,000). At $20,000 the 10% pays more; after seat 1's reset to $5,000
    # the $1,000 pays more, and seat 2 is paid that.
    rules = TableRules("T1", progressive=PROG5, pool_id="P1")
    table_round = dealt(
        {1: SEVEN_SF, 2: FIVE_ACES}, [(1, Spot.PROGRESSIVE, 100), (2, Spot.PROGRESSIVE, 100)]
    )
    settlement = settle_round(rules, table_round, pool_at(2_000_000, 500_000, Fraction(17, 100)))
    assert only(settlement, 1).from_meter_cents == 2_000_000
    second = only(settlement, 2)
    assert second.line == "five-of-a-kind"
    assert (second.win_cents, second.from_meter_cents) == (100_000, 0)


def test_money_payouts_split_hit_after_a_reset_is_paid_on_its_best_line_at_that_meter() -> None:
    # The same round with the SPLIT option: no two seats share a line, so each hit is paid in
    # seat order from the meter as it stands, and a hand is paid on its highest-paying line.
    # After the reset to $5,000, "Five aces" is worth $500 and "Five-of-a-kind" $1,000.
    rules = TableRules("T1", progressive=PROG5, pool_id="P1", hit_order=HitOrder.SPLIT)
    table_round = dealt(
        {1: SEVEN_SF, 2: FIVE_ACES}, [(1, Spot.PROGRESSIVE, 100), (2, Spot.PROGRESSIVE, 100)]
    )
    settlement = settle_round(rules, table_round, pool_at(2_000_000, 500_000, Fraction(17, 100)))
    assert only(settlement, 1).from_meter_cents == 2_000_000
    second = only(settlement, 2)
    assert second.win_cents >= 100_000, (
        f"seat 2 paid {second.win_cents} cents on {second.line}; five-of-a-kind pays 100,000"
    )


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


# --- pending verification and the tax flag ------------------------------------------------

QUADS_A = "9c 9d 9h 9s 2c 5d Jh"
QUADS_B = "Qc Qd Qh Qs 2h 4d Tc"
DEALER_PLAIN = "Kc Kd 3s 5h 7d 8c 2s"


def test_money_payouts_payout_at_or_above_the_verification_amount_is_pending() -> None:
    rules = TableRules("T1", bonus=FORTUNE, verification_cents=120_000)
    settlement = settle_round(
        rules,
        dealt(
            {1: QUADS_A, 2: QUADS_B}, [(1, Spot.BONUS, 6000), (2, Spot.BONUS, 5999)], DEALER_PLAIN
        ),
    )
    assert only(settlement, 1).win_cents == 120_000
    assert only(settlement, 1).status is PayoutStatus.PENDING
    assert only(settlement, 2).win_cents == 119_980
    assert only(settlement, 2).status is PayoutStatus.PAID


def test_money_payouts_pending_jackpot_reseeds_the_meter_at_once() -> None:
    rules = TableRules("T1", progressive=PROG1, pool_id="P1", verification_cents=1_000_000)
    settlement = settle_round(
        rules, dealt({1: SEVEN_SF}, [(1, Spot.PROGRESSIVE, 100)]), pool_at(1_500_000)
    )
    payout = only(settlement, 1)
    assert payout.status is PayoutStatus.PENDING
    assert payout.from_meter_cents == 1_500_000
    assert settlement.pool is not None
    assert settlement.pool.meter == SEED


def test_money_payouts_tax_flag_needs_600_dollars_boundary() -> None:
    # Royal match pays 1,000 to 1, always above 300x the wager: only the $600 decides.
    rules = TableRules("T1", bonus=FORTUNE)
    at = only(settle_round(rules, dealt({1: ROYAL_MATCH}, [(1, Spot.BONUS, 60)])), 1)
    under = only(settle_round(rules, dealt({1: ROYAL_MATCH}, [(1, Spot.BONUS, 59)])), 1)
    assert (at.win_cents, at.tax_report, at.status) == (60_000, True, PayoutStatus.PAID)
    assert (under.win_cents, under.tax_report) == (59_000, False)


def test_money_payouts_tax_flag_needs_300_times_the_wager() -> None:
    # Five aces pays 250 to 1: $2,500 on $10 is over $600 but only 250x the wager.
    rules = TableRules("T1", bonus=FORTUNE)
    payout = only(settle_round(rules, dealt({1: FIVE_ACES}, [(1, Spot.BONUS, 1000)])), 1)
    assert payout.win_cents == 250_000
    assert not payout.tax_report
    # 1,000 to 1 is over 300x.
    payout = only(settle_round(rules, dealt({1: ROYAL_MATCH}, [(1, Spot.BONUS, 1000)])), 1)
    assert payout.tax_report


@pytest.mark.parametrize(
    ("threshold", "multiple", "flagged"),
    [
        (250_000, 250, True),  # both exactly at the boundary
        (250_001, 250, False),  # a cent under the threshold
        (250_000, 251, False),  # under the wager multiple
        (1, 1, True),
    ],
)
def test_money_payouts_tax_flag_thresholds_are_configurable_and_inclusive(
    threshold: int, multiple: int, flagged: bool
) -> None:
    rules = TableRules(
        "T1", bonus=FORTUNE, tax_threshold_cents=threshold, tax_wager_multiple=multiple
    )
    payout = only(settle_round(rules, dealt({1: FIVE_ACES}, [(1, Spot.BONUS, 1000)])), 1)
    assert payout.win_cents == 250_000
    assert payout.tax_report is flagged


# --- rounds that must be refused ----------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "dealer", "message"),
    [
        ({1: FIVE_ACES, 2: "Ac 5d 6h 8s Tc Qd Kh"}, DEALER_PLAIN, "duplicate card Ac"),
        ({1: "9c 9d 9h 9s 2h 5d Jh"}, "2h 3s 5c 7d 8c Ks Qs", "duplicate card 2h"),
        ({1: FIVE_ACES, 2: "Jk 5d 6h 8s Tc Qd Kh"}, DEALER_PLAIN, "two jokers"),
    ],
)
def test_rules_8_duplicate_cards_across_hands_are_refused(
    hands: dict[int, str], dealer: str, message: str
) -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    wagers = [(seat, Spot.BONUS, 500) for seat in hands]
    with pytest.raises(HandError, match=message):
        settle_round(rules, dealt(hands, wagers, dealer))


def test_rules_8_wager_for_a_seat_without_a_hand_is_refused() -> None:
    rules = TableRules("T1", bonus=FORTUNE)
    with pytest.raises(SettlementError, match="seat 2 has a wager but no hand"):
        settle_round(rules, dealt({1: FIVE_ACES}, [(1, Spot.BONUS, 500), (2, Spot.BONUS, 500)]))


def test_rules_8_two_wagers_on_one_spot_are_refused() -> None:
    rules = TableRules("T1", progressive=PROG1, pool_id="P1")
    pool = pool_at(SEED)
    table_round = dealt({1: SEVEN_SF}, [(1, Spot.PROGRESSIVE, 100), (1, Spot.PROGRESSIVE, 100)])
    with pytest.raises(SettlementError, match="two wagers"):
        settle_round(rules, table_round, pool)


def test_rules_8_wager_on_a_spot_the_table_does_not_offer_is_refused() -> None:
    with pytest.raises(SettlementError, match="no progressive"):
        settle_round(
            TableRules("T1", bonus=FORTUNE),
            dealt({1: SEVEN_SF}, [(1, Spot.PROGRESSIVE, 100)]),
            pool_at(SEED),
        )
    with pytest.raises(SettlementError, match="no bonus"):
        settle_round(TableRules("T1"), dealt({1: SEVEN_SF}, [(1, Spot.BONUS, 100)]))
    with pytest.raises(SettlementError, match="no Ace High"):
        settle_round(TableRules("T1"), dealt({1: SEVEN_SF}, [(1, Spot.ACE_HIGH, 100)]))


def test_rules_8_non_positive_wager_is_refused() -> None:
    with pytest.raises(SettlementError, match="above \\$0"):
        settle_round(TableRules("T1", bonus=FORTUNE), dealt({1: SEVEN_SF}, [(1, Spot.BONUS, 0)]))
