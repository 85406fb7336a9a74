"""Meter pays and payouts as the journal records them (effects), shared by every ledger handler."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.effects import MeterPaid, PayoutMade, fraction_text

if TYPE_CHECKING:
    from controller.ledger.pool import MeterPayment
    from controller.ledger.settlement import Payout


def meter_paid(pool_id: str, payment: MeterPayment) -> MeterPaid:
    """A pay taken off a meter, as journaled."""
    return MeterPaid(
        pool_id, payment.hit_id or "", payment.paid_cents, fraction_text(payment.meter_before),
        payment.reseed_cents, payment.from_reserve_cents, payment.from_house_cents,
        fraction_text(payment.from_overflow), payment.reset, payment.terms_applied,
    )  # fmt: skip


def payout_effect(table_id: str, round_id: str, payout: Payout) -> PayoutMade:
    """A payout as journaled."""
    return PayoutMade(
        payout.payout_id, table_id, round_id, payout.seat, str(payout.spot), str(payout.kind),
        payout.wager_cents, payout.line, payout.win_cents, payout.returned_cents,
        payout.from_meter_cents, payout.pool_id, payout.capped_cents, payout.envy_from_seat,
        str(payout.status), payout.tax_report, payout.hand,
    )  # fmt: skip
