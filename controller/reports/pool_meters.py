"""The meters a regulator asks of each pool and table over a period, from the journal's rows.

N.J.A.C. 13:69E-1.39A(b) lists the meters a progressive controller keeps; New York wants the
last hits and meters (9 NYCRR 5320.8). Per pool, over a period (a run of rows,
controller/reports/period.py):

* the **qualifying wagers**: how many contributed and the amount wagered (``contributed``
  effects), and those a void took back (``contribution-refunded``);
* the **meters at the period's close**: the display meter, the reserve, the overflow (exact,
  fractions of a cent included), the house's and the reserve's seed funding, and the totals
  of the life of the pool (contributions, paid) as the last ``balances`` effect has them;
* the **hits** in the period, their count and the amount won, and **the last 25 hits** as of
  the period's close whenever they were: row, time, table, seat, line, amount, and who verified;
* every **adjustment** in the period with its account, amount, reason and the names of the
  operators who signed it (and whether by passkey);

and per table: its wagers (every settled wager, progressive or not), their amount, its
contributions to each pool and its hits. Exact integers and fractions only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from controller.effects import (
    Balances,
    Contributed,
    ContributionRefunded,
    MeterPaid,
    PayoutMade,
    Verified,
    decode_effects,
)
from controller.events import MeterAdjusted, decode_event
from controller.journal import JournalError
from controller.ledger.pool import LAST_HITS
from controller.ledger.settlement import PayoutKind

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class HitRecord:
    """One meter hit, as the regulator's list of the last hits shows it."""

    seq: int
    at: str
    payout_id: str
    table_id: str
    seat: int
    line: str | None
    paid_cents: int
    status: str
    verified_by: str | None = None


@dataclass(frozen=True, slots=True)
class AdjustmentRecord:
    """One meter adjustment and who signed it."""

    seq: int
    at: str
    account: str
    amount_cents: int
    reason: str
    by: str
    signed_by: tuple[str, ...]
    passkeys: int
    """How many of the signatures were a passkey's (docs/security.md, "Passkeys")."""


@dataclass(slots=True)
class PoolMeters:
    """One pool's meters over the period."""

    wagers: int = 0
    wagered_cents: int = 0
    refunded_wagers: int = 0
    refunded_cents: int = 0
    hits: int = 0
    won_cents: int = 0
    closing: Balances | None = None
    opening: Balances | None = None
    last_hits: list[HitRecord] = field(default_factory=list)
    adjustments: list[AdjustmentRecord] = field(default_factory=list)


@dataclass(slots=True)
class TableFigures:
    """One table's wagers, contributions and hits over the period."""

    wagers: int = 0
    wagered_cents: int = 0
    contributions: dict[str, Fraction] = field(default_factory=dict)
    """By pool: what its wagers put on the meter, the reserve and the overflow together."""
    hits: int = 0
    won_from_meters_cents: int = 0


@dataclass(frozen=True, slots=True)
class Meters:
    """Every pool's and table's figures of one period."""

    pools: dict[str, PoolMeters]
    tables: dict[str, TableFigures]


def _adjustment(row: dict[str, Any]) -> MeterAdjusted | None:
    try:
        event = decode_event(row["event"])
    except msgspec.MsgspecError as error:
        raise JournalError(f"row {row['seq']}: {error}") from error
    return event if isinstance(event, MeterAdjusted) else None


