"""What applying an event did, as journaled beside it: contributions, pays, payouts, changes.

Effects are derived: replaying the event from the state before it gives them again, which is
what ``jackpotd verify`` checks. They exist in the journal so that an auditor (and
``jackpotd report``) can read every movement of money without re-running the rules. Exact
amounts of cents are written as fractions in text (``"37/4"``), whole cents as integers.
"""

from __future__ import annotations

from fractions import Fraction

import msgspec

from controller.effect_base import Effect
from controller.wide_effects import (
    AwardMade,
    SiteAdvanced,
    SiteLinkResumed,
    SiteMessageQueued,
    SiteReconciled,
    SiteRefused,
    SiteSet,
    WideAreaStatus,
)


def fraction_text(value: Fraction) -> str:
    """An exact amount as text: ``"12"`` or ``"37/4"``."""
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def parse_fraction(text: str) -> Fraction:
    """The inverse of :func:`fraction_text`."""
    return Fraction(text)


class Share(Effect, frozen=True):
    """A locked progressive wager and its exact contributions to each account of its pool."""

    pool_id: str
    table_id: str
    round_id: str
    seat: int
    wager_cents: int
    to_meter: str
    to_reserve: str
    to_overflow: str


class Contributed(Share, frozen=True, tag="contributed"):
    """A locked progressive wager's exact contributions."""


class ContributionRefunded(Share, frozen=True, tag="contribution-refunded"):
    """A void reversed a locked progressive wager's contributions (``to_*``, as locked).

    ``from_*`` is where the money was taken back from: each part from its own account, or from
    the meter where that account no longer held it. A meter then below its seed was reseeded
    (``reseed_cents``), from the reserve first and then by the house.
    """

    from_meter: str
    from_reserve: str
    from_overflow: str
    reseed_cents: int
    reseed_from_reserve_cents: int
    reseed_from_house_cents: int


class MeterPaid(Effect, frozen=True, tag="meter-paid"):
    """A pay taken off a meter, and the reseed after it."""

    pool_id: str
    payout_id: str
    paid_cents: int
    meter_before: str
    reseed_cents: int
    from_reserve_cents: int
    from_house_cents: int
    from_overflow: str
    reset: bool
    terms_applied: bool


class PayoutMade(Effect, frozen=True, tag="payout"):
    """One settled wager or Envy bonus."""

    payout_id: str
    table_id: str
    round_id: str
    seat: int
    spot: str
    kind: str
    wager_cents: int
    line: str | None
    win_cents: int
    returned_cents: int
    from_meter_cents: int
    pool_id: str | None
    capped_cents: int
    envy_from_seat: int | None
    status: str
    tax_report: bool
    hand: str = ""


class PoolOpenedEffect(Effect, frozen=True, tag="pool-opened"):
    """A pool was opened at revision ``revision``, the house funding its seed."""

    pool_id: str
    revision: int
    seed_cents: int


class TermsChanged(Effect, frozen=True, tag="terms-changed"):
    """New pool terms, queued until the jackpot is won or applied at once."""

    pool_id: str
    revision: int
    applied: bool
    reseed_cents: int


class Adjusted(Effect, frozen=True, tag="adjusted"):
    """A documented correction."""

    pool_id: str
    account: str
    amount_cents: int


class PoolTransfer(Effect, frozen=True, tag="pool-transfer"):
    """One side of a transfer between pools (controller/ledger/pool_life.py).

    What each of ``pool_id``'s accounts gained (``+``, the receiving pool) or lost (``-``, the
    pool it left), as exact fraction text; ``other_pool`` is the pool on the other side.
    """

    pool_id: str
    other_pool: str
    meter: str
    reserve: str
    overflow: str


class PoolDisposed(Effect, frozen=True, tag="pool-disposed"):
    """A retired pool's disposition (controller/ledger/pool_life.py).

    What each account gave up (``-``, exact fraction text), the final award paid of it in whole
    cents, and what was recorded as orphaned (exact), under ``disposition``.
    """

    pool_id: str
    disposition: str
    meter: str
    reserve: str
    overflow: str
    award_cents: int
    orphaned: str


