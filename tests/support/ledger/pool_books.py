"""A pool's books checked after each step: the identity of docs/money.md, cent for cent.

    contributions + house funding + adjustments == meter + reserve + overflow + paid

Shared by tests/ledger/test_pool.py and tests/ledger/test_pool_corrections.py.
"""

from __future__ import annotations

from controller.ledger.pool import HitRecord, Pool

SEED = 1_000_000  # $10,000, the seed of Progressive Paytables 1 and 4
DOLLAR = 100


def balanced(pool: Pool) -> Pool:
    """Assert the pool's identity and that the meter shows at least its seed; return the pool."""
    assert pool.money_in() == pool.money_held_or_paid()
    assert pool.money_in() == (
        pool.contributions + pool.house_funding_cents + pool.adjustments_cents
    )
    assert pool.money_held_or_paid() == pool.meter + pool.reserve + pool.overflow + pool.paid_cents
    assert pool.meter_cents >= pool.terms.seed_cents
    return pool


def contributed(pool: Pool, wager_cents: int, times: int) -> Pool:
    """The pool after ``times`` locked wagers, checking the identity after each one."""
    for _ in range(times):
        pool, _ = pool.contribute(wager_cents)
        balanced(pool)
    return pool


def hit(number: int) -> HitRecord:
    """Hit ``number`` of five aces at table T1, seat 1."""
    return HitRecord(f"hit-{number}", "T1", 1, "five-aces", 0, 0)
