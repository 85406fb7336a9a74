"""Drivers as plug-ins: each declares a spec, and the core finds specs by name, never by import.

A driver package declares one :class:`DriverSpec` per section of the configuration file it
reads (``[broker]``, ``[[serial]]``, ``[[alpha_sign]]``, ``[simulator]``): the settings type it
owns, the checks it makes on them, and how it builds its sources and sinks. The configuration
loader hands each section to its spec's settings type (the TOML format is the drivers' own);
the service builds every source and sink through the specs.

The drivers shipped here are listed in :data:`BUILTIN` by where their spec lives, as strings:
the core imports no driver (the import contracts in ``pyproject.toml`` hold it to that).
Installed packages add drivers through the ``jackpotd.drivers`` entry-point group, as
python-can does; a plug-in names a spec object, ``"package.module:SPEC"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar, runtime_checkable

from controller.errors import ConfigurationError

if TYPE_CHECKING:
    import asyncio
    from collections import Counter
    from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

    from controller.outputs import FollowerOrder
    from controller.ports import Outbox, Sink, SiteChainView, SiteLinks, Source
    from controller.rules.spots import Spot
    from controller.widearea.property_link import SitePosition

S = TypeVar("S")

ENTRY_POINT_GROUP: Final = "jackpotd.drivers"

BUILTIN: Final[Mapping[str, str]] = {
    "mqtt": "drivers.mqtt.spec:SPEC",
    "serial": "drivers.serial.spec:SPEC",
    "alpha-sign": "drivers.signs.spec:SPEC",
    "simulator": "drivers.simulator_source:SPEC",
}
"""Driver name -> ``module:attribute`` of its :class:`DriverSpec`, for the drivers shipped here."""


class UnknownDriverError(ConfigurationError, LookupError):
    """No driver of that name is built in or installed."""


class SettingsChecks(Protocol):
    """What the configuration loader offers a driver checking its section of the file.

    Every error names the file, the key (as written: ``serial[1].url``) and the reason.
    """

    @property
    def site(self) -> str:
        """``[controller] site``: the topic prefix and the site's name."""
        ...

    @property
    def controller_id(self) -> str:
        """``[controller] id``."""
        ...

    def fail(self, key: str, reason: str) -> ConfigurationError:
        """The error to raise for ``key``."""
        ...

    def existing_file(self, key: str, text: str | None, *, secret: bool = False) -> str | None:
        """The file's path relative to the configuration's folder, checked to exist."""
        ...

    def port(self, key: str, port: int) -> int:
        """A TCP port, 1 to 65535."""
        ...

    def positive(self, key: str, value: float) -> float:
        """A number above zero."""
        ...

    def identifier(self, key: str, value: str, seen: dict[str, str] | None = None) -> str:
        """An id usable in topics and journal ids, unique among ``seen``."""
        ...


@dataclass(frozen=True, slots=True)
class TableOffer:
    """What a source serving a table may know of it: seats, spots offered and their limits."""

    table_id: str
    seats: int
    spots: frozenset[Spot]
    heartbeat_timeout_s: float
    progressive_wager_cents: int | None = None
    odds_limits_cents: tuple[int, int] | None = None
    """The narrowest (minimum, maximum) over the odds spots' wager limits; None: no limits."""


@dataclass(frozen=True, slots=True)
class DriverContext:
    """What the service gives a spec to build one configured entry with."""

    key: str
    """The entry's key in the file (``broker``, ``serial[0]``), for messages."""
    tables: tuple[TableOffer, ...]
    """The tables whose ``transport`` names this entry (sources only)."""
    outbox: Callable[[str], Outbox]
    """Opens the journal-side outbox of the named sink (docs/mqtt.md, "The outbox")."""
    latency: Callable[[str], Callable[[float], None] | None] = lambda _sink: None
    """The observer of the named sink's event-to-display latency, if metrics are kept."""
    epoch: Callable[[], int] = lambda: 0
    """The sequencer epoch the journal writes under (``JournalPort.epoch``), for what a driver
    acknowledges with it (table agents' acknowledgements, docs/ha.md)."""
    sites: SiteLinks | None = None
    """At central, its linked properties (docs/wide-area.md); None elsewhere."""


