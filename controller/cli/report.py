"""``jackpotd report``: reconcile every pool over a period from the journal's effects.

For each pool, per account, exactly (fractions of a cent included)::

    meter:    opening + contributions + seeds + overflow released +/- adjustments - wins = closing
    reserve:  opening + contributions - reseeds funded from the reserve +/- adjustments = closing
    overflow: opening + contributions - released +/- adjustments = closing

with the seed funding split between the reserve and the house. A period that does not balance
is reported as such and the command exits 1.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.cli.common import CommandError, add_db, open_journal
from controller.effects import Adjusted, Balances, Contributed, MeterPaid, decode_effects
from controller.effects import fraction_text as text
from controller.money import format_cents

if TYPE_CHECKING:
    import argparse

ACCOUNTS = ("meter", "reserve", "overflow")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report`` to the command line."""
    report = commands.add_parser("report", help="reconcile every pool over a period")
    add_db(report)
    report.add_argument("--from", dest="start", help="ISO date or time, UTC (default: the start)")
    report.add_argument("--to", dest="end", help="ISO date or time, UTC (default: now)")
    report.set_defaults(run=run)


def _moment(value: str | None, *, end: bool) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"{value!r} is not an ISO date or time like 2026-11-29T18:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if end and len(value) == 10:  # a bare date covers the whole day
        moment = moment.replace(hour=23, minute=59, second=59, microsecond=999_999)
    return moment


@dataclass(slots=True)
class PoolPeriod:
    """One pool's balances and flows over the period."""

    opening: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    closing: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    opening_totals: Balances | None = None
    closing_totals: Balances | None = None
    contributions: dict[str, Fraction] = field(
        default_factory=lambda: dict.fromkeys(ACCOUNTS, Fraction(0))
    )
    adjustments: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ACCOUNTS, 0))
    wins_cents: int = 0
    hits: int = 0
    released: Fraction = Fraction(0)

    def funding(self, name: str) -> int:
        """Seed funding from ``house`` or ``reserve`` during the period."""
        attribute = f"{name}_funding_cents"
        closing = getattr(self.closing_totals, attribute) if self.closing_totals else 0
        opening = getattr(self.opening_totals, attribute) if self.opening_totals else 0
        return int(closing - opening)

    def expected(self) -> dict[str, Fraction]:
        """Each account's closing balance as the flows say it must be."""
        house, reserve = self.funding("house"), self.funding("reserve")
        return {
            "meter": self.opening["meter"] + self.contributions["meter"] + house + reserve
            + self.released + self.adjustments["meter"] - self.wins_cents,
            "reserve": self.opening["reserve"] + self.contributions["reserve"] - reserve
            + self.adjustments["reserve"],
            "overflow": self.opening["overflow"] + self.contributions["overflow"] - self.released
            + self.adjustments["overflow"],
        }  # fmt: skip

    def balanced(self) -> bool:
        """Whether every account reconciles exactly."""
        return self.expected() == self.closing


def _balances(effect: Balances) -> dict[str, Fraction]:
    return {name: Fraction(getattr(effect, name)) for name in ACCOUNTS}


def reconcile(
    rows: list[dict[str, Any]], start: datetime | None, end: datetime | None
) -> dict[str, PoolPeriod]:
    """Every pool's period, from journal rows in order."""
    periods: dict[str, PoolPeriod] = {}
    for row in rows:
        at = datetime.fromisoformat(row["at"])
        before, after = start is not None and at < start, end is not None and at > end
        if after:
            break
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
            elif isinstance(effect, MeterPaid):
                period.wins_cents += effect.paid_cents
                period.hits += 1
                period.released += Fraction(effect.from_overflow)
            elif isinstance(effect, Adjusted):
                period.adjustments[effect.account] += effect.amount_cents
    return periods


def _document(pool_id: str, period: PoolPeriod) -> dict[str, Any]:
    return {
        "pool": pool_id,
        "opening": {name: text(value) for name, value in period.opening.items()},
        "closing": {name: text(value) for name, value in period.closing.items()},
        "contributions": {name: text(value) for name, value in period.contributions.items()},
        "wins_cents": period.wins_cents,
        "hits": period.hits,
        "house_funding_cents": period.funding("house"),
        "reserve_funding_cents": period.funding("reserve"),
        "overflow_released": text(period.released),
        "adjustments_cents": period.adjustments,
        "balanced": period.balanced(),
    }


def run(args: argparse.Namespace) -> int:
    """Print the reconciliation; exit 1 if any pool does not balance."""
    start, end = _moment(args.start, end=False), _moment(args.end, end=True)
    with open_journal(args) as journal:
        periods = reconcile(list(journal.rows()), start, end)
    documents = [_document(pool_id, period) for pool_id, period in sorted(periods.items())]
    ok = all(document["balanced"] for document in documents)
    if args.json:
        print(
            json.dumps(
                {"from": args.start, "to": args.end, "pools": documents, "balanced": ok}, indent=2
            )
        )
        return 0 if ok else 1
    print(f"Reconciliation from {args.start or 'the start'} to {args.end or 'now'}")
    for pool_id, period in sorted(periods.items()):
        money = {name: format_cents(int(value)) for name, value in period.closing.items()}
        print(f"\n{pool_id}: {'balanced' if period.balanced() else 'DOES NOT BALANCE'}")
        print(
            f"  meter {format_cents(int(period.opening['meter']))} + contributions "
            f"{format_cents(int(period.contributions['meter']))} + seeds "
            f"{format_cents(period.funding('house') + period.funding('reserve'))} "
            f"(house {format_cents(period.funding('house'))}, reserve "
            f"{format_cents(period.funding('reserve'))}) + released "
            f"{format_cents(int(period.released))} +/- adjustments "
            f"{format_cents(period.adjustments['meter'])} - wins {format_cents(period.wins_cents)} "
            f"({period.hits} hits) = {money['meter']}"
        )
        cents = {name: format_cents(int(period.contributions[name])) for name in ACCOUNTS}
        print(
            f"  reserve {format_cents(int(period.opening['reserve']))} + contributions "
            f"{cents['reserve']} - seeds funded {format_cents(period.funding('reserve'))} "
            f"+/- adjustments {format_cents(period.adjustments['reserve'])} = {money['reserve']}"
        )
        print(
            f"  overflow {format_cents(int(period.opening['overflow']))} + contributions "
            f"{cents['overflow']} - released {format_cents(int(period.released))} "
            f"+/- adjustments {format_cents(period.adjustments['overflow'])} = {money['overflow']}"
        )
    if not ok:
        print("at least one pool does not balance", file=sys.stderr)
    return 0 if ok else 1
