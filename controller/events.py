"""The events the ledger applies, as journaled: typed, frozen, versioned JSON (msgspec Structs).

Every event carries a unique ``event_id`` (the journal applies an id once) and the time ``at``
it happened (UTC, ISO 8601), so that replaying the journal never consults a clock. Money is
integer cents; rates are exact decimals (``"0.28"``). Who made a supervisor's change and why
travel with it (``by``, ``reason``).

**Signatures.** An event that moves money or authority by an operator's decision (a
verification, an adjustment, an enrollment, a void of a held round, a change of terms, an
approval) carries ``signatures``: each an enrolled operator's Ed25519 signature over the event
itself (:mod:`controller.security.signatures`), which the ledger checks whatever the entry path
(:mod:`controller.ledger.authority`). The field is ``UNSET`` (never encoded) on events journaled
before signatures existed, so their text, and their hash chain, are unchanged.

Some kinds are defined in modules of their own and join the union here: a table's devices'
(:mod:`controller.device_events`, whose events this module also names), a table agent's
(:mod:`controller.agent_events`), a wide-area link's (:mod:`controller.wide_events`) and an
operator's passkeys (:mod:`controller.passkey_events`, whose events this module also names, so
that they are imported from either), a supervisor's acknowledgement of faults
(:mod:`controller.fault_events`, likewise), and an operator's standing and the journal's own
authority (:mod:`controller.authority_events`, likewise).
"""

from __future__ import annotations

from decimal import Decimal

import msgspec

from controller.agent_events import AgentSigned, TableAgentEnrolled, TableAgentRevoked
from controller.authority_events import (
    AuthenticationFailed,
    HistoryRestored,
    JournalIdentified,
    ManifestApproved,
    OperatorEnrolled,
    OperatorRevoked,
    OperatorUnlocked,
)
from controller.device_events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    DeviceEvent,
    DeviceInput,
    device_event_id,
)
from controller.event_base import SCHEMA_VERSION, Event, Signature, Signatures
from controller.fault_events import FaultsAcknowledged
from controller.mystery_events import MysteryDrawn, MysteryRevealed
from controller.passkey_events import (
    PasskeyCloneSuspected,
    PasskeyEnrolled,
    PasskeyRegistration,
    PasskeyRevoked,
)
from controller.pool_events import PoolResumed, PoolRetired, PoolSuspended, PoolTransferred
from controller.wide_events import (
    SiteLinked,
    SiteReported,
    SiteResumed,
    SiteTotalsReported,
    WideAreaAwarded,
    WideAreaJoined,
    WideAreaStatusChanged,
)

__all__ = [
    "SCHEMA_VERSION",
    "AuthenticationFailed",
    "BetSensed",
    "BetsLocked",
    "CardDealt",
    "DealComplete",
    "DeviceEvent",
    "DeviceInput",
    "Event",
    "FaultsAcknowledged",
    "HistoryRestored",
    "JournalIdentified",
    "ManifestApproved",
    "MysteryDrawn",
    "MysteryRevealed",
    "OperatorEnrolled",
    "OperatorRevoked",
    "OperatorUnlocked",
    "PasskeyCloneSuspected",
    "PasskeyEnrolled",
    "PasskeyRegistration",
    "PasskeyRevoked",
    "PoolResumed",
    "PoolRetired",
    "PoolSuspended",
    "PoolTransferred",
    "Signature",
    "Signatures",
    "device_event_id",
]


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
    must_hit_by_cents: int | msgspec.UnsetType = msgspec.UNSET
    """A mystery level's ceiling (controller/mystery_events.py); unset for every other pool."""
    spill_to: str | msgspec.UnsetType = msgspec.UNSET
    """A mystery level's next level, which takes the amount past its trigger (unset: none)."""


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
    signatures: Signatures = msgspec.UNSET
    must_hit_by_cents: int | msgspec.UnsetType = msgspec.UNSET
    spill_to: str | msgspec.UnsetType = msgspec.UNSET