@runtime_checkable
class SignFace(Protocol):
    """An emulated sign the display shows (the demo's LED sign on a pty)."""

    name: str
    text: str
    changed_at: str

    async def run(self) -> None:
        """Emulate the sign until cancelled."""
        ...


@runtime_checkable
class FiniteSource(Protocol):
    """A source that can finish (the simulator after its rounds); ``finished`` is then set."""

    finished: asyncio.Event
    rounds_played: Mapping[str, int]


class SerialStats(Protocol):
    """What a serial source exposes."""

    name: str
    errors: Counter[str]
    refusals: tuple[str, ...]
    """Every reason in ``errors`` could have, each shown at 0 until counted."""
    connected: bool
    reconnects: int


class MqttStats(Protocol):
    """What an MQTT source or sink exposes."""

    name: str
    connected: bool
    reconnects: int


class AgentLinkStats(Protocol):
    """What a source that table agents send through exposes (docs/ha.md, "Table agents")."""

    name: str

    @property
    def agent_gaps(self) -> int:
        """Agent events left for the resend because an earlier one had not arrived."""
        ...

    @property
    def agent_acks(self) -> int:
        """Cumulative acknowledgements published to agents."""
        ...

    @property
    def agent_refused(self) -> int:
        """Agent events refused for their table agent's signature (docs/ha.md)."""
        ...


class SiteLinkStats(Protocol):
    """What central's source exposes of its linked properties' traffic (docs/wide-area.md).

    Per linked property (its ``site``) only: a property that is not linked names no series.
    """

    drop_reasons: tuple[str, ...]
    """Every reason ``site_drops`` could have, each shown at 0 until counted."""

    @property
    def site_drops(self) -> Mapping[tuple[str, str], int]:
        """Messages and totals dropped before the sequencer, by (site, reason)."""
        ...

    @property
    def site_acks(self) -> Mapping[str, int]:
        """Acknowledgements published, by site."""
        ...

    def heard_at(self, site: str) -> float:
        """When the property was last heard (Unix time); the source's start if never."""
        ...


@runtime_checkable
class UplinkStats(Protocol):
    """What a property's link to central exposes (docs/wide-area.md, "Operations")."""

    connected: bool
    """Whether it is connected to one of central's brokers now."""
    published: int
    """Messages published to central."""
    refusals: tuple[str, ...]
    """Every reason ``refused`` could have, each shown at 0 until counted."""

    @property
    def refused(self) -> Mapping[str, int]:
        """Central's acknowledgements and awards not acted on, by why."""
        ...

    @property
    def position(self) -> SitePosition:
        """Where the chain stands with central: ``acked``, the last ``site_seq`` it covered."""
        ...

    @property
    def heard_at(self) -> float:
        """When central was last heard (Unix time); the link's start if never."""
        ...


class Health(Protocol):
    """Whether a source keeps failing, and what it parked (drivers.poison.SourceHealth)."""

    @property
    def trouble(self) -> str | None:
        """Why the source keeps failing; None while it works."""
        ...

    @property
    def dead_letters(self) -> int:
        """Messages parked since start."""
        ...


class HealthReporting(Protocol):
    """A source that reports its health (the MQTT source, a serial link)."""

    name: str

    @property
    def health(self) -> Health:
        """Its health."""
        ...


@dataclass(slots=True)
class DriverParts:
    """What one configured entry became: sources to feed, sinks to update, signs to show."""

    sources: list[Source] = field(default_factory=list)
    sinks: list[Sink] = field(default_factory=list)
    faces: list[SignFace] = field(default_factory=list)
    broker_links: list[MqttStats] = field(default_factory=list)
    agent_links: list[AgentLinkStats] = field(default_factory=list)
    """Sources table agents send through, counted in the ``jackpotd_agent_*`` metrics."""
    """Broker connections, counted in the ``jackpotd_mqtt_*`` metrics (docs/metrics.md)."""
    site_links: list[SiteLinkStats] = field(default_factory=list)
    """At central, what answers the linked properties: the ``jackpotd_site_*`` metrics."""
    serial_lines: list[SerialStats] = field(default_factory=list)
    """Serial lines to table devices, counted in the ``jackpotd_serial_*`` metrics."""
    health: list[HealthReporting] = field(default_factory=list)
    """Sources whose trouble ``/healthz`` and the metrics report (docs/faults.md)."""
    followers: list[FollowerOrder] = field(default_factory=list)
    """Signs' orders: the updates each dropped as older, by ``(epoch, seq)``, than one it
    showed, in ``jackpotd_follower_stale_updates_dropped_total`` (docs/metrics.md)."""
    close: list[Callable[[], None]] = field(default_factory=list)
    """Called when the service stops (an emulator's pty, say)."""


