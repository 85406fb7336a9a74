"""Every pool's balances and flows over a period, from the journal's effects.

For each pool, per account, exactly (fractions of a cent included)::

    meter:    opening + contributions + seeds + overflow released +/- adjustments - wins
              - refunded +/- transfers - retired +/- past triggers = closing
    reserve:  opening + contributions - reseeds funded from the reserve +/- adjustments
              - refunded +/- transfers - retired = closing
    overflow: opening + contributions - released +/- adjustments - refunded
              +/- transfers - retired +/- past triggers = closing

with the seed funding split between the reserve and the house, ``refunded`` what voids took
back off each account (docs/money.md "Voids"), transfers and retirements a pool's life
(docs/money.md, "A pool's life"), and past triggers what a mystery level's hit moved of its
meter past the trigger: onto its own overflow, or onto the next level's meter or overflow
(docs/money.md, "Mystery levels"). The period is a run of journal rows
(controller/reports/period.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.effects import (
    Adjusted,
    Balances,
    Contributed,
    ContributionRefunded,
    MeterPaid,
    PastTrigger,
    PoolDisposed,
    PoolTransfer,
    decode_effects,
)
from controller.reports.period import span

if TYPE_CHECKING:
    from datetime import datetime

ACCOUNTS = ("meter", "reserve", "overflow")


def _accounts() -> dict[str, Fraction]:
    return dict.fromkeys(ACCOUNTS, Fraction(0))


@dataclass(slots=True)
class PoolPeriod:
    """One pool's balances and flows over the period."""

    opening: dict[str, Fraction] = field(default_factory=_accounts)
    closing: dict[str, Fraction] = field(default_factory=_accounts)
    opening_totals: Balances | None = None
    closing_totals: Balances | None = None
    contributions: dict[str, Fraction] = field(default_factory=_accounts)
    adjustments: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ACCOUNTS, 0))
    refunded: dict[str, Fraction] = field(default_factory=_accounts)
    transferred: dict[str, Fraction] = field(default_factory=_accounts)
    """What transfers between pools brought (+) or took (-), per account."""
    retired: dict[str, Fraction] = field(default_factory=_accounts)
    """What a retirement disposed of (-), per account: a final award's and the orphaned."""
    passed: dict[str, Fraction] = field(default_factory=_accounts)
    """What mystery hits moved past their triggers (+ gained, - lost), per account."""
    final_award_cents: int = 0
    orphaned: Fraction = Fraction(0)
    wins_cents: int = 0
    hits: int = 0
    released: Fraction = Fraction(0)

    def pool_life(self, effect: PoolTransfer | PoolDisposed) -> None:
        """A transfer's or a retirement's flows (docs/money.md, "A pool's life")."""
        flows = self.transferred if isinstance(effect, PoolTransfer) else self.retired
        for account in ACCOUNTS:
            flows[account] += Fraction(getattr(effect, account))
        if isinstance(effect, PoolDisposed):
            self.final_award_cents += effect.award_cents
            self.orphaned += Fraction(effect.orphaned)

    def funding(self, name: str) -> int:
        """Seed funding from ``house`` or ``reserve`` during the period."""
        attribute = f"{name}_funding_cents"
        closing = getattr(self.closing_totals, attribute) if self.closing_totals else 0
        opening = getattr(self.opening_totals, attribute) if self.opening_totals else 0
        return int(closing - opening)

    def expected(self) -> dict[str, Fraction]:
        """Each account's closing balance as the flows say it must be."""
        house, reserve = self.funding("house"), self.funding("reserve")
        refunded = self.refunded
        return {
            "meter": self.opening["meter"] + self.contributions["meter"] + house + reserve
            + self.released + self.adjustments["meter"] - self.wins_cents - refunded["meter"]
            + self.transferred["meter"] + self.retired["meter"] + self.passed["meter"],
            "reserve": self.opening["reserve"] + self.contributions["reserve"] - reserve
            + self.adjustments["reserve"] - refunded["reserve"] + self.transferred["reserve"]
            + self.retired["reserve"],
            "overflow": self.opening["overflow"] + self.contributions["overflow"] - self.released
            + self.adjustments["overflow"] - refunded["overflow"] + self.transferred["overflow"]
            + self.retired["overflow"] + self.passed["overflow"],
        }  # fmt: skip

    def balanced(self) -> bool:
        """Whether every account reconciles exactly."""
        return self.expected() == self.closing


def _balances(effect: Balances) -> dict[str, Fraction]:
    return {name: Fraction(getattr(effect, name)) for name in ACCOUNTS}


def reconcile(
    rows: list[dict[str, Any]], start: datetime | None, end: datetime | None
) -> dict[str, PoolPeriod]:
    """Every pool's period, from journal rows (taken in journal order, see :func:`span`)."""
    rows = sorted(rows, key=lambda row: int(row["seq"]))
    begin, stop = span(rows, start, end)
    periods: dict[str, PoolPeriod] = {}
    for index, row in enumerate(rows[:stop]):
        before = index < begin
        for effect in decode_effects(row["effects"]):
            pool_id = getattr(effect, "pool_id", None)
            if pool_id is None:
                continue
            period = periods.setdefault(pool_id, PoolPeriod())
            if isinstance(effect, Balances):
                if before:
                    period.opening, period.opening_totals = _balances(effect), effect
                period.closing, period.closing_totals = _balances(effect), effect
            elif before:
                continue
            elif isinstance(effect, Contributed):
                period.contributions["meter"] += Fraction(effect.to_meter)
                period.contributions["reserve"] += Fraction(effect.to_reserve)
                period.contributions["overflow"] += Fraction(effect.to_overflow)
            elif isinstance(effect, ContributionRefunded):
                period.refunded["meter"] += Fraction(effect.from_meter)
                period.refunded["reserve"] += Fraction(effect.from_reserve)
                period.refunded["overflow"] += Fraction(effect.from_overflow)
            elif isinstance(effect, MeterPaid):
                period.wins_cents += effect.paid_cents
                period.hits += 1
                period.released += Fraction(effect.from_overflow)
            elif isinstance(effect, Adjusted):
                period.adjustments[effect.account] += effect.amount_cents
            elif isinstance(effect, PoolTransfer | PoolDisposed):
                period.pool_life(effect)
            elif isinstance(effect, PastTrigger):
                period.passed["meter"] += Fraction(effect.meter)
                period.passed["overflow"] += Fraction(effect.overflow)
    return periods