class SpotLimits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The least and the most one side-bet spot takes as a wager, in cents."""

    minimum_cents: int
    maximum_cents: int


class TableConfigured(Event, frozen=True, tag="table-configured"):
    """A table's side-bet rules; paytables travel whole (TOML text) so replay needs no files.

    The spots offered are those of :mod:`controller.rules.spots`, each under its key.
    ``wager_limits`` gives each odds spot it offers (``bonus``, ``ace-high``...) its minimum and
    maximum wager, enforced when bets are locked (docs/rules.md § 8). Every configuration
    writes it; an event journaled before it existed lacks it (``UNSET``, never encoded), and
    its table enforces no limits, so that old journals replay exactly as they were played.

    ``envy_includes_dealer`` is written ``false`` by every configuration: the Envy Bonus is
    paid for another player's hand, never the dealer's (58 Pa. Code § 688a.1; docs/rules.md
    § 9). An event journaled before that lacks it (``UNSET``, never encoded) and keeps the old
    default, true, so that its rounds replay as they were paid; ``true`` written out is
    likewise replayed, never configured anew.
    """

    table_id: str
    paytables: dict[str, str]
    seats: int = 6
    minimum_wager_cents: int = 100
    bonus: str | None = None
    ace_high: str | None = None
    progressive: str | None = None
    pool_id: str | None = None
    envy_minimum_cents: int = 500
    envy_includes_dealer: bool | msgspec.UnsetType = msgspec.UNSET
    max_payout_cents: int | None = None
    verification_cents: int | None = None
    tax_threshold_cents: int = 60_000
    tax_wager_multiple: int = 300
    hit_order: str = "sequential"
    by: str = "config"
    reason: str = "table configured"
    wager_limits: dict[str, SpotLimits] | msgspec.UnsetType = msgspec.UNSET
    insurance: str | msgspec.UnsetType = msgspec.UNSET
    """The NJ insurance wager's paytable (the ``insurance`` spot); ``UNSET`` (never encoded) on
    a table without it, so that events of tables without it read as they always did."""
    dynasty: str | msgspec.UnsetType = msgspec.UNSET
    """The EZ Pai Gow Dynasty Bonus paytable (the ``dynasty`` spot); ``UNSET`` (never encoded)
    on a table without it, so events of tables without it read as they always did."""
    dynasty_profile: str | msgspec.UnsetType = msgspec.UNSET
    """The reading of the Dynasty hands that paytable keeps to (:mod:`controller.rules.dynasty`),
    written with ``dynasty`` and only with it."""
    side_bets: dict[str, str] | msgspec.UnsetType = msgspec.UNSET
    """The paytable of each spot offered that has no field of its own above, by spot name
    (:attr:`controller.rules.spots.SpotSpec.own_field`); ``UNSET`` (never encoded) on a table
    offering none, which is every table of the spots above, so their events encode as before."""


class WagerLocked(Event, frozen=True, tag="wager-locked"):
    """A side-bet wager locked at "no more bets"; a progressive one contributes at once."""

    table_id: str
    round_id: str
    seat: int
    spot: str
    amount_cents: int
    signatures: Signatures = msgspec.UNSET


class RoundSettled(Event, frozen=True, tag="round-settled"):
    """The cards of a round: the dealer's seven and each seat's seven."""

    table_id: str
    round_id: str
    dealer: list[str]
    hands: dict[str, list[str]]
    signatures: Signatures = msgspec.UNSET


class HitVerified(Event, frozen=True, tag="hit-verified"):
    """A supervisor verified a pending payout; it may now be paid."""

    payout_id: str
    by: str
    signatures: Signatures = msgspec.UNSET


class MeterAdjusted(Event, frozen=True, tag="meter-adjusted"):
    """A documented correction to a pool's meter, reserve or overflow."""

    pool_id: str
    account: str
    amount_cents: int
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class RoundVoided(Event, frozen=True, tag="round-voided", omit_defaults=True):
    """A misdeal or a supervisor's decision: the round's wagers are returned, nothing is paid.

    Every producer sets ``refund_contributions``: the void then also reverses the
    contributions of the round's progressive wagers, and only a supervisor may void a held
    round (docs/money.md "Voids"). Without it (events journaled before it existed; it is then
    not encoded, so their text is unchanged) a void keeps its first meaning: the wagers are
    returned and their contributions stay in the pool.
    """

    table_id: str
    round_id: str
    by: str
    reason: str
    refund_contributions: bool = False
    signatures: Signatures = msgspec.UNSET
    agent_signature: AgentSigned = msgspec.UNSET
    """A device's void forwarded by the table's enrolled agent carries its signature."""


