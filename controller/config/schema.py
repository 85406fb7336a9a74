"""The configuration's types: the TOML document as decoded, and the validated objects.

:mod:`controller.config.load` loads a file into these. The ``Raw*`` Structs mirror the file and
refuse unknown keys; the dataclasses are what the daemon runs on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Final

import msgspec

from controller.config.gaming_day import GamingDay
from controller.errors import ConfigurationError
from controller.events import TableConfigured  # noqa: TC001 - a dataclass field type

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.wide_area_settings import WideAreaSettings
    from controller.journal.location import JournalLocation
    from controller.ledger.pool import PoolTerms
    from controller.ledger.settlement import HitOrder, TableRules
    from controller.plugins import DriverSpec
    from controller.rules.paytable import Paytable
    from controller.rules.ranking import AceFive


class ConfigError(ConfigurationError, ValueError):
    """A configuration that cannot be used; the message is one line: ``file: key: reason``."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        super().__init__(f"{source}: {key}: {reason}")
        self.source = source
        self.key = key
        self.reason = reason


class Raw(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A table of the file as written; unknown keys are refused (subclasses inherit this)."""


class RawController(Raw, frozen=True):
    """The ``[controller]`` table as written."""

    site: str
    controller_id: str = msgspec.field(name="id")
    journal: str = "var/journal.db"
    jurisdiction: str = "pa"
    ace_five: str = "second-highest"
    dynasty_profile: str | None = None
    verification_amount: str | None = None
    tax_threshold: str = "$600"
    tax_wager_multiple: int = 300
    hit_order: str = "sequential"
    heartbeat_timeout_s: float = 10.0
    paytable_dirs: list[str] = []
    dual_control_amount: str = "$10,000"
    lockout_after: int = 5
    pool_profile: str | None = None
    key_file: str | None = None
    sealing_key_file: str | None = None
    signer_socket: str | None = None
    operator_socket: str | None = None
    operator_group: str | None = None
    checkpoint_rows: int = 10_000
    checkpoint_interval_s: float = 300.0
    high_water_file: str | None = None
    head_rows: int = 100
    head_interval_s: float = 1.0
    node: str | None = None
    lease_s: float = 10.0
    commit_hang_s: float = 30.0
    gaming_day_start: str = "00:00"
    time_zone: str = "UTC"


class RawPool(Raw, frozen=True):
    """One ``[[pools]]`` entry as written."""

    pool_id: str = msgspec.field(name="id")
    paytable: str
    seed: str | None = None
    rate_of_progression: str | None = None
    reserve_rate: str | None = None
    limit: str | None = None


class RawSpotLimits(Raw, frozen=True):
    """``minimum`` and ``maximum`` of one spot in a table's ``wager_limits``, as written."""

    minimum: str | None = None
    maximum: str | None = None


class RawWagerLimits(Raw, frozen=True):
    """A table's ``wager_limits``: per-spot overrides of ``minimum_wager`` and ``maximum_wager``.

    ``progressive`` is read only to refuse it with its reason: that spot takes its paytable's
    one denomination.
    """

    bonus: RawSpotLimits | None = None
    ace_high: RawSpotLimits | None = None
    insurance: RawSpotLimits | None = None
    progressive: RawSpotLimits | None = None
    dynasty: RawSpotLimits | None = None


class RawSideBet(Raw, frozen=True):
    """A table's ``side_bets.<key>``: a spot without a key of its own (controller/rules/spots.py).

    ``minimum`` and ``maximum`` override ``minimum_wager`` and ``maximum_wager`` for it, as
    ``wager_limits`` does for the spots with a key of their own.
    """

    paytable: str
    minimum: str | None = None
    maximum: str | None = None


class RawTable(Raw, frozen=True):
    """One ``[[tables]]`` entry as written."""

    table_id: str = msgspec.field(name="id")
    transport: str
    seats: int = 6
    bonus: str | None = None
    ace_high: str | None = None
    insurance: str | None = None
    """The NJ insurance wager's paytable (an ``insurance`` one, filed by the operator)."""
    progressive: str | None = None
    dynasty: str | None = None
    """The EZ Pai Gow Dynasty Bonus paytable (a ``dynasty-bonus`` one)."""
    pool: str | None = None
    minimum_wager: str = "$1"
    maximum_wager: str = "$1,000"
    wager_limits: RawWagerLimits | None = None
    envy_minimum: str = "$5"
    envy_includes_dealer: bool | None = None
    """Read only to refuse ``true``: § 688a.1 never pays Envy for the dealer's hand."""
    max_payout: str | None = None
    heartbeat_timeout_s: float | None = None
    side_bets: dict[str, RawSideBet] = {}
    """Each registered spot offered that has no key of its own above, by its key."""


MAX_STREAMS: Final = 4096
"""The most ``[web] max_streams`` may allow: each stream is a socket, and the unit's
``LimitNOFILE`` (systemd/jackpotd.service) keeps room above it for the journal, broker and ports."""


MAX_CONNECTIONS: Final = 60_000
"""The most ``[web] max_connections`` may allow (a port's connections are file descriptors)."""


class WebSettings(Raw, frozen=True):
    """The ``[web]`` table: where the meter display and ``/metrics`` listen."""

    host: str = "127.0.0.1"
    port: int = 8080
    max_streams: Annotated[int, msgspec.Meta(ge=1, le=MAX_STREAMS)] = 64
    """Open ``/events`` streams at most; more are answered 503 (docs/faults.md)."""
    max_connections: Annotated[int, msgspec.Meta(ge=2, le=MAX_CONNECTIONS)] = 1024
    """Open connections to the port at most, streams included; fewer if the open-file limit
    leaves less room (controller/web/limits.py, docs/operations.md "The web port")."""
    header_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=300)] = 10.0
    """A new connection's first request head must be complete within this, or it is closed."""
    idle_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 30.0
    """A kept-alive connection waits this long for its next request, then it is closed."""
    send_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 30.0
    """A response or stream its client stops reading for this long is closed."""
    tls_cert: str = ""
    """The property's certificate chain (PEM) for the port: with ``tls_key``, the display, the
    ops endpoints and the console are served over HTTPS only. A path relative to the file's
    folder; the loaded configuration holds it absolute."""
    tls_key: str = ""
    """The certificate's private key (PEM), readable by the service only."""
    console_rp_id: str = ""
    """The supervisors' console's WebAuthn relying party id: the host name its page is opened
    at (or a domain it is under). Default ``localhost`` on a localhost bind; required to serve
    the console on any other. Never taken from a request (docs/security.md, "The console")."""
    console_origin: str = ""
    """The console page's origin, as the browser names it (``https://pit.example:8080``):
    the only origin an enrollment is drafted for. Default ``https://<console_rp_id>:<port>``
    with TLS, ``http://localhost:<port>`` on a localhost bind without."""


