"""The pools and tables of random event histories, and what else happens to them between rounds.

Pools opened and tables configured, adjustments and changes of terms (allowed only as
docs/money.md says), hits verified, and events the ledger must refuse, each played through a
:class:`support.ledger.history_harness.Harness`.
"""

from __future__ import annotations

import functools
import operator
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
from hypothesis import strategies as st

from controller.events import (
    FaultRecorded,
    HitVerified,
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    SpotLimits,
    TableConfigured,
    WagerLocked,
)
from support.ledger.history_values import (
    ACCOUNTS,
    AT,
    BONUS,
    BONUS_LIMITS,
    PAYTABLES,
    PROGRESSIVES,
    RATES,
    RESERVE_RATES,
)

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ledger.pool import Pool
    from support.ledger.history_harness import Harness


def open_pools(data: st.DataObject, harness: Harness) -> list[str]:
    pool_ids = []
    for number in range(data.draw(st.integers(1, 2), label="pools")):
        seed = data.draw(st.sampled_from([0, 100, 500_000, 1_000_000]) | st.integers(0, 2_000_000))
        extra = st.integers(0, 3_000) | st.integers(0, 200_000)  # small: the limit is reached
        limit = data.draw(
            st.none() | extra.map(functools.partial(operator.add, seed)), label="limit"
        )
        event = PoolOpened(
            event_id=harness.next_id(),
            at=AT,
            pool_id=f"P{number}",
            paytable=data.draw(st.sampled_from(PROGRESSIVES)),
            seed_cents=seed,
            rate_of_progression=Decimal(data.draw(st.sampled_from(RATES), label="rate")),
            reserve_rate=Decimal(data.draw(st.sampled_from(RESERVE_RATES), label="reserve")),
            limit_cents=limit,
        )
        harness.submit(event, valid=True)
        pool_ids.append(event.pool_id)
    return pool_ids


def configure_tables(data: st.DataObject, harness: Harness, pool_ids: list[str]) -> list[str]:
    table_ids = []
    for number in range(data.draw(st.integers(1, 2), label="tables")):
        pool_id = data.draw(st.sampled_from(pool_ids))
        progressive = harness.state.pools[pool_id].terms.paytable  # the pool's own paytable
        limits: list[dict[str, SpotLimits] | msgspec.UnsetType] = [msgspec.UNSET, *BONUS_LIMITS]
        event = TableConfigured(
            event_id=harness.next_id(),
            at=AT,
            table_id=f"T{number}",
            paytables={progressive: PAYTABLES[progressive], BONUS: PAYTABLES[BONUS]},
            seats=data.draw(st.integers(1, 6), label="seats"),
            bonus=BONUS,
            progressive=progressive,
            pool_id=pool_id,
            envy_includes_dealer=data.draw(st.booleans()),
            max_payout_cents=data.draw(st.sampled_from([None, 5_000_000])),
            verification_cents=data.draw(st.sampled_from([None, 100_000, 1_000_000])),
            hit_order=data.draw(st.sampled_from(["sequential", "split"])),
            wager_limits=data.draw(st.sampled_from(limits), label="bonus limits"),
        )
        harness.submit(event, valid=True)
        table_ids.append(event.table_id)
    return table_ids


def adjust(data: st.DataObject, harness: Harness, pool_id: str) -> None:
    pool = harness.state.pools[pool_id]
    account = data.draw(st.sampled_from([*ACCOUNTS, "meter", "jackpot"]), label="account")
    balance = getattr(pool, account, Fraction(0))
    seed = pool.terms.seed_cents
    limit = pool.terms.limit_cents
    boundaries = [0, -int(balance), -int(balance) - 1, seed - pool.meter_cents]
    boundaries += [seed - pool.meter_cents - 1]
    if limit is not None:
        boundaries += [limit - pool.meter_cents, limit - pool.meter_cents + 1]
    cents = data.draw(
        st.sampled_from(boundaries) | st.integers(-500_000, 500_000), label="adjustment"
    )
    reason = data.draw(st.sampled_from(["count correction", "", "  "]), label="reason")
    event = MeterAdjusted(
        event_id=harness.next_id(),
        at=AT,
        pool_id=pool_id,
        account=account,
        amount_cents=cents,
        by="supervisor 7",
        reason=reason,
    )
    harness.submit(event, valid=_adjustment_allowed(pool, account, cents, reason))


