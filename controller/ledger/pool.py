"""A progressive pool: its meters, and every way money moves in or out of it.

Its terms (what it is configured with) and the error a pool refuses with are
:mod:`controller.ledger.pool_terms`; they are imported from here as well.

All balances are exact :class:`fractions.Fraction` amounts of cents. A meter *shows* whole
cents (rounded down); the sub-cent part is carried, never rounded away (docs/money.md). Pays are
whole cents: a percent-of-meter pay is the meter x percent rounded down, and the sub-cent part
stays on the meter. Seeds are funded in whole cents, first from the reserve's whole cents, then
by the house; both are tracked.

The pool obeys one identity at every step, which the property tests check:

    contributions + house funding + adjustments == meter + reserve + overflow + paid

where contributions are net of those a void reversed (:meth:`Pool.refund`). Everything here
is pure: each operation returns a new :class:`Pool` and a record of what moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING, Final

from controller.ledger.pool_records import (
    Contribution,
    ContributionRefund,
    Feed,
    HitRecord,
    MeterPayment,
)
from controller.ledger.pool_terms import PoolError, PoolTerms, PoolTermsError

if TYPE_CHECKING:
    from controller.mystery.core import Drawn
    from controller.mystery.envelope import Envelope

__all__ = [
    "ACCOUNTS",
    "LAST_HITS",
    "Contribution",
    "ContributionRefund",
    "Feed",
    "HitRecord",
    "MeterPayment",
    "Pool",
    "PoolError",
    "PoolTerms",
    "PoolTermsError",
]

LAST_HITS: Final = 25


@dataclass(frozen=True, slots=True)
class Pool:
    """A pool's terms, its meters (exact cents) and its audit counters."""

    pool_id: str
    terms: PoolTerms
    revision: int = 1
    meter: Fraction = Fraction(0)
    reserve: Fraction = Fraction(0)
    overflow: Fraction = Fraction(0)
    contributions: Fraction = Fraction(0)
    wagers_count: int = 0
    wagers_cents: int = 0
    hits_count: int = 0
    paid_cents: int = 0
    house_funding_cents: int = 0
    reserve_funding_cents: int = 0
    adjustments_cents: int = 0
    pending_terms: PoolTerms | None = None
    pending_revision: int | None = None
    last_hits: tuple[HitRecord, ...] = field(default=())
    status: str = ""
    """Empty while the pool is in play; ``suspended`` or ``retired`` (controller/ledger/
    pool_life.py), with ``status_reason`` the reason journaled."""
    status_reason: str = ""
    transferred_in: Fraction = Fraction(0)
    """What other pools' transfers brought onto this one (controller/ledger/pool_life.py)."""
    transferred_out: Fraction = Fraction(0)
    """What this pool's transfers took to another."""
    opened_at: str = ""
    """When the pool opened, or its jurisdiction profile was approved if later (ISO 8601);
    empty on a journal with no profile (controller/ledger/jurisdictions.py)."""
    orphaned: Fraction = Fraction(0)
    """What its retirement recorded as orphaned, kept for a later pool (controller/ledger/
    pool_life.py)."""
    draw: Drawn | None = None
    """A mystery level's open draw (its commitment; the trigger is sealed), None between a
    hit and the next draw."""
    draws: int = 0
    """How many draws a mystery level has had."""
    sealed: Envelope | None = None
    """The open draw's trigger sealed for the cluster's keepers, for the node that takes over
    (controller/mystery/envelope.py); None without one."""
    fed: tuple[Feed, ...] = ()
    """A mystery level's feeds of the last event that fed it."""
    spilled_in: Fraction = Fraction(0)
    """What the level before's mystery hits passed on to this meter."""
    spilled_out: Fraction = Fraction(0)
    """What this level's mystery hits passed on to the next level."""

    @classmethod
    def open(cls, pool_id: str, terms: PoolTerms, revision: int = 1) -> Pool:
        """A new pool, its meter seeded by the house."""
        return cls(
            pool_id,
            terms,
            revision,
            meter=Fraction(terms.seed_cents),
            house_funding_cents=terms.seed_cents,
        )

    @property
    def meter_cents(self) -> int:
        """The meter as shown: whole cents, rounded down."""
        return floor(self.meter)

    @property
    def reserve_cents(self) -> int:
        """The reserve in whole cents."""
        return floor(self.reserve)

    @property
    def overflow_cents(self) -> int:
        """The overflow in whole cents."""
        return floor(self.overflow)

    def money_in(self) -> Fraction:
        """Everything that entered the pool: contributions, funding, adjustments, transfers in."""
        money = self.contributions + self.house_funding_cents + self.adjustments_cents
        return money + self.transferred_in + self.spilled_in

    def money_held_or_paid(self) -> Fraction:
        """Where it went: still on a meter, paid out, or transferred to another pool."""
        held = self.meter + self.reserve + self.overflow + self.paid_cents
        return held + self.transferred_out + self.orphaned + self.spilled_out

    def dispose(self, *, award: bool) -> tuple[Pool, tuple[Fraction, Fraction, Fraction], int]:
        """Everything the pool holds, disposed of at its retirement.

        ``award``: paid in one final award, in whole cents, the sub-cent part recorded as
        orphaned; else all of it recorded as orphaned. The pool, what each account held, and
        the award in cents.
        """
        taken = (self.meter, self.reserve, self.overflow)
        total = sum(taken, Fraction(0))
        paid = floor(total) if award else 0
        disposed = replace(
            self,
            meter=Fraction(0),
            reserve=Fraction(0),
            overflow=Fraction(0),
            paid_cents=self.paid_cents + paid,
            orphaned=self.orphaned + total - paid,
        )
        return disposed, taken, paid

    def transfer_out(self) -> tuple[Pool, Fraction, Fraction, Fraction]:
        """Everything the pool holds, taken off it exactly.

        The pool left with nothing, and the meter, reserve and overflow it held.
        """
        taken = (self.meter, self.reserve, self.overflow)
        emptied = replace(
            self,
            meter=Fraction(0),
            reserve=Fraction(0),
            overflow=Fraction(0),
            transferred_out=self.transferred_out + sum(taken, Fraction(0)),
        )
        return emptied, *taken

    def receive(
        self, meter: Fraction, reserve: Fraction, overflow: Fraction
    ) -> tuple[Pool, Fraction]:
        """Another pool's transfer, exactly; the pool, and what of its meter went to overflow.

        Its meter goes onto this meter as far as the limit allows (the rest to the overflow, as
        a contribution's), its reserve onto the reserve and its overflow onto the overflow.
        """
        room = meter
        if self.terms.limit_cents is not None:
            room = max(Fraction(0), min(meter, self.terms.limit_cents - self.meter))
        to_overflow = meter - room
        received = replace(
            self,
            meter=self.meter + room,
            reserve=self.reserve + reserve,
            overflow=self.overflow + overflow + to_overflow,
            transferred_in=self.transferred_in + meter + reserve + overflow,
        )
        return received, to_overflow

    def reseeded(self) -> tuple[Pool, int]:
        """The meter funded back up to the seed, as after a hit; the pool and the reseed."""
        pool, reseed, _, _ = _reseeded(self)
        return pool, reseed

    def contribute(self, wager_cents: int) -> tuple[Pool, Contribution]:
        """Add a locked wager's contributions: progression to the meter, overflow past the limit."""
        if wager_cents <= 0:
            raise PoolError(f"a wager must be above $0, got {wager_cents} cents")
        progression = wager_cents * self.terms.rate_of_progression
        to_reserve = wager_cents * self.terms.reserve_rate
        to_meter = progression
        limit = self.terms.limit_cents
        if limit is not None:
            to_meter = max(Fraction(0), min(progression, limit - self.meter))
        to_overflow = progression - to_meter
        pool = replace(
            self,
            meter=self.meter + to_meter,
            reserve=self.reserve + to_reserve,
            overflow=self.overflow + to_overflow,
            contributions=self.contributions + progression + to_reserve,
            wagers_count=self.wagers_count + 1,
            wagers_cents=self.wagers_cents + wager_cents,
        )
        return pool, Contribution(wager_cents, to_meter, to_reserve, to_overflow)

    def refund(self, contribution: Contribution) -> tuple[Pool, ContributionRefund]:
        """Reverse a locked wager's contribution exactly, for a void (docs/money.md "Voids").

        The pool's books stay balanced whatever happened between the lock and the void (a hit
        paid the meter, a reseed used the reserve, a reset released the overflow, new terms
        raised the seed): money in goes down by exactly what the wager put in, and so do the
        accounts holding it, with the house funding any reseed the meter then needs. The
        qualifying-wager counters go down by the one wager.
        """
        parts = (contribution.to_meter, contribution.to_reserve, contribution.to_overflow)
        if contribution.wager_cents <= 0 or any(part < 0 for part in parts):
            raise PoolError(f"not a contribution: {contribution}")
        total = sum(parts, Fraction(0))
        if (
            self.wagers_count < 1
            or self.wagers_cents < contribution.wager_cents
            or self.contributions < total
        ):
            raise PoolError("the pool holds no such qualifying wager to refund")
        from_reserve = min(contribution.to_reserve, self.reserve)
        from_overflow = min(contribution.to_overflow, self.overflow)
        from_meter = total - from_reserve - from_overflow
        pool = replace(
            self,
            meter=self.meter - from_meter,
            reserve=self.reserve - from_reserve,
            overflow=self.overflow - from_overflow,
            contributions=self.contributions - total,
            wagers_count=self.wagers_count - 1,
            wagers_cents=self.wagers_cents - contribution.wager_cents,
        )
        pool, reseed, reseed_from_reserve, reseed_from_house = _reseeded(pool)
        refund = ContributionRefund(
            contribution,
            from_meter,
            from_reserve,
            from_overflow,
            reseed,
            reseed_from_reserve,
            reseed_from_house,
        )
        return pool, refund

    def pay(
        self, percent: Fraction, hit: HitRecord | None = None, ways: int = 1
    ) -> tuple[Pool, MeterPayment]:
        """Pay ``percent`` of the meter (rounded down to the cent), then reseed as needed.

        ``ways`` winners share one pay equally, each rounded down to the cent; what the rounding
        leaves stays on the meter. A 100 % hit resets the meter to the seed; the jackpot is then
        won, so queued terms take effect and the overflow moves onto the new meter (up to the
        limit). A partial hit leaves the meter where it falls, but never below the seed.
        """
        if not 0 < percent <= 1:
            raise PoolError(f"a meter pay is above 0% and at most 100%, got {percent}")
        if ways < 1:
            raise PoolError("a pay needs at least one winner")
        before = self.meter
        paid = floor(before * percent / ways) * ways
        reset = percent == 1
        pool = replace(
            self,
            meter=before - paid,
            paid_cents=self.paid_cents + paid,
            hits_count=self.hits_count + 1,
        )
        terms_applied = False
        if reset and pool.pending_terms is not None:
            pool = replace(
                pool,
                terms=pool.pending_terms,
                revision=pool.pending_revision or pool.revision,
                pending_terms=None,
                pending_revision=None,
            )
            terms_applied = True
        pool, reseed, from_reserve, from_house = _reseeded(pool)
        from_overflow = Fraction(0)
        if reset:
            pool, from_overflow = _overflow_released(pool)
        if hit is not None:
            recorded = replace(hit, amount_cents=paid, meter_before_cents=floor(before))
            pool = replace(pool, last_hits=(recorded, *pool.last_hits)[:LAST_HITS])
        payment = MeterPayment(
            paid,
            before,
            reseed,
            from_reserve,
            from_house,
            from_overflow,
            reset,
            terms_applied,
            hit.hit_id if hit is not None else None,
            self.pool_id,
        )
        return pool, payment

    def adjust(self, account: str, cents: int) -> Pool:
        """A documented correction of the meter, reserve or overflow (who and why are journaled)."""
        if not cents:
            raise PoolError("an adjustment must change the amount")
        if account not in ACCOUNTS:
            raise PoolError(f"unknown account {account!r}; one of {', '.join(ACCOUNTS)}")
        balance: Fraction = getattr(self, account) + cents
        if balance < 0:
            raise PoolError(f"the {account} cannot go below $0")
        limit = self.terms.limit_cents
        if account == "meter" and cents > 0 and limit is not None and balance > limit:
            raise PoolError("the adjustment would take the meter above its limit")
        if account == "meter" and balance < self.terms.seed_cents:
            raise PoolError("the adjustment would take the meter below its seed")
        adjusted = self.adjustments_cents + cents
        if account == "meter":
            return replace(self, meter=balance, adjustments_cents=adjusted)
        if account == "reserve":
            return replace(self, reserve=balance, adjustments_cents=adjusted)
        return replace(self, overflow=balance, adjustments_cents=adjusted)

    def change_terms(self, terms: PoolTerms, revision: int, *, now: bool) -> Pool:
        """Queue new terms until the jackpot is won, or apply them now (a deliberate reset).

        A limit below the amount showing is refused either way. Applied now, a meter below the
        new seed is funded up to it like any reseed.
        """
        if terms.limit_cents is not None and terms.limit_cents < self.meter_cents:
            raise PoolError(
                f"a limit of {terms.limit_cents} cents is below the "
                f"{self.meter_cents} cents showing"
            )
        if not now:
            return replace(self, pending_terms=terms, pending_revision=revision)
        pool = replace(
            self, terms=terms, revision=revision, pending_terms=None, pending_revision=None
        )
        return _reseeded(pool)[0]


ACCOUNTS: Final = ("meter", "reserve", "overflow")


def _reseeded(pool: Pool) -> tuple[Pool, int, int, int]:
    """Fund the meter back up to the seed in whole cents: reserve first, then the house."""
    shortfall = pool.terms.seed_cents - floor(pool.meter)
    if shortfall <= 0:
        return pool, 0, 0, 0
    from_reserve = min(shortfall, floor(pool.reserve))
    from_house = shortfall - from_reserve
    reseeded = replace(
        pool,
        meter=pool.meter + shortfall,
        reserve=pool.reserve - from_reserve,
        reserve_funding_cents=pool.reserve_funding_cents + from_reserve,
        house_funding_cents=pool.house_funding_cents + from_house,
    )
    return reseeded, shortfall, from_reserve, from_house


def _overflow_released(pool: Pool) -> tuple[Pool, Fraction]:
    """After a reset, the overflow goes back onto the meter, as far as the limit allows."""
    room = pool.overflow
    if pool.terms.limit_cents is not None:
        room = max(Fraction(0), min(room, pool.terms.limit_cents - pool.meter))
    if not room:
        return pool, Fraction(0)
    return replace(pool, meter=pool.meter + room, overflow=pool.overflow - room), room
