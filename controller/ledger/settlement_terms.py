"""What settling a round takes and gives: the dealt round, the table's rules, the payouts.

:func:`controller.ledger.settlement.settle_round` is given a :class:`TableRound` (the locked
:class:`SeatWager` of each spot and the seven-card hands) and the table's :class:`TableRules`,
and returns a :class:`Settlement`: one :class:`Payout` per wager and per Envy bonus, and the
meter payments behind the hits. The journal's rows of them are controller/ledger/codec.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from controller.errors import RefusedError
from controller.rules.cards import check_distinct

# Spot is needed at run time: a snapshot's pending payouts are read back by msgspec, which
# resolves Payout's field types here (controller/ledger/snapshot.py).
from controller.rules.spots import Spot, spec_of, spots

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.events import SpotLimits
    from controller.ledger.pool import Contribution, MeterPayment, Pool
    from controller.rules.cards import SevenCardHand
    from controller.rules.paytable import Paytable

__all__ = [
    "HitOrder",
    "Payout",
    "PayoutKind",
    "PayoutStatus",
    "SeatWager",
    "Settlement",
    "SettlementError",
    "TableRound",
    "TableRules",
]


class SettlementError(RefusedError, ValueError):
    """A round that cannot be settled as given; nothing is paid and no meter moves."""


class HitOrder(StrEnum):
    """How several progressive hits on one pool in one round are paid."""

    SEQUENTIAL = "sequential"
    SPLIT = "split"


class PayoutKind(StrEnum):
    """What a payout is."""

    WIN = "win"
    PUSH = "push"
    LOSS = "loss"
    PROGRESSIVE = "progressive"
    ENVY = "envy"
    VOID = "void"
    """The round was void: the wager is returned."""


class PayoutStatus(StrEnum):
    """Whether a payout may be paid now or waits for a supervisor."""

    PAID = "paid"
    PENDING = "pending"


@dataclass(frozen=True, slots=True)
class SeatWager:
    """A locked wager on one spot of one seat."""

    seat: int
    spot: Spot
    amount_cents: int
    contribution: Contribution | None = None
    """What a progressive wager added to its pool at lock, exactly: a void takes back this,
    not what the terms in force at the void would say."""
    levels: tuple[Contribution, ...] = ()
    """On a multi-level pool, what it added to each level, in the paytable's level order."""


@dataclass(frozen=True, slots=True)
class TableRound:
    """A dealt round: the locked wagers and the seven-card hands of the seats and the dealer."""

    round_id: str
    dealer: SevenCardHand
    hands: Mapping[int, SevenCardHand]
    wagers: tuple[SeatWager, ...]
    reference: str = ""
    """Prefix of the payout ids; unique per settlement (the journal uses the event id)."""

    def payout_id(self, seat: int, spot: Spot, *parts: object) -> str:
        """A payout's id: reference, seat, spot, and more for an Envy bonus."""
        return "/".join(str(part) for part in (self.reference or self.round_id, seat, spot, *parts))

    def check(self) -> None:
        """Refuse a round that cannot be settled: shared cards, or a wager without a hand."""
        cards = (*self.dealer.cards, *(card for hand in self.hands.values() for card in hand.cards))
        check_distinct(cards)
        for wager in self.wagers:
            if wager.seat not in self.hands:
                raise SettlementError(f"seat {wager.seat} has a wager but no hand")
            if wager.amount_cents <= 0:
                raise SettlementError(f"seat {wager.seat}: a wager must be above $0")
        spots = [(wager.seat, wager.spot) for wager in self.wagers]
        if len(set(spots)) != len(spots):
            raise SettlementError("a spot holds two wagers")


@dataclass(frozen=True, slots=True)
class TableRules:
    """What a table's side bets pay and how (from the controller's configuration)."""

    table_id: str
    seats: int = 6
    bonus: Paytable | None = None
    ace_high: Paytable | None = None
    insurance: Paytable | None = None
    progressive: Paytable | None = None
    pool_id: str | None = None
    envy_minimum_cents: int = 500
    envy_includes_dealer: bool = False
    """Whether the dealer's hand pays Envy: never under § 688a.1; true only for a table whose
    ``table-configured`` event was journaled before the rule (docs/rules.md § 9)."""
    max_payout_cents: int | None = None
    verification_cents: int | None = None
    tax_threshold_cents: int = 60_000
    tax_wager_multiple: int = 300
    hit_order: HitOrder = HitOrder.SEQUENTIAL
    wager_limits: Mapping[Spot, SpotLimits] | None = None
    """Each odds spot's minimum and maximum wager; None (no limits) only for a table configured
    before limits existed (:mod:`controller.ledger.wager_limits`)."""
    dynasty: Paytable | None = None
    """The EZ Pai Gow Dynasty Bonus paytable, on the lines of the table's Dynasty profile."""
    side_bets: Mapping[Spot, Paytable] = field(default_factory=dict)
    """The paytable of each spot offered that has no field of its own above
    (:attr:`controller.rules.spots.SpotSpec.own_field`)."""

    def paytable(self, spot: Spot) -> Paytable | None:
        """The paytable of ``spot`` at this table, or None where it is not offered."""
        spec = spec_of(spot)
        if not spec.own_field:
            return self.side_bets.get(spot)
        table: Paytable | None = getattr(self, spec.key)
        return table

    def offered(self) -> dict[Spot, Paytable]:
        """The paytable of each spot the table offers, in the registry's order."""
        return {spot: table for spot in spots() if (table := self.paytable(spot)) is not None}


@dataclass(frozen=True, slots=True)
class Payout:
    """One settled wager or Envy bonus. Amounts are whole cents; ``win`` excludes the wager."""

    payout_id: str
    seat: int
    spot: Spot
    kind: PayoutKind
    wager_cents: int
    line: str | None = None
    win_cents: int = 0
    returned_cents: int = 0
    from_meter_cents: int = 0
    pool_id: str | None = None
    capped_cents: int = 0
    envy_from_seat: int | None = None
    status: PayoutStatus = PayoutStatus.PAID
    tax_report: bool = False
    hand: str = ""
    """The seven cards that won it: the seat's own, or for Envy the other hand's."""

    @property
    def total_cents(self) -> int:
        """What the player receives: the win and any returned wager."""
        return self.win_cents + self.returned_cents


@dataclass(frozen=True, slots=True)
class Settlement:
    """The outcome of a round: payouts in order, and the meter payments behind the hits."""

    payouts: tuple[Payout, ...]
    meter_payments: tuple[MeterPayment, ...]
    pool: Pool | None
    """A one-level pool after the hits (None on a multi-level pool: see ``pools``)."""
    pools: tuple[Pool, ...] = ()
    """Every pool (each level of a multi-level pool) after the hits."""