class PastTrigger(Effect, frozen=True, tag="past-trigger"):
    """What a mystery hit moved of the meter past its trigger (controller/ledger/mystery_level.py).

    The level pays its trigger's whole cents; what the meter held past it leaves the meter the
    next trigger is measured on. One effect per pool it moves: what each of ``pool_id``'s
    accounts gained (``+``) or lost (``-``), as exact fraction text. ``level`` is the mystery
    level whose hit moved it: ``pool_id`` itself when the amount stayed as the level's own
    overflow, the level before when this is the next level taking it (``spill_to``).
    """

    pool_id: str
    level: str
    meter: str
    overflow: str


class Verified(Effect, frozen=True, tag="verified"):
    """A pending payout verified by a supervisor."""

    payout_id: str
    by: str


class TableSet(Effect, frozen=True, tag="table-set"):
    """A table's rules took effect at configuration revision ``revision``."""

    table_id: str
    revision: int


class BetChanged(Effect, frozen=True, tag="bet"):
    """A bet sensor's report: the amount now on a spot (0 when the chip left)."""

    table_id: str
    seat: int
    spot: str
    amount_cents: int


class RoundStarted(Effect, frozen=True, tag="round-started"):
    """Bets locked: the round is being dealt with this many wagers."""

    table_id: str
    round_id: str
    wagers: int


class WagerRefused(Effect, frozen=True, tag="wager-refused"):
    """A chip on a spot at lock time that could not be a wager (it is returned)."""

    table_id: str
    round_id: str
    seat: int
    spot: str
    amount_cents: int
    reason: str


class CardRecorded(Effect, frozen=True, tag="card"):
    """A card dealt to a position (0 the dealer)."""

    table_id: str
    round_id: str
    position: int
    card: str


class RoundHeld(Effect, frozen=True, tag="round-held"):
    """The round waits for a supervisor; no meter moved."""

    table_id: str
    round_id: str
    reason: str


class RoundClosed(Effect, frozen=True, tag="round-closed"):
    """The round is over: ``settled`` or ``void``."""

    table_id: str
    round_id: str
    how: str


class TableStatus(Effect, frozen=True, tag="table-status"):
    """A table opened or closed."""

    table_id: str
    online: bool
    reason: str


class OperatorChanged(Effect, frozen=True, tag="operator"):
    """An operator was enrolled (with a role) or revoked (role empty)."""

    name: str
    role: str


class ManifestSet(Effect, frozen=True, tag="manifest"):
    """The approved software and configuration digests."""

    software: str
    configuration: str


class AuthenticationCounted(Effect, frozen=True, tag="authentication-failed"):
    """A failed authentication of an operator; ``locked`` when it locked them out."""

    name: str
    failures: int
    locked: bool


class OperatorUnlockedEffect(Effect, frozen=True, tag="operator-unlocked"):
    """An operator locked out may act again."""

    name: str
    by: str


class ConfigurationSet(Effect, frozen=True, tag="configuration"):
    """A manager's approval of a configuration took effect, with the changes it made."""

    configuration: str
    changes: int


class Balances(Effect, frozen=True, tag="balances"):
    """A pool's exact balances after the event, and its running totals (for reports)."""

    pool_id: str
    meter: str
    reserve: str
    overflow: str
    contributions: str
    paid_cents: int
    house_funding_cents: int
    reserve_funding_cents: int
    adjustments_cents: int


AnyEffect = (
    Contributed
    | ContributionRefunded
    | MeterPaid
    | PayoutMade
    | PoolOpenedEffect
    | TermsChanged
    | Adjusted
    | PoolTransfer
    | PoolDisposed
    | PastTrigger
    | Verified
    | TableSet
    | BetChanged
    | RoundStarted
    | WagerRefused
    | CardRecorded
    | RoundHeld
    | RoundClosed
    | TableStatus
    | OperatorChanged
    | ManifestSet
    | AuthenticationCounted
    | OperatorUnlockedEffect
    | ConfigurationSet
    | Balances
    | SiteSet
    | SiteAdvanced
    | SiteRefused
    | SiteLinkResumed
    | AwardMade
    | SiteReconciled
    | SiteMessageQueued
    | WideAreaStatus
)

_ENCODER = msgspec.json.Encoder(order="sorted")
_DECODER = msgspec.json.Decoder(list[AnyEffect])


def encode_effects(effects: tuple[AnyEffect, ...] | list[AnyEffect]) -> bytes:
    """Canonical JSON of a list of effects."""
    return _ENCODER.encode(list(effects))


def decode_effects(data: bytes | str) -> list[AnyEffect]:
    """Parse journaled effects."""
    return _DECODER.decode(data)
