"""What changes a pool besides play: documented adjustments, terms changes, void refunds.

docs/money.md, "What moves money" (adjustments, changes of terms) and "Voids". Each test is one
rule, named after the paragraph it comes from; after every step the pool's books balance exactly
(tests/support/ledger/pool_books.py).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from math import floor

import pytest
from support.ledger.pool_books import DOLLAR, SEED, balanced, contributed, hit

from controller.ledger.pool import Pool, PoolError, PoolTerms

# --- adjustments --------------------------------------------------------------------------


def test_money_corrections_adjustment_is_tracked_and_keeps_the_books_balanced() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100)))
    pool = balanced(pool.adjust("meter", 12_345))
    pool = balanced(pool.adjust("reserve", 500))
    pool = balanced(pool.adjust("overflow", 70))
    pool = balanced(pool.adjust("meter", -345))
    assert pool.meter == SEED + 12_000
    assert (pool.reserve, pool.overflow) == (Fraction(500), Fraction(70))
    assert pool.adjustments_cents == 12_345 + 500 + 70 - 345


@pytest.mark.parametrize(
    ("account", "cents", "why"),
    [
        ("meter", 0, "must change"),
        ("reserve", -1, "below \\$0"),
        ("overflow", -1, "below \\$0"),
        ("meter", -1, "below its seed"),
        ("meter", 10_001, "above its limit"),
        ("jackpot", 100, "unknown account"),
    ],
)
def test_money_corrections_unreasonable_adjustment_is_refused(
    account: str, cents: int, why: str
) -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100), limit_cents=SEED + 10_000))
    with pytest.raises(PoolError, match=why):
        pool.adjust(account, cents)


def test_money_corrections_adjustment_to_exactly_the_seed_or_the_limit_is_allowed() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100), limit_cents=SEED + 10_000))
    up = balanced(pool.adjust("meter", 10_000))
    assert up.meter == SEED + 10_000
    down = balanced(up.adjust("meter", -10_000))
    assert down.meter == SEED


def test_money_corrections_adjustment_cannot_take_a_sub_cent_meter_below_its_seed() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(3, 400)))
    pool = contributed(pool, DOLLAR, 2)  # seed + 1.5 cents
    assert balanced(pool.adjust("meter", -1)).meter == SEED + Fraction(1, 2)
    with pytest.raises(PoolError):
        pool.adjust("meter", -2)


def test_money_corrections_reserve_cannot_be_adjusted_below_zero_by_a_sub_cent() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100), Fraction(3, 1000)))
    pool = contributed(pool, DOLLAR, 5)  # reserve 1.5 cents
    assert balanced(pool.adjust("reserve", -1)).reserve == Fraction(1, 2)
    with pytest.raises(PoolError):
        pool.adjust("reserve", -2)


# --- terms changes ------------------------------------------------------------------------


def test_money_changes_of_terms_config_change_waits_until_jackpot_is_won() -> None:
    old = PoolTerms(SEED, Fraction(1, 100))
    new = PoolTerms(2 * SEED, Fraction(5, 100), Fraction(1, 100), paytable="progressive-4")
    pool = Pool.open("P", old, revision=1)
    pool = balanced(pool.change_terms(new, 7, now=False))
    assert pool.terms == old
    assert pool.revision == 1
    assert pool.pending_terms == new
    assert pool.pending_revision == 7
    # Wagers keep contributing at the old rate until the jackpot is won.
    pool, contribution = pool.contribute(DOLLAR)
    assert contribution.to_meter == 1
    assert contribution.to_reserve == 0
    pool, payment = pool.pay(Fraction(1))
    balanced(pool)
    assert payment.terms_applied
    assert pool.terms == new
    assert pool.revision == 7
    assert pool.pending_terms is None
    assert pool.pending_revision is None
    assert pool.meter == 2 * SEED  # reseeded at the new seed
    assert payment.reseed_cents == 2 * SEED
    pool, contribution = pool.contribute(DOLLAR)
    assert (contribution.to_meter, contribution.to_reserve) == (Fraction(5), Fraction(1))


def test_money_changes_of_terms_config_change_applied_now_takes_effect_at_once() -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100)))
    pool = pool.adjust("reserve", 300_000)
    pool = pool.change_terms(PoolTerms(2 * SEED, Fraction(1, 100)), 2, now=False)
    new = PoolTerms(2 * SEED, Fraction(3, 100))
    pool = balanced(pool.change_terms(new, 3, now=True))
    assert pool.terms == new
    assert pool.revision == 3
    assert pool.pending_terms is None  # the deliberate reset replaces what was queued
    # The meter rises to the new seed, funded like any reseed: reserve first, then the house.
    assert pool.meter == 2 * SEED
    assert pool.reserve == 0
    assert pool.reserve_funding_cents == 300_000
    assert pool.house_funding_cents == SEED + SEED - 300_000


def test_money_changes_of_terms_config_change_applied_now_to_a_lower_seed_leaves_the_meter() -> (
    None
):
    pool = Pool.open("P", PoolTerms(SEED, Fraction(1, 100))).adjust("meter", 5000)
    pool = balanced(pool.change_terms(PoolTerms(SEED // 2, Fraction(1, 100)), 2, now=True))
    assert pool.meter == SEED + 5000
    assert pool.terms.seed_cents == SEED // 2


@pytest.mark.parametrize("now", [False, True])
def test_money_changes_of_terms_new_limit_below_the_amount_showing_is_refused(now: bool) -> None:
    pool = Pool.open("P", PoolTerms(SEED, Fraction(3, 400)))
    pool = pool.adjust("meter", 10_000)
    pool = contributed(pool, DOLLAR, 2)  # showing seed + 10,001 (exact seed + 10,001.5)
    with pytest.raises(PoolError, match="below"):
        pool.change_terms(PoolTerms(SEED, Fraction(1, 100), limit_cents=SEED + 10_000), 2, now=now)
    changed = pool.change_terms(
        PoolTerms(SEED, Fraction(1, 100), limit_cents=SEED + 10_001), 2, now=now
    )
    balanced(changed)
    assert changed.meter == pool.meter


# --- voids: a refunded contribution --------------------------------------------------------


def test_void_refund_reverses_each_contribution_exactly_remainders_included() -> None:
    # 0.75 % to the meter and 0.25 % to the reserve: every part is a fraction of a cent.
    before = Pool.open("P1", PoolTerms(SEED, Fraction(3, 400), Fraction(1, 400), SEED + 2))
    pool, shares = before, []
    for wager in (DOLLAR, 333, 500, 100_000):  # the last one reaches the limit: overflow
        pool, share = pool.contribute(wager)
        shares.append(share)
    assert any(share.to_overflow for share in shares)
    for share in reversed(shares[1:3]):  # out of order: each takes back its own parts
        pool, refund = pool.refund(share)
        balanced(pool)
        assert (refund.from_meter, refund.from_reserve, refund.from_overflow) == (
            share.to_meter, share.to_reserve, share.to_overflow,
        )  # fmt: skip
        assert refund.reseed_cents == 0
    for share in (shares[0], shares[3]):
        pool, _ = pool.refund(share)
        balanced(pool)
    assert pool == before  # meter, reserve, overflow, contributions and counters, exactly


def test_void_refund_after_a_reset_comes_off_the_meter_and_the_reseed_is_funded() -> None:
    pool = Pool.open("P1", PoolTerms(SEED, Fraction(28, 100), Fraction(1, 100)))
    pool, share = pool.contribute(DOLLAR)  # 28 cents to the meter, 1 to the reserve
    pool = contributed(pool, 333, 3)  # the reserve holds whole cents to fund a reseed
    pool, payment = pool.pay(Fraction(1), hit(1))  # another table's hit: the meter resets
    assert payment.from_reserve_cents == floor(Fraction(1, 100) * (DOLLAR + 999))
    assert pool.meter_cents == SEED
    meter, house, reserve = pool.meter, pool.house_funding_cents, pool.reserve
    pool, refund = pool.refund(share)
    balanced(pool)
    # The reserve's cent comes back from the reserve only as far as it still holds it; the
    # rest, and the 28 cents, from the meter, which the reserve then the house reseed.
    assert refund.from_reserve == min(share.to_reserve, reserve)
    assert refund.from_meter == share.to_meter + share.to_reserve - refund.from_reserve
    assert refund.reseed_cents == SEED - floor(meter - refund.from_meter)
    assert refund.reseed_cents == refund.reseed_from_reserve_cents + refund.reseed_from_house_cents
    assert pool.meter_cents == SEED  # the meter does not move
    assert pool.house_funding_cents == house + refund.reseed_from_house_cents
    assert (pool.wagers_count, pool.wagers_cents) == (3, 999)
    assert pool.paid_cents == payment.paid_cents  # the winner keeps what was won


def test_void_refund_of_an_overflow_released_by_a_reset_comes_off_the_meter() -> None:
    pool = Pool.open("P1", PoolTerms(SEED, Fraction(28, 100), limit_cents=SEED + 10))
    pool, share = pool.contribute(DOLLAR)  # 10 cents to the meter, 18 to the overflow
    assert (share.to_meter, share.to_overflow) == (Fraction(10), Fraction(18))
    pool, _ = pool.pay(Fraction(1), hit(1))  # 10 of the overflow move onto the new meter
    assert (pool.overflow, pool.meter) == (Fraction(8), Fraction(SEED + 10))
    pool, refund = pool.refund(share)
    balanced(pool)
    # 8 of the 18 are still in the overflow; the other 10 and the meter's 10 off the meter.
    assert (refund.from_overflow, refund.from_meter, refund.reseed_cents) == (
        Fraction(8),
        Fraction(20),
        10,
    )
    assert (pool.meter, pool.overflow, pool.contributions) == (
        Fraction(SEED),
        Fraction(0),
        Fraction(0),
    )


def test_void_refund_of_a_wager_the_pool_never_took_is_refused() -> None:
    pool = Pool.open("P1", PoolTerms(SEED, Fraction(28, 100)))
    _, share = pool.contribute(DOLLAR)
    with pytest.raises(PoolError, match="no such qualifying wager"):
        pool.refund(share)
    pool, _ = pool.contribute(DOLLAR)
    with pytest.raises(PoolError, match="not a contribution"):
        pool.refund(replace(share, to_meter=Fraction(-1)))