class TableStatusChanged(Event, frozen=True, tag="table-status"):
    """A table went offline (its progressive is then unplayable) or came back."""

    table_id: str
    online: bool
    reason: str


class ConfigurationApproved(Event, frozen=True, tag="configuration-approved"):
    """A manager approved a configuration file (its digest) and the changes it makes.

    Pools opened, terms changed, tables configured and wide-area links made by the
    configuration take effect only inside this signed bundle, all or none
    (:mod:`controller.ledger.authority`).
    """

    configuration: str
    changes: list[PoolOpened | PoolTermsChanged | TableConfigured | SiteLinked | WideAreaJoined]
    by: str
    reason: str = "configuration approved"
    dual_control_cents: int | None = None
    """A verification of a win at or above this needs two operators' signatures."""
    lockout_after: int = 5
    """Failed authentications in a row that lock an operator out."""
    signatures: Signatures = msgspec.UNSET
    jurisdiction: str | msgspec.UnsetType = msgspec.UNSET
    """The jurisdiction profile the configuration names (controller/ledger/jurisdictions.py);
    ``UNSET`` (never encoded) when it names none, as every approval before profiles existed."""


class FaultRecorded(Event, frozen=True, tag="fault"):
    """Bad input or a device fault, journaled so that the record is complete."""

    source: str
    reason: str
    detail: str = ""


class SequencerTookOver(Event, frozen=True, tag="sequencer-took-over"):
    """A controller node took the sequencer of a shared journal over (docs/ha.md).

    The first row a node journals under its epoch (``takeover-<epoch>``): the rows from here to
    the next takeover are this node's. ``previous_node`` held ``previous_epoch`` before it
    (none: the journal's first sequencer), and its lease had ``lease_left_ms`` left by the
    database's clock (0 or less: it had run out; more: the same node restarting). ``why`` says
    it in words. The ledger applies it as a no-op: it moves no money and changes no state.
    """

    node: str
    epoch: int
    previous_node: str
    previous_epoch: int
    lease_left_ms: int
    why: str


class CheckpointRecorded(Event, frozen=True, tag="checkpoint"):
    """The controller's signed statement of the journal's head and state (docs/journal.md).

    Journaled by the controller every so many rows, and at a clean shutdown: row ``head_seq``
    of the journal has the hash ``head_hash``, and the ledger's state after it has the digest
    ``state_digest`` (:mod:`controller.ledger.snapshot`) and these meters (cents). The
    ``signature`` is the controller key's (``key_id``) Ed25519 signature over all of it
    (:mod:`controller.journal.checkpoints`). The ledger applies it as a no-op.
    """

    controller: str
    head_seq: int
    head_hash: str
    state_digest: str
    meters: dict[str, int]
    key_id: str
    signature: str


AnyEvent = (
    PoolOpened
    | PoolTermsChanged
    | TableConfigured
    | WagerLocked
    | RoundSettled
    | BetSensed
    | BetsLocked
    | CardDealt
    | DealComplete
    | RoundVoided
    | TableStatusChanged
    | HitVerified
    | MeterAdjusted
    | OperatorEnrolled
    | OperatorRevoked
    | ManifestApproved
    | ConfigurationApproved
    | OperatorUnlocked
    | AuthenticationFailed
    | FaultRecorded
    | HistoryRestored
    | JournalIdentified
    | CheckpointRecorded
    | SequencerTookOver
    | SiteLinked
    | SiteReported
    | SiteTotalsReported
    | SiteResumed
    | WideAreaJoined
    | WideAreaStatusChanged
    | WideAreaAwarded
    | TableAgentEnrolled
    | TableAgentRevoked
    | PasskeyEnrolled
    | PasskeyRevoked
    | PasskeyCloneSuspected
    | PoolSuspended
    | PoolResumed
    | PoolTransferred
    | PoolRetired
    | FaultsAcknowledged
    | MysteryDrawn
    | MysteryRevealed
)


_ENCODER = msgspec.json.Encoder(order="sorted")
_DECODER = msgspec.json.Decoder(AnyEvent)


def encode_event(event: AnyEvent) -> bytes:
    """Canonical JSON: sorted keys, no spaces, decimals as strings."""
    return _ENCODER.encode(event)


def decode_event(data: bytes | str) -> AnyEvent:
    """Parse and validate one event; raises :class:`msgspec.ValidationError` naming the field."""
    return _DECODER.decode(data)
