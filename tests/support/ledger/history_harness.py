"""The harness of random event histories: each event applied, the money tallied beside it.

:class:`Harness` applies events one at a time to the pure ledger and checks every property after
each, from its own :class:`Books` (the events and effects alone): money in equals what the
accounts hold or paid, a meter shows at least its seed and never more than its limit, a meter
only goes down for a recorded reason, every cent that left a meter reached a payout, and a void
gives back exactly what its wagers contributed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.effects import (
    Adjusted,
    Balances,
    Contributed,
    ContributionRefunded,
    MeterPaid,
    PayoutMade,
    TermsChanged,
    encode_effects,
    parse_fraction,
)
from controller.events import (
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    RoundSettled,
    RoundVoided,
    WagerLocked,
)
from controller.ledger.apply import LedgerError, LedgerState, apply

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import AnyEvent


@dataclass
class Books:
    """A pool's money, tallied from the events and effects alone."""

    contributions: Fraction = Fraction(0)
    house: int = 0
    adjustments: int = 0
    paid: int = 0

    def money_in(self) -> Fraction:
        """Contributions, house funding and adjustments."""
        return self.contributions + self.house + self.adjustments


@dataclass
class Harness:
    """Applies events one at a time and checks every property after each."""

    state: LedgerState = field(default_factory=LedgerState)
    events: list[AnyEvent] = field(default_factory=list)
    outcomes: list[bytes | None] = field(default_factory=list)
    books: dict[str, Books] = field(default_factory=dict)
    counter: int = 0
    hits: int = 0
    voids: int = 0
    shortfalls: int = 0
    """Refunds that found an account short (a hit, reseed or reset came between lock and void)."""
    shares: dict[tuple[str, str, int], Contributed] = field(default_factory=dict)
    """The contribution of each progressive wager locked and not yet settled or voided."""
    open_rounds: list[tuple[str, str]] = field(default_factory=list)
    """Rounds locked and left open, to be voided after other events."""

    def next_id(self, prefix: str = "e") -> str:
        """A fresh event or round id."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    def submit(self, event: AnyEvent, *, valid: bool | None = None) -> bool:
        """Apply one event; ``valid`` says whether it must be accepted (None: either)."""
        before = self.state
        snapshot = _snapshot(before)
        self.events.append(event)
        refusal: LedgerError | None = None
        try:
            after, effects = apply(before, event)
        except LedgerError as error:
            refusal = error
        if refusal is not None:
            assert valid is not True, f"{event!r} was refused: {refusal}"
            assert _snapshot(before) == snapshot, "a refused event changed the state"
            self.outcomes.append(None)
            return False
        assert valid is not False, f"{event!r} was accepted"
        self.outcomes.append(encode_effects(effects))
        self._tally(before, event, after, effects)
        self._check(before, event, after, effects)
        self.state = after
        return True

    def _tally(
        self,
        before: LedgerState,
        event: AnyEvent,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        match event:
            case PoolOpened():
                self.books[event.pool_id] = Books(house=event.seed_cents)
            case WagerLocked() if event.spot == "progressive":
                pool_id = before.tables[event.table_id].pool_id
                assert pool_id is not None
                terms = before.pools[pool_id].terms
                rate = terms.rate_of_progression + terms.reserve_rate
                expected = event.amount_cents * rate
                (contributed,) = [e for e in effects if isinstance(e, Contributed)]
                moved = sum(
                    map(
                        parse_fraction,
                        (contributed.to_meter, contributed.to_reserve, contributed.to_overflow),
                    ),
                    Fraction(0),
                )
                assert moved == expected
                assert parse_fraction(contributed.to_reserve) == (
                    event.amount_cents * terms.reserve_rate
                )
                self.books[pool_id].contributions += expected
                self.shares[event.table_id, event.round_id, event.seat] = contributed
            case RoundSettled():
                self._tally_round(before, event, after, effects)
                for key in [
                    key for key in self.shares if key[:2] == (event.table_id, event.round_id)
                ]:
                    del self.shares[key]
            case RoundVoided():
                self._tally_void(before, event, after, effects)
            case MeterAdjusted():
                self.books[event.pool_id].adjustments += event.amount_cents
            case PoolTermsChanged() if event.apply_now:
                pool = before.pools[event.pool_id]
                shortfall = max(0, event.seed_cents - pool.meter_cents)
                from_reserve = min(shortfall, pool.reserve_cents)
                (changed,) = [e for e in effects if isinstance(e, TermsChanged)]
                assert changed.applied
                assert changed.reseed_cents == shortfall
                self.books[event.pool_id].house += shortfall - from_reserve
            case _:
                pass

    def _tally_void(
        self,
        before: LedgerState,
        event: RoundVoided,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        """(f): what each wager contributed at lock comes back off the pool, exactly."""
        self.voids += 1
        refunds = {e.seat: e for e in effects if isinstance(e, ContributionRefunded)}
        locked = {
            key[2]: self.shares.pop(key)
            for key in list(self.shares)
            if key[:2] == (event.table_id, event.round_id)
        }
        if not event.refund_contributions:  # a void's first meaning: contributions stay
            assert not refunds
            return
        assert refunds.keys() == locked.keys()
        pool_id = before.tables[event.table_id].pool_id
        if pool_id is None or not refunds:
            return
        for seat, refund in refunds.items():
            share = locked[seat]
            parts = (share.to_meter, share.to_reserve, share.to_overflow)
            assert (refund.to_meter, refund.to_reserve, refund.to_overflow) == parts
            taken = (refund.from_meter, refund.from_reserve, refund.from_overflow)
            total = sum(map(parse_fraction, parts), Fraction(0))
            assert sum(map(parse_fraction, taken), Fraction(0)) == total
            assert refund.reseed_cents == (
                refund.reseed_from_reserve_cents + refund.reseed_from_house_cents
            )
            if taken != parts or refund.reseed_cents:
                self.shortfalls += 1
            books = self.books[pool_id]
            books.contributions -= total
            books.house += refund.reseed_from_house_cents
        old, new = before.pools[pool_id], after.pools[pool_id]
        assert new.wagers_count == old.wagers_count - len(refunds)
        assert new.wagers_cents == old.wagers_cents - sum(r.wager_cents for r in refunds.values())

    def _tally_round(
        self,
        before: LedgerState,
        event: RoundSettled,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        pool_id = before.tables[event.table_id].pool_id
        payments = [e for e in effects if isinstance(e, MeterPaid)]
        payouts = [e for e in effects if isinstance(e, PayoutMade)]
        from_meter = sum(p.from_meter_cents for p in payouts)
        # (e) every cent that left a meter reached a payout, and the other way round.
        assert from_meter == sum(p.paid_cents for p in payments)
        for payout in payouts:
            if payout.from_meter_cents:
                assert payout.kind == "progressive"
                assert payout.pool_id == pool_id
            if payout.status == "pending":
                assert payout.payout_id in after.pending
        for payment in payments:
            assert payment.pool_id == pool_id
            assert payment.reseed_cents == payment.from_reserve_cents + payment.from_house_cents
            assert payment.from_house_cents >= 0
            assert payment.from_reserve_cents >= 0
        if pool_id is not None:
            books = self.books[pool_id]
            books.paid += from_meter
            books.house += sum(p.from_house_cents for p in payments)
        self.hits += len(payments)

    def _check(
        self,
        before: LedgerState,
        event: AnyEvent,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        assert set(after.pools) == set(self.books)
        for pool_id, pool in after.pools.items():
            books = self.books[pool_id]
            # (a) money in == meter + reserve + overflow + paid, from our own tally.
            assert books.money_in() == pool.meter + pool.reserve + pool.overflow + books.paid
            assert pool.money_in() == pool.money_held_or_paid()
            assert pool.contributions == books.contributions
            assert pool.house_funding_cents == books.house
            assert pool.adjustments_cents == books.adjustments
            # (e) the payouts' from-meter amounts are the pool's paid total.
            assert pool.paid_cents == books.paid
            # (b) the meter shows at least its seed, and never more than its limit.
            assert pool.meter_cents >= pool.terms.seed_cents
            if pool.terms.limit_cents is not None:
                assert pool.meter_cents <= pool.terms.limit_cents
            assert pool.reserve >= 0
            assert pool.overflow >= 0
            # (c) a meter only goes down for a recorded win, an adjustment or a reset of terms.
            old = before.pools.get(pool_id)
            if old is not None and pool.meter < old.meter:
                assert _recorded_decrease(pool_id, effects), (event, old.meter, pool.meter)
            if old is not None and pool.reserve < old.reserve:
                assert _recorded_decrease(pool_id, effects), (event, old.reserve, pool.reserve)
            if old is not None and pool.overflow < old.overflow:
                assert _recorded_decrease(pool_id, effects), (event, old.overflow, pool.overflow)
        # The journaled balances are the pool's balances.
        for effect in effects:
            if isinstance(effect, Balances):
                pool = after.pools[effect.pool_id]
                assert parse_fraction(effect.meter) == pool.meter
                assert parse_fraction(effect.reserve) == pool.reserve
                assert parse_fraction(effect.overflow) == pool.overflow
                assert effect.paid_cents == pool.paid_cents


def _recorded_decrease(pool_id: str, effects: tuple[AnyEffect, ...]) -> bool:
    for effect in effects:
        if isinstance(effect, MeterPaid | Adjusted) and effect.pool_id == pool_id:
            return True
        if isinstance(effect, TermsChanged) and effect.pool_id == pool_id and effect.applied:
            return True
        if isinstance(effect, ContributionRefunded) and effect.pool_id == pool_id:
            return True
    return False


def _snapshot(state: LedgerState) -> tuple[object, ...]:
    """Copies of every mapping of the state: a refused event must leave all of them as they are."""
    return (
        dict(state.pools),
        dict(state.tables),
        dict(state.table_events),
        dict(state.rounds),
        dict(state.pending),
        state.revision,
    )