@dataclass(frozen=True, slots=True)
class DriverSpec(Generic[S]):
    """A driver: its name, its section of the file, its settings type, checks and factory."""

    name: str
    section: str
    """The key in the configuration file (``broker``; ``serial`` is written ``[[serial]]``)."""
    settings: type[S]
    build: Callable[[S, DriverContext], DriverParts]
    many: bool = False
    """The section is an array of tables (``[[serial]]``), one entry per device."""
    check: Callable[[S, SettingsChecks, str, Mapping[str, Any]], S] | None = None
    """Checks one entry (``key`` names it; the mapping is the entry as written) and returns it
    completed (paths resolved, defaults from ``[controller]``); raises ``checks.fail(...)``."""
    transport: str | None = None
    """The word a table's ``transport`` uses for this driver (``mqtt``; ``serial:<name>``)."""
    implicit: bool = False
    """A table may name the transport with no section written (defaults are used)."""
    instance: Callable[[S], str] | None = None
    """An entry's name, unique in its section (``serial:<name>`` names it)."""
    bound_table: Callable[[S], str | None] | None = None
    """The one table an entry serves, which must name this entry as its transport."""
    references: Callable[[S], Sequence[tuple[str, str, str]]] | None = None
    """The (key, ``pool`` or ``table``, id) an entry names, each checked to be configured."""
    devices: Callable[[S], Collection[str]] | None = None
    """The device lines an entry opens; no two entries may share one."""
    describe: Callable[[S], str] | None = None
    """One line on an entry, for ``jackpotd config check``."""
    refusals: tuple[str, ...] = ()
    """Every reason its sources refuse input with: ``jackpotd_rejected_inputs_total`` shows
    each at 0 from the start (docs/metrics.md), so a first refusal is an increase."""
    uplink: Callable[[S, str, SiteChainView], Source] | None = None
    """A property's link to central over this driver's settings (``[wide_area.central]``),
    under central's topic site (docs/wide-area.md); None if the driver has none."""
    published_head: Callable[[S, str], Awaitable[bytes | None]] | None = None
    """Reads back, with a bounded wait, the payload of the controller's (the id) last signed head
    this driver published (its high-water mark, docs/security.md "History never goes back");
    None if the driver publishes none or cannot reach where it did."""


def available() -> dict[str, str]:
    """Every driver name and where its spec lives: built-ins, then installed plug-ins."""
    drivers = dict(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        drivers.setdefault(entry.name, entry.value)
    return drivers


def load(name: str) -> DriverSpec[Any]:
    """The spec of a driver, by name."""
    drivers = available()
    try:
        target = drivers[name]
    except KeyError as error:
        known = ", ".join(sorted(drivers)) or "none"
        raise UnknownDriverError(f"no driver named {name!r}; known: {known}") from error
    module, _, attribute = target.partition(":")
    spec = getattr(import_module(module), attribute)
    if not isinstance(spec, DriverSpec):
        raise UnknownDriverError(f"driver {name!r} ({target}) is not a DriverSpec")
    return spec


@cache
def by_section() -> Mapping[str, DriverSpec[Any]]:
    """Every driver's spec by the configuration section it reads."""
    specs: dict[str, DriverSpec[Any]] = {}
    for name in available():
        spec = load(name)
        if spec.section in specs:
            other = specs[spec.section].name
            raise ConfigurationError(f"drivers {other!r} and {name!r} both read [{spec.section}]")
        specs[spec.section] = spec
    return specs