def meters(rows: Sequence[dict[str, Any]], begin: int, stop: int) -> Meters:
    """The figures of rows ``begin`` to ``stop`` (list indexes) of ``rows`` in journal order."""
    pools: dict[str, PoolMeters] = {}
    tables: dict[str, TableFigures] = {}
    hits: dict[str, list[HitRecord]] = {}
    for index, row in enumerate(rows[:stop]):
        if row["outcome"] != "applied":
            continue
        inside = index >= begin
        effects = decode_effects(row["effects"])
        payouts = {e.payout_id: e for e in effects if isinstance(e, PayoutMade)}
        for effect in effects:
            if isinstance(effect, Balances):
                pool = pools.setdefault(effect.pool_id, PoolMeters())
                if not inside:
                    pool.opening = effect
                pool.closing = effect
            elif isinstance(effect, MeterPaid):
                payout = payouts.get(effect.payout_id)
                record = HitRecord(
                    int(row["seq"]), str(row["at"]), effect.payout_id,
                    payout.table_id if payout else "", payout.seat if payout else 0,
                    payout.line if payout else None, effect.paid_cents,
                    payout.status if payout else "",
                )  # fmt: skip
                hits.setdefault(effect.pool_id, []).append(record)
                if inside:
                    _hit(pools.setdefault(effect.pool_id, PoolMeters()), tables, record)
            elif isinstance(effect, Verified):
                _verified(hits, effect)
            elif inside:
                _counted(pools, tables, effect)
        if inside and row["kind"] == "meter-adjusted":
            _adjusted(pools, row)
    for pool_id, pool in pools.items():
        pool.last_hits = list(reversed(hits.get(pool_id, [])[-LAST_HITS:]))
    return Meters(pools, tables)


def _hit(pool: PoolMeters, tables: dict[str, TableFigures], record: HitRecord) -> None:
    pool.hits += 1
    pool.won_cents += record.paid_cents
    table = tables.setdefault(record.table_id, TableFigures())
    table.hits += 1
    table.won_from_meters_cents += record.paid_cents


def _verified(hits: dict[str, list[HitRecord]], effect: Verified) -> None:
    for records in hits.values():
        for place, record in enumerate(records):
            if record.payout_id == effect.payout_id:
                records[place] = HitRecord(
                    record.seq, record.at, record.payout_id, record.table_id, record.seat,
                    record.line, record.paid_cents, "verified", effect.by,
                )  # fmt: skip
                return


def _counted(pools: dict[str, PoolMeters], tables: dict[str, TableFigures], effect: Any) -> None:  # noqa: ANN401
    if isinstance(effect, Contributed):
        pool = pools.setdefault(effect.pool_id, PoolMeters())
        pool.wagers += 1
        pool.wagered_cents += effect.wager_cents
        table = tables.setdefault(effect.table_id, TableFigures())
        share = (
            Fraction(effect.to_meter) + Fraction(effect.to_reserve) + Fraction(effect.to_overflow)
        )
        table.contributions[effect.pool_id] = table.contributions.get(effect.pool_id, 0) + share
    elif isinstance(effect, ContributionRefunded):
        pool = pools.setdefault(effect.pool_id, PoolMeters())
        pool.refunded_wagers += 1
        pool.refunded_cents += effect.wager_cents
        table = tables.setdefault(effect.table_id, TableFigures())
        share = (
            Fraction(effect.from_meter) + Fraction(effect.from_reserve)
            + Fraction(effect.from_overflow)
        )  # fmt: skip
        table.contributions[effect.pool_id] = table.contributions.get(effect.pool_id, 0) - share
    elif isinstance(effect, PayoutMade) and effect.kind not in {PayoutKind.ENVY, PayoutKind.VOID}:
        table = tables.setdefault(effect.table_id, TableFigures())
        table.wagers += 1
        table.wagered_cents += effect.wager_cents


def _adjusted(pools: dict[str, PoolMeters], row: dict[str, Any]) -> None:
    event = _adjustment(row)
    if event is None:
        return
    signatures = [] if isinstance(event.signatures, msgspec.UnsetType) else event.signatures
    record = AdjustmentRecord(
        int(row["seq"]), str(row["at"]), event.account, event.amount_cents, event.reason,
        event.by, tuple(signature.operator for signature in signatures),
        sum(not isinstance(signature.webauthn, msgspec.UnsetType) for signature in signatures),
    )  # fmt: skip
    pools.setdefault(event.pool_id, PoolMeters()).adjustments.append(record)
