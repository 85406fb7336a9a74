"""Drivers as plug-ins: each declares a spec, and the core finds specs by name, never by import.

A driver package declares one :class:`DriverSpec` per section of the configuration file it
reads (``[broker]``, ``[[serial]]``, ``[[alpha_sign]]``, ``[simulator]``): the settings type it
owns, the checks it makes on them, and how it builds its sources and sinks. The configuration
loader hands each section to its spec's settings type (the TOML format is the drivers' own);
the service builds every source and sink through the specs.

The drivers shipped here are listed in :data:`BUILTIN` by where their spec lives, as strings:
the core imports no driver (the import contracts in ``pyproject.toml`` hold it to that).
Installed packages add drivers through the ``jackpotd.drivers`` entry-point group, as
python-can does; a plug-in names a spec object, ``"package.module:SPEC"``. Every entry point
goes through here: ``jackpotd run`` builds its parts through the specs, ``jackpotd agent`` and
``jackpotd sign`` run a driver's :class:`ProgramSpec` (group ``jackpotd.programs``), and the
wide-area link takes the one driver whose spec has an uplink (:func:`uplink_driver`).

A driver's parts (:class:`DriverParts`) are generic: sources, sinks, signs' faces, its
connections, its sources' health, and prometheus collectors of its own metric families, so
that a driver with metrics touches no core file.
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
    from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

    from prometheus_client.registry import Collector

    from controller.ports import Outbox, Sink, SiteChainView, SiteLinks, Source
    from controller.rules.spots import Spot

S = TypeVar("S")
T = TypeVar("T")

ENTRY_POINT_GROUP: Final = "jackpotd.drivers"

BUILTIN: Final[Mapping[str, str]] = {
    "mqtt": "drivers.mqtt.spec:SPEC",
    "serial": "drivers.serial.spec:SPEC",
    "alpha-sign": "drivers.signs.spec:SPEC",
    "simulator": "drivers.simulator_source:SPEC",
}
"""Driver name -> ``module:attribute`` of its :class:`DriverSpec`, for the drivers shipped here."""

PROGRAM_GROUP: Final = "jackpotd.programs"

BUILTIN_PROGRAMS: Final[Mapping[str, str]] = {
    "agent": "drivers.agent.program:PROGRAM",
    "sign": "drivers.signs.program:PROGRAM",
}
"""Program name -> ``module:attribute`` of its :class:`ProgramSpec` (``jackpotd agent``...)."""


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


class Connection(Protocol):
    """A connection a driver keeps up (a broker session, a serial port): what the display shows.

    :class:`controller.backoff.Reconnecting` keeps these two up to date.
    """

    name: str
    connected: bool
    reconnects: int


@dataclass(frozen=True, slots=True)
class LinkView:
    """One of a driver's connections on the display's sources panel (docs/operations.md).

    The driver names it in its own words: ``noun`` (``broker link``, ``serial line``), its
    ``role`` if it has one (``table events in``), the word for it while up (``connected``,
    ``open``); ``feeds_meters``: while it is down the meters are not live (a broker link the
    table events come in by), which the display says over the meters.
    """

    link: Connection
    noun: str
    role: str | None = None
    up: str = "connected"
    feeds_meters: bool = False

    @property
    def kind(self) -> str:
        """What the panel calls it: its noun and its role."""
        return self.noun if self.role is None else f"{self.noun} · {self.role}"


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
    """What one configured entry became: its sources, sinks, signs and what it reports.

    What it reports: its connections, its sources' health and its own metric families.
    Nothing here names a driver: a driver with metrics of its own defines their families in
    its package and hands a collector here; the controller's ``/metrics`` merges the families
    of every entry by name (two serial lines' ``jackpotd_serial_connected`` are one family).
    """

    sources: list[Source] = field(default_factory=list)
    sinks: list[Sink] = field(default_factory=list)
    faces: list[SignFace] = field(default_factory=list)
    links: list[LinkView] = field(default_factory=list)
    """Its connections, on the display's sources panel."""
    health: list[HealthReporting] = field(default_factory=list)
    """Sources whose trouble ``/healthz`` and the metrics report (docs/faults.md)."""
    collectors: list[Collector] = field(default_factory=list)
    """Its own metric families (docs/metrics.md), collected at each scrape of ``/metrics``."""
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
    uplink: Callable[[S, str, SiteChainView], DriverParts] | None = None
    """A property's link to central over this driver's settings (``[wide_area.central]``),
    under central's topic site (docs/wide-area.md): its source and its metric families (the
    ``jackpotd_wide_area_*`` of the link); None if the driver has none. One driver at most
    has one (:func:`uplink_driver`)."""
    published_head: Callable[[S, str], Awaitable[bytes | None]] | None = None
    """Reads back, with a bounded wait, the payload of the controller's (the id) last signed head
    this driver published (its high-water mark, docs/security.md "History never goes back");
    None if the driver publishes none or cannot reach where it did."""
    central_mark: (
        Callable[[S, str, str, bytes, Callable[[bytes], bool]], Awaitable[bytes | None]] | None
    ) = None
    """At a property's start, asks central over this driver's settings (``[wide_area.central]``,
    central's topic site, this property's site) for the mark it keeps of the property: publishes
    the signed hello (bytes) and returns the first answer the callable accepts, within the link's
    connect timeout; None if none (docs/security.md, "History never goes back")."""


@dataclass(frozen=True, slots=True)
class ProgramSpec:
    """A driver's program of its own, run by a ``jackpotd`` command other than ``run``.

    ``jackpotd agent`` runs the table agent's (docs/ha.md, "Table agents"), ``jackpotd sign``
    the sign station's (docs/signs.md): each found here by name, as a driver's spec is, so the
    command imports no driver. ``link`` names the driver whose section the program's own file
    reaches the controller by (``mqtt``, whose section is ``[broker]``).
    """

    name: str
    run: Callable[..., Awaitable[None]]
    """The program: its arguments are the command's (each documents its own)."""
    link: str | None = None


def available(group: str = ENTRY_POINT_GROUP) -> dict[str, str]:
    """Every name of ``group`` and where its spec lives: built-ins, then installed plug-ins."""
    found = dict(BUILTIN if group == ENTRY_POINT_GROUP else BUILTIN_PROGRAMS)
    for entry in entry_points(group=group):
        found.setdefault(entry.name, entry.value)
    return found


def _resolve(name: str, group: str, kind: type[T]) -> T:
    known = available(group)
    try:
        target = known[name]
    except KeyError as error:
        names = ", ".join(sorted(known)) or "none"
        what = "driver" if group == ENTRY_POINT_GROUP else "program"
        raise UnknownDriverError(f"no {what} named {name!r}; known: {names}") from error
    module, _, attribute = target.partition(":")
    spec = getattr(import_module(module), attribute)
    if not isinstance(spec, kind):
        raise UnknownDriverError(f"{name!r} ({target}) is not a {kind.__name__}")
    return spec


def load(name: str) -> DriverSpec[Any]:
    """The spec of a driver, by name."""
    return _resolve(name, ENTRY_POINT_GROUP, DriverSpec)


def program(name: str) -> ProgramSpec:
    """A driver's program, by name (``agent``, ``sign``)."""
    return _resolve(name, PROGRAM_GROUP, ProgramSpec)


def link_of(name: str) -> DriverSpec[Any]:
    """The driver a program's own file reaches the controller by (its ``link``: ``[broker]``)."""
    link = program(name).link
    if link is None:
        raise ConfigurationError(f"the {name} program names no driver to reach the controller by")
    return load(link)


def uplink_driver() -> DriverSpec[Any]:
    """The one driver that carries a property's link to central (its spec has an uplink).

    ``[wide_area.central]`` takes that driver's settings (docs/wide-area.md).
    """
    found = [spec for spec in by_section().values() if spec.uplink is not None]
    if len(found) != 1:
        names = ", ".join(sorted(spec.name for spec in found)) or "none"
        raise ConfigurationError(f"one driver must link to central; drivers that do: {names}")
    return found[0]


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
