"""Settling a round pays what the rules say, on hand-built rounds and the real seed paytables.

docs/money.md, "Payouts of a round", and docs/rules.md.

Every expected amount is worked out by hand in the test from the paytable's printed value:
Fortune odds (N to 1 with the wager returned, a push, a loss), Ace High with the dealer's and
the player's hands, progressive fixed and percent-of-meter pays (wager returned or not), two
hits on one pool in one round taken seat by seat or split, pending verification, the tax flag,
and the rounds that must be refused. Envy bonuses and the § 688a.12(e) maximum payout are
tests/ledger/test_settlement_envy.py.

Hands used (checked against the paytables in the tests themselves):

* ``Ac Ad Ah As Jk 2d 3d``: five aces (the semi-wild joker plays as the fifth ace);
* ``3c 4c 5c 6c 7c 8c 9c``: a natural seven-card straight flush;
* ``Ts Js Qs Ks As Kh Qh``: a royal flush plus a natural suited king-queen (royal match).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import pytest
from support.rules.settlement_rig import (
    ACE_HIGH,
    DEALER_NOTHING,
    FIVE_ACES,
    FORTUNE,
    PROG1,
    PROG4,
    PROG5,
    ROYAL_MATCH,
    ROYAL_MATCH_DIAMONDS,
    SEED,
    SEVEN_SF,
    SEVEN_SF_HEARTS,
    dealt,
    only,
    pool_at,
)

from controller.ledger.settlement import (
    HitOrder,
    PayoutKind,
    PayoutStatus,
    SettlementError,
    TableRules,
    settle_round,
)
from controller.rules.cards import HandError
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from controller.rules.paytable import Paytable

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