class RawConfig(Raw, frozen=True):
    """The core's part of the file as written; the drivers' sections are typed by the drivers."""

    controller: RawController
    pools: list[RawPool] = []
    tables: list[RawTable] = []
    web: WebSettings = msgspec.field(default_factory=WebSettings)


class Jurisdiction(StrEnum):
    """The rules profile: which regulation's options apply (docs/rules.md)."""

    PA = "pa"
    NJ = "nj"


@dataclass(frozen=True, slots=True)
class DriverEntry:
    """One configured driver entry (``[broker]``, ``serial[1]``) and its checked settings."""

    spec: DriverSpec[Any]
    key: str
    settings: Any
    """The driver's own settings Struct (:attr:`controller.plugins.DriverSpec.settings`)."""

    @property
    def instance(self) -> str | None:
        """The entry's name, for the drivers whose entries are named (``serial:<name>``)."""
        return self.spec.instance(self.settings) if self.spec.instance else None


@dataclass(frozen=True, slots=True)
class PaytableRef:
    """A paytable the configuration uses, with the exact text that is journaled."""

    paytable: Paytable
    text: str
    origin: str
    """``seed`` or the path of the file it came from."""

    @property
    def name(self) -> str:
        """The paytable's name."""
        return self.paytable.name


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """The ``[controller]`` table, validated."""

    site: str
    controller_id: str
    journal: JournalLocation
    """The SQLite journal's file, or the PostgreSQL journal's ``postgresql://`` URL (docs/ha.md)."""
    jurisdiction: Jurisdiction
    ace_five: AceFive
    dynasty_profile: str
    verification_cents: int | None
    tax_threshold_cents: int
    tax_wager_multiple: int
    hit_order: HitOrder
    heartbeat_timeout_s: float
    paytable_dirs: tuple[Path, ...]
    dual_control_cents: int = 1_000_000
    """A verification of a win at or above this needs two operators' signatures."""
    lockout_after: int = 5
    """Failed authentications in a row that lock an operator out."""
    pool_profile: str | None = None
    """The jurisdiction profile of a pool's life (controller/ledger/jurisdictions.py), approved
    with the configuration; None: the common rules alone."""
    key_file: str | None = None
    """The controller's signing key (controller/security/controller_key.py): a path, or one under
    ``${CREDENTIALS_DIRECTORY}`` (expanded when the service starts)."""
    sealing_key_file: str | None = None
    """With ``key_file``: the mystery levels' sealing key the cluster's keepers share
    (controller/security/sealing_key.py), so that a node taking over goes on with the open
    draws' triggers; None: draws are journaled without an envelope."""
    signer_socket: str | None = None
    """Instead of ``key_file``: the Unix socket of the signer process that holds the key
    (controller/runtime/remote_signer.py; docs/operations.md, "The signer")."""
    operator_socket: str | None = None
    """The Unix socket on which the daemon takes operators' signed actions (controller/service/
    operator_socket.py; docs/operations.md, "Signing as the operator"); None: no socket."""
    operator_group: str | None = None
    """The group whose members may connect to ``operator_socket`` (mode 0660); None: the group
    the socket is made with (that of its folder when the folder is set-group-ID)."""
    checkpoint_rows: int = 10_000
    """A signed checkpoint after this many journal rows (controller/runtime/checkpointing.py)..."""
    checkpoint_interval_s: float = 300.0
    """...or this many seconds after the last one, whichever comes first."""
    high_water_file: str | None = None
    """Where the controller keeps its latest signed head, outside the journal
    (controller/journal/high_water.py); None: beside an SQLite journal, or for PostgreSQL
    ``var/<database>.<node>.high-water``, one per node."""
    head_rows: int = 100
    """A signed head of the journal after this many rows (docs/security.md, "History never goes
    back")..."""
    head_interval_s: float = 1.0
    """...or this many seconds after a row, whichever comes first: no acknowledged row is left
    uncovered by a signed head for longer."""
    node: str = "jackpotd"
    """This node's id in the sequencer's fence of a shared journal (docs/ha.md); the host's name
    unless the file says."""
    lease_s: float = 10.0
    """How long the sequencer's lease lasts unrenewed: another node takes over after it."""
    commit_hang_s: float = 30.0
    """A ``COMMIT`` not back by then ends the process (controller/runtime/step_down.py)."""
    gaming_day: GamingDay = GamingDay()  # noqa: RUF009 - frozen, shared safely
    """When a gaming day begins, in the site's time zone (controller/config/gaming_day.py)."""


