"""What moves in or out of a pool, recorded: hits, contributions, feeds, refunds, meter pays.

Each is a frozen record :class:`~controller.ledger.pool.Pool` returns beside its new self, so
that the ledger journals exactly what moved (docs/money.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fractions import Fraction


@dataclass(frozen=True, slots=True)
class HitRecord:
    """One of a pool's last hits, as shown to supervisors."""

    hit_id: str
    table_id: str
    seat: int
    line: str
    amount_cents: int
    meter_before_cents: int


@dataclass(frozen=True, slots=True)
class Feed:
    """One wager's contribution to a mystery level: the meter before and after it, exactly.

    A mystery level keeps the feeds of the last event that fed it: the trigger revealed after
    that event names the first of them to reach it (controller/ledger/mystery_level.py).
    """

    event_id: str
    table_id: str
    round_id: str
    seat: int
    wager_cents: int
    before: Fraction
    after: Fraction


@dataclass(frozen=True, slots=True)
class Contribution:
    """What one locked wager added, exactly."""

    wager_cents: int
    to_meter: Fraction
    to_reserve: Fraction
    to_overflow: Fraction


@dataclass(frozen=True, slots=True)
class ContributionRefund:
    """A void's reversal of one locked wager's contribution, and where the money came from.

    ``contribution`` is what the wager added at lock. Each part is taken back from the account
    it went to; what that account no longer holds (a reserve that funded a reseed, an overflow
    released by a reset) is taken from the meter instead. A meter left below its seed is then
    reseeded like any other: from the reserve's whole cents first, then by the house.
    """

    contribution: Contribution
    from_meter: Fraction
    from_reserve: Fraction
    from_overflow: Fraction
    reseed_cents: int
    reseed_from_reserve_cents: int
    reseed_from_house_cents: int


@dataclass(frozen=True, slots=True)
class MeterPayment:
    """A pay taken from the meter, and the reseed that followed it."""

    paid_cents: int
    meter_before: Fraction
    reseed_cents: int
    from_reserve_cents: int
    from_house_cents: int
    from_overflow: Fraction
    reset: bool
    terms_applied: bool
    hit_id: str | None = None
    pool_id: str = ""
    """The pool (a multi-level pool's level) the pay came off."""