def _adjustment_allowed(pool: Pool, account: str, cents: int, reason: str) -> bool:
    """A documented correction, never to below $0, below the seed or above the limit.

    docs/money.md, "Corrections".
    """
    if not reason.strip() or cents == 0 or account not in ACCOUNTS:
        return False
    balance = getattr(pool, account) + cents
    if balance < 0:
        return False
    if account != "meter":
        return True
    limit = pool.terms.limit_cents
    return balance >= pool.terms.seed_cents and (cents < 0 or limit is None or balance <= limit)


def change_terms(data: st.DataObject, harness: Harness, pool_id: str) -> None:
    pool = harness.state.pools[pool_id]
    seed = data.draw(
        st.sampled_from([pool.terms.seed_cents, pool.meter_cents, pool.meter_cents + 1, 0])
        | st.integers(0, 2_000_000),
        label="new seed",
    )
    rate = data.draw(st.sampled_from([*RATES, "0.99"]), label="new rate")
    reserve = data.draw(st.sampled_from(RESERVE_RATES), label="new reserve")
    limit = data.draw(
        st.sampled_from([None, None, pool.meter_cents, pool.meter_cents - 1, seed, seed - 1])
        | st.integers(0, 3_000).map(lambda extra: max(seed, pool.meter_cents) + extra)
        | st.integers(0, 3_000_000),
        label="new limit",
    )
    now = data.draw(st.booleans(), label="apply now")
    event = PoolTermsChanged(
        event_id=harness.next_id(),
        at=AT,
        pool_id=pool_id,
        paytable=pool.terms.paytable,
        seed_cents=seed,
        rate_of_progression=Decimal(rate),
        reserve_rate=Decimal(reserve),
        limit_cents=limit,
        apply_now=now,
        by="supervisor 7",
        reason=data.draw(st.sampled_from(["new paytable"] * 3 + [""]), label="reason"),
    )
    valid = (
        bool(event.reason)
        and Fraction(rate) + Fraction(reserve) <= 1
        and (limit is None or limit >= max(seed, pool.meter_cents))
    )
    before = pool
    if harness.submit(event, valid=valid):
        after = harness.state.pools[pool_id]
        if now:
            assert after.terms.seed_cents == seed
            assert after.terms.limit_cents == limit
            assert after.pending_terms is None
        else:
            # docs/money.md, "Changes of terms": the change waits until the jackpot is won.
            assert after.terms == before.terms
            assert after.pending_terms is not None
            assert after.pending_terms.seed_cents == seed
            assert after.meter == before.meter


def verify(data: st.DataObject, harness: Harness) -> None:
    pending = sorted(harness.state.pending)
    if len(pending) > 0 and data.draw(st.booleans()):
        payout_id = data.draw(st.sampled_from(pending))
        harness.submit(
            HitVerified(event_id=harness.next_id(), at=AT, payout_id=payout_id, by="supervisor 7"),
            valid=True,
        )
        assert payout_id not in harness.state.pending
    else:
        harness.submit(
            HitVerified(event_id=harness.next_id(), at=AT, payout_id="nope", by="supervisor 7"),
            valid=False,
        )


def nonsense(data: st.DataObject, harness: Harness) -> None:
    """Events the ledger must refuse, and a fault that changes nothing."""
    kind = data.draw(st.sampled_from(["table", "pool", "seat", "fault"]), label="nonsense")
    if kind == "table":
        event: AnyEvent = WagerLocked(
            event_id=harness.next_id(),
            at=AT,
            table_id="T9",
            round_id="r",
            seat=1,
            spot="bonus",
            amount_cents=500,
        )
    elif kind == "pool":
        event = MeterAdjusted(
            event_id=harness.next_id(),
            at=AT,
            pool_id="P9",
            account="meter",
            amount_cents=100,
            by="supervisor 7",
            reason="count correction",
        )
    elif kind == "seat":
        table_id = min(harness.state.tables)
        event = WagerLocked(
            event_id=harness.next_id(),
            at=AT,
            table_id=table_id,
            round_id="r",
            seat=harness.state.tables[table_id].seats + 1,
            spot="bonus",
            amount_cents=500,
        )
    else:
        before = harness.state
        harness.submit(
            FaultRecorded(event_id=harness.next_id(), at=AT, source="shoe", reason="garbage"),
            valid=True,
        )
        assert harness.state == before
        return
    harness.submit(event, valid=False)