@dataclass(frozen=True, slots=True)
class PoolConfig:
    """One ``[[pools]]`` entry; ``key`` is where it stands in the file (``pools[0]``)."""

    pool_id: str
    paytable: PaytableRef
    terms: PoolTerms
    key: str
    levels: tuple[tuple[str, PoolTerms], ...] = ()
    """A multi-level pool's levels: each one's ledger id and terms, in the paytable's order
    (controller/ledger/levels.py); none for a one-level pool, whose terms are ``terms``."""


@dataclass(frozen=True, slots=True)
class Transport:
    """A table's transport: a driver, and which of its entries (``serial:rail-1``)."""

    driver: str
    """The transport word of a driver spec (``mqtt``, ``serial``, ``simulator``)."""
    instance: str | None = None
    """The named entry, for drivers whose entries are named (``serial:<name>``)."""

    def __str__(self) -> str:
        return f"{self.driver}:{self.instance}" if self.instance else self.driver


@dataclass(frozen=True, slots=True)
class TableConfig:
    """One ``[[tables]]`` entry and the event that configures it (``event_id``, ``at`` blank)."""

    table_id: str
    transport: Transport
    paytables: tuple[PaytableRef, ...]
    event: TableConfigured
    rules: TableRules
    heartbeat_timeout_s: float
    key: str


@dataclass(frozen=True, slots=True)
class Config:
    """A validated configuration; ``digest`` is the SHA-256 of the file as read."""

    source: str
    digest: str
    controller: ControllerConfig
    pools: tuple[PoolConfig, ...]
    tables: tuple[TableConfig, ...]
    web: WebSettings
    drivers: tuple[DriverEntry, ...] = ()
    """The drivers' entries, in the order of the file (docs/architecture.md, "Drivers")."""
    wide_area: WideAreaSettings | None = None
    """``[wide_area]``: this controller as a property of central, or as central; None: neither
    (docs/wide-area.md). The file's digest covers it; its keys read from files are in the
    events it makes (``WideAreaJoined``, ``SiteLinked``), which the approval signs."""

    def entries(self, section: str) -> tuple[DriverEntry, ...]:
        """The entries of one driver section (``broker``, ``serial``)."""
        return tuple(entry for entry in self.drivers if entry.spec.section == section)

    def settings(self, section: str) -> Any:  # noqa: ANN401 - the driver's own type
        """The settings of a one-entry section (``broker``), or None if it is not configured."""
        found = self.entries(section)
        return found[0].settings if found else None
