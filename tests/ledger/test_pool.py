"""A progressive pool obeys the money rules of docs/money.md, cent for cent.

Each test is one rule, named after the paragraph it comes from: exact contributions with the
sub-cent remainders carried, the reserve, a 100 % hit reseeding from the reserve first and the
house for the rest, percent pays rounded down with the sub-cent part left on the meter, the
limit and its overflow, split pays and the last 25 hits (documented adjustments, terms that wait
for the jackpot to be won and void refunds are tests/ledger/test_pool_corrections.py). After
every step the pool's books balance exactly:

    contributions + house funding + adjustments == meter + reserve + overflow + paid
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from support.ledger.pool_books import DOLLAR, SEED, balanced, contributed, hit

from controller.ledger.pool import LAST_HITS, Pool, PoolError, PoolTerms

# --- contributions ------------------------------------------------------------------------


def test_money_pool_opens_at_its_seed_funded_by_the_house() -> None:
    pool = balanced(Pool.open("P1", PoolTerms(SEED, Fraction(28, 100))))
    assert pool.meter == SEED
    assert pool.meter_cents == SEED
    assert pool.house_funding_cents == SEED
    assert pool.reserve == pool.overflow == pool.contributions == 0
    assert pool.paid_cents == pool.hits_count == 0


def test_money_contribution_carries_sub_cent_remainders() -> None:
    # 0.75% of a $1 wager is 3/4 of a cent: the meter shows whole cents, nothing is lost.
    pool = Pool.open("P1", PoolTerms(SEED, Fraction(3, 400)))
    shown = []
    for count in range(1, 1001):
        pool, contribution = pool.contribute(DOLLAR)
        balanced(pool)
        assert contribution.to_meter == Fraction(3, 4)
        assert isinstance(contribution.to_meter, Fraction)
        assert pool.meter == SEED + Fraction(3 * count, 4)
        shown.append(pool.meter_cents)
    assert shown[:8] == [SEED, SEED + 1, SEED + 2, SEED + 3, SEED + 3, SEED + 4, SEED + 5, SEED + 6]
    # 1,000 wagers x 3/4 cent = exactly $7.50; rounding each one would have lost $2.50 or more.
    assert pool.meter == SEED + 750
    assert pool.meter_cents == SEED + 750
    assert pool.contributions == 750


def test_money_contribution_is_wager_times_rate_exactly_for_an_awkward_rate() -> None:
    # 28% of $1 is 28 cents; 0.28% of $3.33 is 0.9324 cents, carried exactly.
    pool = Pool.open("P1", PoolTerms(SEED, Fraction(28, 10_000)))
    pool = contributed(pool, 333, 3)
    assert pool.meter == SEED + Fraction(3 * 333 * 28, 10_000)
    assert pool.meter_cents == SEED + 2  # 2.7972 cents shows as 2


def test_money_reserve_rate_goes_to_the_reserve_exactly() -> None:
    # Progressive Paytable 4: $5 wager, 1% to the meter and 1% to the reserve.
    pool = Pool.open("P4", PoolTerms(SEED, Fraction(1, 100), Fraction(1, 100)))
    pool, contribution = pool.contribute(5 * DOLLAR)
    balanced(pool)
    assert contribution.to_meter == 5
    assert contribution.to_reserve == 5
    assert pool.meter == SEED + 5
    assert pool.reserve == 5
    assert pool.contributions == 10
    # A fractional reserve rate carries its sub-cent remainder too: 0.3% of $1 = 0.3 cent.
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100), Fraction(3, 1000)))
    pool = contributed(pool, DOLLAR, 7)
    assert pool.reserve == Fraction(21, 10)
    assert pool.reserve_cents == 2


def test_money_meters_pool_counts_qualifying_wagers_and_amount_in() -> None:
    pool = contributed(Pool.open("P", PoolTerms(SEED, Fraction(28, 100))), DOLLAR, 12)
    assert pool.wagers_count == 12
    assert pool.wagers_cents == 12 * DOLLAR


def test_rules_8_non_positive_wager_contributes_nothing() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(28, 100)))
    for wager in (0, -100):
        with pytest.raises(PoolError):
            pool.contribute(wager)


@pytest.mark.parametrize(
    ("seed", "rate", "reserve", "limit"),
    [
        (-1, Fraction(1, 10), Fraction(0), None),
        (SEED, Fraction(-1, 10), Fraction(0), None),
        (SEED, Fraction(1, 10), Fraction(-1, 100), None),
        (SEED, Fraction(9, 10), Fraction(2, 10), None),
        (SEED, Fraction(1, 10), Fraction(0), SEED - 1),
    ],
)
def test_rules_8_unreasonable_terms_are_refused(
    seed: int, rate: Fraction, reserve: Fraction, limit: int | None
) -> None:
    with pytest.raises(PoolError):
        PoolTerms(seed, rate, reserve, limit)


# --- 100 % hits and reseeding -------------------------------------------------------------


def test_money_full_hit_resets_to_seed_reserve_funding_first_and_house_the_rest() -> None:
    # 28% to the meter and 2% to the reserve of 100 wagers of $100.
    pool = Pool.open("P", PoolTerms(SEED, Fraction(28, 100), Fraction(2, 100)))
    pool = contributed(pool, 100 * DOLLAR, 100)
    assert pool.meter == SEED + 280_000
    assert pool.reserve == 20_000
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.paid_cents == SEED + 280_000
    assert payment.reset
    assert payment.reseed_cents == SEED
    assert payment.from_reserve_cents == 20_000
    assert payment.from_house_cents == SEED - 20_000
    assert pool.meter == SEED
    assert pool.reserve == 0
    assert pool.reserve_funding_cents == 20_000
    assert pool.house_funding_cents == SEED + SEED - 20_000  # the opening seed and this reseed
    assert pool.paid_cents == SEED + 280_000
    assert pool.hits_count == 1


def test_money_reserve_that_covers_the_seed_funds_it_all_and_keeps_the_rest() -> None:
    seed = 500
    pool = Pool.open("P", PoolTerms(seed, Fraction(10, 100), Fraction(10, 100)))
    pool = contributed(pool, DOLLAR, 100)
    assert (pool.meter, pool.reserve) == (Fraction(1500), Fraction(1000))
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert (payment.paid_cents, payment.from_reserve_cents, payment.from_house_cents) == (
        1500,
        500,
        0,
    )
    assert pool.meter == seed
    assert pool.reserve == 500
    assert pool.house_funding_cents == seed  # only the opening seed


def test_money_reserve_funds_whole_cents_only_and_keeps_its_sub_cent_part() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100), Fraction(3, 1000)))
    pool = contributed(pool, DOLLAR, 5)  # reserve 1.5 cents, meter seed + 5
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.from_reserve_cents == 1
    assert payment.from_house_cents == SEED - 1
    assert pool.reserve == Fraction(1, 2)
    assert pool.meter == SEED


def test_money_full_hit_pays_whole_cents_and_sub_cent_part_stays_on_meter() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(3, 400)))
    pool = contributed(pool, DOLLAR, 3)  # meter seed + 2.25 cents
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.paid_cents == SEED + 2
    assert pool.meter == SEED + Fraction(1, 4)
    assert pool.meter_cents == SEED
    assert payment.from_house_cents == SEED


# --- percent hits -------------------------------------------------------------------------


def test_money_percent_hit_pays_meter_times_percent_rounded_down_to_the_cent() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(3, 400)))
    pool = pool.adjust("meter", SEED)
    pool = contributed(pool, DOLLAR, 5)  # meter $20,000.0375
    before = pool.meter
    assert before == 2 * SEED + Fraction(15, 4)
    pool, payment = pool.pay(Fraction(1, 10))
    balanced(pool)
    # 10% of 2,000,003.75 cents is 200,000.375: paid 200,000, the 0.375 stays on the meter.
    assert payment.paid_cents == 200_000
    assert not payment.reset
    assert payment.reseed_cents == 0
    assert pool.meter == before - 200_000
    assert pool.meter == 1_800_003 + Fraction(3, 4)
    assert pool.meter_cents == 1_800_003


def test_money_percent_hit_rounds_down_never_to_nearest() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", 999_999)
    pool, payment = pool.pay(Fraction(1, 10))  # 10% of 1,999,999 = 199,999.9
    balanced(pool)
    assert payment.paid_cents == 199_999
    assert pool.meter == 1_800_000


def test_money_ten_percent_hit_below_seed_is_funded_back_to_seed() -> None:
    # Meter $10,500, seed $10,000: 10% pays $1,050 and leaves $9,450; $550 brings it to the seed,
    # $100 from the reserve and $450 from the house.
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", 50_000)
    pool = pool.adjust("reserve", 10_000)
    pool, payment = pool.pay(Fraction(1, 10))
    balanced(pool)
    assert payment.paid_cents == 105_000
    assert not payment.reset
    assert payment.reseed_cents == 55_000
    assert payment.from_reserve_cents == 10_000
    assert payment.from_house_cents == 45_000
    assert pool.meter == SEED
    assert pool.reserve == 0


def test_money_percent_hit_does_not_apply_queued_terms() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", SEED)
    pool = pool.change_terms(PoolTerms(2 * SEED, Fraction(5, 100)), 2, now=False)
    pool, payment = pool.pay(Fraction(1, 10))
    balanced(pool)
    assert not payment.terms_applied
    assert pool.terms.seed_cents == SEED
    assert pool.pending_terms is not None


@pytest.mark.parametrize("percent", [Fraction(0), Fraction(-1, 10), Fraction(11, 10)])
def test_money_meter_pay_is_above_zero_and_at_most_the_whole_meter(percent: Fraction) -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100)))
    with pytest.raises(PoolError):
        pool.pay(percent)


# --- limit and overflow -------------------------------------------------------------------


def test_money_contributions_above_the_limit_go_to_overflow() -> None:
    seed, limit = 1000, 1100
    pool = Pool.open("P", PoolTerms(seed, Fraction(1, 2), limit_cents=limit))
    pool = pool.adjust("meter", 80)  # 1,080 cents
    pool, contribution = pool.contribute(DOLLAR)  # 50 cents: 20 fit, 30 overflow
    balanced(pool)
    assert contribution.to_meter == 20
    assert contribution.to_overflow == 30
    assert pool.meter == limit
    assert pool.overflow == 30
    pool, contribution = pool.contribute(DOLLAR)
    balanced(pool)
    assert (contribution.to_meter, contribution.to_overflow) == (Fraction(0), Fraction(50))
    assert pool.meter == limit
    assert pool.overflow == 80
    assert pool.contributions == 100  # all of it is accounted for


def test_money_limit_splits_a_sub_cent_contribution_exactly() -> None:
    pool = Pool.open("P", PoolTerms(1000, Fraction(3, 400), limit_cents=1001))
    pool = contributed(pool, DOLLAR, 2)  # 1.5 cents: 1 fits, 0.5 overflows
    assert pool.meter == 1001
    assert pool.overflow == Fraction(1, 2)


def test_money_after_a_reset_the_overflow_moves_back_onto_the_meter_up_to_the_limit() -> None:
    seed, limit = 1000, 1100
    pool = Pool.open("P", PoolTerms(seed, Fraction(1, 2), limit_cents=limit))
    pool = contributed(pool, DOLLAR, 8)  # 400 cents: 100 to the meter, 300 to overflow
    assert (pool.meter, pool.overflow) == (Fraction(limit), Fraction(300))
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.paid_cents == limit
    assert payment.from_overflow == 100
    assert pool.meter == limit  # seed + 100 from the overflow
    assert pool.overflow == 200
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.from_overflow == 100
    assert pool.overflow == 100
    pool, payment = pool.pay(Fraction(1))
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.from_overflow == 0
    assert pool.meter == seed
    assert pool.overflow == 0


def test_money_overflow_that_fits_under_the_limit_moves_back_whole() -> None:
    pool = Pool.open("P", PoolTerms(1000, Fraction(1, 2), limit_cents=1100))
    pool = contributed(pool, DOLLAR, 3)  # 150 cents: 100 to the meter, 50 overflow
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.from_overflow == 50
    assert (pool.meter, pool.overflow) == (Fraction(1050), Fraction(0))
    # The reseed was the house's (no reserve): the overflow is players' money, not funding.
    assert payment.from_house_cents == 1000


# --- split pays and hit history -----------------------------------------------------------


def test_money_split_pay_rounds_each_share_down_and_keeps_the_remainder_on_the_meter() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", SEED + 30)
    before = pool.meter  # 2,000,030 cents
    pool, payment = pool.pay(Fraction(1, 10), ways=2)
    balanced(pool)
    # 10% is 200,003 cents; each of two winners gets 100,001, the odd cent stays on the meter.
    assert payment.paid_cents == 2 * 100_001
    assert pool.meter == before - 200_002
    pool, payment = pool.pay(Fraction(1, 10), ways=3)
    balanced(pool)
    # 10% of 1,800,028 is 180,002.8; a third is 60,000.93: each gets 60,000.
    assert payment.paid_cents == 3 * 60_000
    assert pool.meter == before - 200_002 - 180_000


def test_money_split_full_hit_shares_the_meter_and_resets_once() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", 501)
    pool, payment = pool.pay(Fraction(1), ways=2)  # 1,000,501 cents between two winners
    balanced(pool)
    assert payment.paid_cents == 2 * 500_250
    assert payment.reset
    assert pool.hits_count == 1
    # The odd cent stayed on the meter and counts toward the seed; the house funds the rest.
    assert payment.from_house_cents == SEED - 1
    assert pool.meter == SEED


def test_money_pay_needs_at_least_one_winner() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100)))
    with pytest.raises(PoolError):
        pool.pay(Fraction(1), ways=0)


def test_money_meters_pool_keeps_the_last_25_hits_newest_first() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", SEED)
    meters = []
    for number in range(30):
        meters.append(pool.meter_cents)
        pool, payment = pool.pay(Fraction(1, 100), hit(number))
        balanced(pool)
        assert pool.last_hits[0].hit_id == f"hit-{number}"
        assert pool.last_hits[0].amount_cents == payment.paid_cents
        assert pool.last_hits[0].meter_before_cents == meters[-1]
    assert LAST_HITS == 25
    assert len(pool.last_hits) == 25
    assert [record.hit_id for record in pool.last_hits] == [f"hit-{n}" for n in range(29, 4, -1)]
    assert pool.hits_count == 30
    assert pool.paid_cents == sum(record.amount_cents for record in pool.last_hits) + sum(
        meter // 100 for meter in meters[:5]
    )


def test_money_identity_holds_through_a_long_mixed_history() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(7, 1000), Fraction(3, 1000), SEED + 50_000))
    for step in range(400):
        pool, _ = pool.contribute(DOLLAR * (1 + step % 7))
        balanced(pool)
        if step % 37 == 0:
            pool, _ = pool.pay(Fraction(1, 10), hit(step))
        if step % 101 == 0:
            pool, _ = pool.pay(Fraction(1), hit(step), ways=2)
        if step % 53 == 0:
            pool = pool.adjust("reserve", 11)
        if step == 200:
            pool = pool.change_terms(PoolTerms(SEED // 2, Fraction(3, 400)), 2, now=False)
        balanced(pool)
    assert pool.terms.seed_cents == SEED // 2  # applied at the 100 % hit of step 202
