"""The events the ledger applies, as journaled: typed, frozen, versioned JSON (msgspec Structs).

Every event carries a unique ``event_id`` (the journal applies an id once) and the time ``at``
it happened (UTC, ISO 8601), so that replaying the journal never consults a clock. Money is
integer cents; rates are exact decimals (``"0.28"``). Who made a supervisor's change and why
travel with it (``by``, ``reason``).
"""

from __future__ import annotations

from decimal import Decimal

import msgspec

SCHEMA_VERSION = 1


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind"):
    """Fields every event has."""

    event_id: str
    at: str


class PoolOpened(Event, frozen=True, tag="pool-opened"):
    """A new pool, its meter seeded by the house."""

    pool_id: str
    paytable: str
    seed_cents: int
    rate_of_progression: Decimal
    reserve_rate: Decimal = Decimal(0)
    limit_cents: int | None = None
    by: str = "config"
    reason: str = "pool configured"


class PoolTermsChanged(Event, frozen=True, tag="pool-terms-changed"):
    """New terms for a pool: queued until its jackpot is won, or applied now if asked."""

    pool_id: str
    paytable: str
    seed_cents: int
    rate_of_progression: Decimal
    by: str
    reason: str
    reserve_rate: Decimal = Decimal(0)
    limit_cents: int | None = None
    apply_now: bool = False


class TableConfigured(Event, frozen=True, tag="table-configured"):
    """A table's side-bet rules; paytables travel whole (TOML text) so replay needs no files."""

    table_id: str
    paytables: dict[str, str]
    seats: int = 6
    minimum_wager_cents: int = 100
    bonus: str | None = None
    ace_high: str | None = None
    progressive: str | None = None
    pool_id: str | None = None
    envy_minimum_cents: int = 500
    envy_includes_dealer: bool = True
    max_payout_cents: int | None = None
    verification_cents: int | None = None
    tax_threshold_cents: int = 60_000
    tax_wager_multiple: int = 300
    hit_order: str = "sequential"
    by: str = "config"
    reason: str = "table configured"


class WagerLocked(Event, frozen=True, tag="wager-locked"):
    """A side-bet wager locked at "no more bets"; a progressive one contributes at once."""

    table_id: str
    round_id: str
    seat: int
    spot: str
    amount_cents: int


class RoundSettled(Event, frozen=True, tag="round-settled"):
    """The cards of a round: the dealer's seven and each seat's seven."""

    table_id: str
    round_id: str
    dealer: list[str]
    hands: dict[str, list[str]]


class HitVerified(Event, frozen=True, tag="hit-verified"):
    """A supervisor verified a pending payout; it may now be paid."""

    payout_id: str
    by: str


class MeterAdjusted(Event, frozen=True, tag="meter-adjusted"):
    """A documented correction to a pool's meter, reserve or overflow."""

    pool_id: str
    account: str
    amount_cents: int
    by: str
    reason: str


class FaultRecorded(Event, frozen=True, tag="fault"):
    """Bad input or a device fault, journaled so that the record is complete."""

    source: str
    reason: str
    detail: str = ""


AnyEvent = (
    PoolOpened
    | PoolTermsChanged
    | TableConfigured
    | WagerLocked
    | RoundSettled
    | HitVerified
    | MeterAdjusted
    | FaultRecorded
)

_ENCODER = msgspec.json.Encoder(order="sorted")
_DECODER = msgspec.json.Decoder(AnyEvent)


def encode_event(event: AnyEvent) -> bytes:
    """Canonical JSON: sorted keys, no spaces, decimals as strings."""
    return _ENCODER.encode(event)


def decode_event(data: bytes | str) -> AnyEvent:
    """Parse and validate one event; raises :class:`msgspec.ValidationError` naming the field."""
    return _DECODER.decode(data)
