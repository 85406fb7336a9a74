"""The controller's configuration: one TOML file, validated at start-up into typed objects.

The file is decoded into frozen msgspec Structs that refuse unknown keys, then checked and
turned into the objects the daemon runs on (:class:`Config`). Anything wrong stops the load
with a :class:`ConfigError` whose message is one line, ``file: key: reason``, the key written
as in the file (``tables[2].pool``, ``broker.tls.ca_file``). Relative paths in the file are
relative to its folder. ``deploy/jackpotd.toml`` documents every key;
:mod:`controller.config_events` turns a configuration into the journal events that bring the
ledger in line with it.
"""

from __future__ import annotations

import hashlib
import re
import stat
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple, TypeVar

import msgspec

from controller.config_schema import (
    Config,
    ConfigError,
    ControllerConfig,
    Jurisdiction,
    PaytableRef,
    PoolConfig,
    RawBrokerKeys,
    RawConfig,
    RawController,
    RawKeys,
    RawPool,
    RawTable,
    SimulatorSettings,
    TableConfig,
    Transport,
    TransportKind,
    WebSettings,
)
from controller.events import TableConfigured
from controller.money import MoneyError, format_cents, format_percent, parse_dollars, parse_percent
from controller.paytable import DYNASTY_PROFILES, Paytable, Wager
from controller.paytable_files import PaytableError, parse_paytable
from controller.pool import PoolTerms
from controller.ranking import AceFive
from controller.settlement import HitOrder
from controller.table_rules import (
    MAX_PAYOUT_FLOOR_CENTS,
    ODDS_WAGERS,
    TableRulesError,
    most_one_player_wins,
    table_rules,
)

if TYPE_CHECKING:
    from collections.abc import Collection
    from fractions import Fraction
    from importlib.resources.abc import Traversable

    from controller.settings import BrokerSettings, SerialPortSettings
    from controller.settlement import TableRules
    from drivers.signs.serial_sign import AlphaSignSettings

__all__ = [
    "Config",
    "ConfigError",
    "ControllerConfig",
    "Jurisdiction",
    "PaytableRef",
    "PoolConfig",
    "SimulatorSettings",
    "TableConfig",
    "Transport",
    "TransportKind",
    "WebSettings",
    "load_config",
    "parse_config",
]

_E = TypeVar("_E", bound=Enum)
_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_PAYTABLE_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FIELD: Final = re.compile(r"Object (?:contains unknown|missing required) field `([^`]+)`")
_DYNASTY: Final = {"pa": ("pa", "pa-caption"), "nj": ("nj",)}
"""The Dynasty Bonus readings each jurisdiction allows, its default first (docs/rules.md 5.4)."""


def load_config(path: Path) -> Config:
    """Read and validate a configuration file."""
    try:
        text = path.read_bytes()
    except OSError as error:
        raise ConfigError(str(path), "(file)", f"cannot read: {error.strerror}") from None
    return parse_config(text, str(path), path.absolute().parent)


def parse_config(text: str | bytes, source: str, base_dir: Path) -> Config:
    """Validate one configuration document; ``source`` names it in errors."""
    data = text.encode() if isinstance(text, str) else text
    try:
        raw = msgspec.toml.decode(data, type=RawConfig)
        keys = msgspec.toml.decode(data, type=RawKeys)
    except msgspec.ValidationError as error:
        key, reason = _key_of(error)
        raise ConfigError(source, key, reason) from None
    except msgspec.DecodeError as error:
        raise ConfigError(source, "(file)", f"not valid TOML: {error}") from None
    return _Loader(source, base_dir).load(raw, keys, hashlib.sha256(data).hexdigest())


def _key_of(error: msgspec.ValidationError) -> tuple[str, str]:
    """Split msgspec's "reason - at `$.key`" into (key, reason), naming a missing/unknown field."""
    reason, _, where = str(error).rpartition(" - at `")
    if not reason:
        reason, where = str(error), ""
    key = where.rstrip("`").removeprefix("$").removeprefix(".")
    if found := _FIELD.search(reason):
        key = f"{key}.{found.group(1)}" if key else found.group(1)
    return key or "(file)", reason


class _Context(NamedTuple):
    """What a table's checks need from the sections before it."""

    controller: ControllerConfig
    broker: BrokerSettings | None
    ports: dict[str, SerialPortSettings]
    pools: dict[str, PoolConfig]


class _Loader:
    """Checks one file section by section, remembering the paytables it has read."""

    def __init__(self, source: str, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.paytable_dirs: tuple[Path, ...] = ()
        self.refs: dict[str, PaytableRef] = {}
        self.first_use: dict[str, tuple[str, str]] = {}

    def fail(self, key: str, reason: str) -> ConfigError:
        return ConfigError(self.source, key, reason)

    def load(self, raw: RawConfig, keys: RawKeys, digest: str) -> Config:
        controller = self.controller(raw.controller)
        broker = self.broker(raw.broker, keys.broker, controller)
        ports = self.serial(raw.serial)
        seen: dict[str, str] = {}
        pools = {
            (pool := self.pool(f"pools[{index}]", entry, seen)).pool_id: pool
            for index, entry in enumerate(raw.pools)
        }
        if not raw.tables:
            raise self.fail("tables", "configure at least one [[tables]] entry")
        seen = {}
        tables = tuple(
            self.table(f"tables[{index}]", entry, seen, _Context(controller, broker, ports, pools))
            for index, entry in enumerate(raw.tables)
        )
        for index, port in enumerate(ports.values()):
            if not any(table.transport.serial == port for table in tables):
                known = ", ".join(table.table_id for table in tables)
                reason = f"table {port.table_id!r} does not name transport 'serial:{port.name}'"
                if port.table_id not in seen:
                    reason = f"no table {port.table_id!r}; configured: {known}"
                raise self.fail(f"serial[{index}].table_id", reason)
        simulated = [t for t in tables if t.transport.kind is TransportKind.SIMULATOR]
        simulator = self.simulator(raw.simulator, simulated)
        if not raw.web.host.strip():
            raise self.fail("web.host", "an address to listen on is required")
        self.port("web.port", raw.web.port)
        signs = self.signs(raw.alpha_signs, pools, tables, ports)
        return Config(
            self.source, digest, controller, broker, tuple(ports.values()),
            tuple(pools.values()), tables, raw.web, simulator, signs,
        )  # fmt: skip

    def signs(
        self,
        raw: list[AlphaSignSettings],
        pools: dict[str, PoolConfig],
        tables: tuple[TableConfig, ...],
        ports: dict[str, SerialPortSettings],
    ) -> tuple[AlphaSignSettings, ...]:
        """LED signs: unique names, a configured pool, configured tables, their own line."""
        names: set[str] = set()
        table_ids = {table.table_id for table in tables}
        device_urls = {port.url for port in ports.values()}
        for index, sign in enumerate(raw):
            key = f"alpha_sign[{index}]"
            if sign.name in names:
                raise self.fail(f"{key}.name", f"sign {sign.name!r} is configured twice")
            names.add(sign.name)
            if sign.pool_id not in pools:
                raise self.fail(
                    f"{key}.pool_id", f"no pool {sign.pool_id!r}; configured: {_names(pools)}"
                )
            for position, table_id in enumerate(sign.tables):
                if table_id not in table_ids:
                    raise self.fail(f"{key}.tables[{position}]", f"no table {table_id!r}")
            if sign.url in device_urls:
                raise self.fail(f"{key}.url", "a sign needs its own line, not a [[serial]] port's")
        return tuple(raw)

    # -- values ----------------------------------------------------------------------------------

    def path(self, text: str) -> Path:
        return self.base_dir / Path(text).expanduser()

    def choice(self, key: str, value: str, kind: type[_E]) -> _E:
        try:
            return kind(value)
        except ValueError:
            choices = ", ".join(repr(option.value) for option in kind)
            raise self.fail(key, f"{value!r} is not one of {choices}") from None

    def dollars(self, key: str, text: str, *, minimum: int = 0) -> int:
        try:
            cents = parse_dollars(text)
        except MoneyError as error:
            raise self.fail(key, str(error)) from None
        if cents < minimum:
            raise self.fail(key, f"must be at least {format_cents(minimum)}")
        return cents

    def percent(self, key: str, text: str) -> Fraction:
        try:
            rate = parse_percent(text)
        except MoneyError as error:
            raise self.fail(key, str(error)) from None
        if rate > 1:
            raise self.fail(key, f"{text} is above 100% of the wager")
        return rate

    def identifier(self, key: str, value: str, seen: dict[str, str] | None = None) -> str:
        if not _ID.match(value):
            raise self.fail(
                key, f"{value!r}: use letters, digits, '-' and '_' (ids appear in MQTT topics)"
            )
        if seen is not None:
            if value in seen:
                raise self.fail(key, f"{value!r} is also {seen[value]}")
            seen[value] = key
        return value

    def positive(self, key: str, value: float) -> float:
        if not value > 0:
            raise self.fail(key, f"must be above 0, not {value}")
        return value

    def port(self, key: str, port: int) -> int:
        if not 1 <= port <= 65535:
            raise self.fail(key, f"a TCP port is 1 to 65535, not {port}")
        return port

    def existing_file(self, key: str, text: str | None, *, secret: bool = False) -> str | None:
        """The file's path, if it exists; a ``secret`` one must be closed to other users."""
        if text is None:
            return None
        path = self.path(text)
        try:
            mode = path.stat().st_mode
        except OSError as error:
            raise self.fail(key, f"cannot read {path}: {error.strerror}") from None
        if not stat.S_ISREG(mode):
            raise self.fail(key, f"{path} is not a file")
        if secret and mode & 0o007:
            raise self.fail(
                key, f"{path} is open to every user (mode {mode & 0o777:o}); chmod o-rwx it"
            )
        return str(path)

    # -- sections --------------------------------------------------------------------------------

    def controller(self, raw: RawController) -> ControllerConfig:
        jurisdiction = self.choice("controller.jurisdiction", raw.jurisdiction, Jurisdiction)
        ace_five = self.choice("controller.ace_five", raw.ace_five, AceFive)
        if ace_five is AceFive.LOWEST and jurisdiction is not Jurisdiction.NJ:
            raise self.fail(
                "controller.ace_five",
                "'lowest' is the NJ 13:69F-11(d) option; in PA A-2-3-4-5 is second-highest",
            )
        allowed = _DYNASTY[jurisdiction]
        dynasty = raw.dynasty_profile or allowed[0]
        if dynasty not in allowed:
            raise self.fail(
                "controller.dynasty_profile",
                f"{dynasty!r} is not a {jurisdiction} profile; one of {', '.join(allowed)}",
            )
        if raw.tax_wager_multiple < 0:
            raise self.fail("controller.tax_wager_multiple", "cannot be negative")
        dirs = []
        for index, folder in enumerate(raw.paytable_dirs):
            if not (path := self.path(folder)).is_dir():
                raise self.fail(f"controller.paytable_dirs[{index}]", f"no such folder: {path}")
            dirs.append(path)
        self.paytable_dirs = tuple(dirs)
        verification = raw.verification_amount
        return ControllerConfig(
            site=self.identifier("controller.site", raw.site),
            controller_id=self.identifier("controller.id", raw.controller_id),
            journal=self.path(raw.journal),
            jurisdiction=jurisdiction,
            ace_five=ace_five,
            dynasty_profile=dynasty,
            verification_cents=None
            if verification is None
            else self.dollars("controller.verification_amount", verification, minimum=1),
            tax_threshold_cents=self.dollars("controller.tax_threshold", raw.tax_threshold),
            tax_wager_multiple=raw.tax_wager_multiple,
            hit_order=self.choice("controller.hit_order", raw.hit_order, HitOrder),
            heartbeat_timeout_s=self.positive(
                "controller.heartbeat_timeout_s", raw.heartbeat_timeout_s
            ),
            paytable_dirs=self.paytable_dirs,
        )

    def broker(
        self, raw: BrokerSettings | None, keys: RawBrokerKeys | None, controller: ControllerConfig
    ) -> BrokerSettings | None:
        if raw is None:
            return None
        if keys is not None and keys.site is not None:
            raise self.fail("broker.site", "the topic prefix is set once, as controller.site")
        if keys is not None and keys.controller_id is not None:
            raise self.fail(
                "broker.controller_id", "the controller's id is set once, as controller.id"
            )
        if not raw.host.strip():
            raise self.fail("broker.host", "a host name or address is required")
        self.port("broker.port", raw.port)
        self.positive("broker.keepalive_s", raw.keepalive_s)
        self.positive("broker.backoff_initial_s", raw.backoff_initial_s)
        if raw.backoff_cap_s < raw.backoff_initial_s:
            raise self.fail("broker.backoff_cap_s", "is below broker.backoff_initial_s")
        if raw.password_file is not None and raw.username is None:
            raise self.fail("broker.password_file", "a password needs broker.username")
        password = self.existing_file("broker.password_file", raw.password_file, secret=True)
        tls = raw.tls
        if tls is not None:
            if (tls.cert_file is None) != (tls.key_file is None):
                raise self.fail("broker.tls", "cert_file and key_file go together")
            tls = msgspec.structs.replace(
                tls,
                ca_file=self.existing_file("broker.tls.ca_file", tls.ca_file),
                cert_file=self.existing_file("broker.tls.cert_file", tls.cert_file),
                key_file=self.existing_file("broker.tls.key_file", tls.key_file, secret=True),
            )
        client_id = raw.client_id
        if keys is None or keys.client_id is None:
            client_id = f"jackpotd-{controller.controller_id}"
        return msgspec.structs.replace(
            raw,
            site=controller.site,
            controller_id=controller.controller_id,
            client_id=client_id,
            password_file=password,
            tls=tls,
        )

    def serial(self, raw: list[SerialPortSettings]) -> dict[str, SerialPortSettings]:
        ports: dict[str, SerialPortSettings] = {}
        seen: dict[str, str] = {}
        for index, port in enumerate(raw):
            key = f"serial[{index}]"
            self.identifier(f"{key}.name", port.name, seen)
            checks = (
                ("url", bool(port.url.strip()), "a device path or pyserial URL"),
                ("baudrate", port.baudrate > 0, "above 0"),
                ("bytesize", port.bytesize in (5, 6, 7, 8), "5, 6, 7 or 8"),
                ("parity", port.parity in ("N", "E", "O", "M", "S"), "N, E, O, M or S"),
                ("stopbits", port.stopbits in (1, 1.5, 2), "1, 1.5 or 2"),
                ("backoff_initial_s", port.backoff_initial_s > 0, "above 0"),
                (
                    "backoff_cap_s",
                    port.backoff_cap_s >= port.backoff_initial_s,
                    "at least backoff_initial_s",
                ),
            )
            for name, valid, wanted in checks:
                if not valid:
                    raise self.fail(
                        f"{key}.{name}", f"must be {wanted}, not {getattr(port, name)!r}"
                    )
            ports[port.name] = port
        return ports

    def pool(self, key: str, raw: RawPool, seen: dict[str, str]) -> PoolConfig:
        self.identifier(f"{key}.id", raw.pool_id, seen)
        found = self.paytable(f"{key}.paytable", raw.paytable, frozenset({Wager.PROGRESSIVE}))
        terms = found.paytable.progressive
        if terms is None:  # pragma: no cover - the loader requires terms of a progressive
            raise self.fail(f"{key}.paytable", f"{found.name} has no [progressive] terms")
        seed, limit = terms.meter_seed_cents, None
        if raw.seed is not None:
            seed = self.dollars(f"{key}.seed", raw.seed, minimum=1)
        progression, reserve = terms.rate_of_progression, terms.reserve_rate
        if raw.rate_of_progression is not None:
            progression = self.percent(f"{key}.rate_of_progression", raw.rate_of_progression)
        if raw.reserve_rate is not None:
            reserve = self.percent(f"{key}.reserve_rate", raw.reserve_rate)
        if progression + reserve > 1:
            raise self.fail(
                f"{key}.reserve_rate",
                f"rate of progression {format_percent(progression)} plus reserve rate "
                f"{format_percent(reserve)} exceeds 100% of the wager",
            )
        if raw.limit is not None:
            limit = self.dollars(f"{key}.limit", raw.limit)
            if limit < seed:
                raise self.fail(
                    f"{key}.limit",
                    f"{format_cents(limit)} is below the seed of {format_cents(seed)}",
                )
        return PoolConfig(
            raw.pool_id, found, PoolTerms(seed, progression, reserve, limit, found.name), key
        )

    def table(
        self, key: str, raw: RawTable, seen: dict[str, str], context: _Context
    ) -> TableConfig:
        controller, broker, ports, pools = context
        table_id = self.identifier(f"{key}.id", raw.table_id, seen)
        transport = self.transport(f"{key}.transport", raw.transport, broker, ports)
        if transport.serial is not None and transport.serial.table_id != table_id:
            raise self.fail(
                f"{key}.transport", f"serial port {transport.serial.name!r} is for table "
                f"{transport.serial.table_id!r} (serial.table_id)",
            )  # fmt: skip
        if not 1 <= raw.seats <= 9:
            raise self.fail(f"{key}.seats", f"a table has 1 to 9 seats, not {raw.seats}")
        slots = (
            ("bonus", raw.bonus, ODDS_WAGERS),
            ("ace_high", raw.ace_high, frozenset({Wager.ACE_HIGH})),
            ("progressive", raw.progressive, frozenset({Wager.PROGRESSIVE})),
        )
        chosen = {
            slot: self.paytable(f"{key}.{slot}", ref, wagers)
            for slot, ref, wagers in slots
            if ref is not None
        }
        if not chosen:
            raise self.fail(key, "offers no side bet; set bonus, ace_high or progressive")
        bonus, ace_high, progressive = (
            chosen.get(slot) for slot in ("bonus", "ace_high", "progressive")
        )
        if bonus is not None and bonus.paytable.wager is Wager.DYNASTY_BONUS:
            self.dynasty(f"{key}.bonus", bonus.paytable, controller.dynasty_profile)
        self.table_pool(f"{key}.pool", raw.pool, progressive, pools)
        event = TableConfigured(
            event_id="",
            at="",
            table_id=table_id,
            paytables={ref.name: ref.text for ref in chosen.values()},
            seats=raw.seats,
            minimum_wager_cents=self.dollars(f"{key}.minimum_wager", raw.minimum_wager, minimum=1),
            bonus=bonus.name if bonus else None,
            ace_high=ace_high.name if ace_high else None,
            progressive=progressive.name if progressive else None,
            pool_id=raw.pool,
            envy_minimum_cents=self.dollars(f"{key}.envy_minimum", raw.envy_minimum),
            envy_includes_dealer=raw.envy_includes_dealer,
            verification_cents=controller.verification_cents,
            tax_threshold_cents=controller.tax_threshold_cents,
            tax_wager_multiple=controller.tax_wager_multiple,
            hit_order=str(controller.hit_order),
            reason=f"configured in {self.source}",
        )
        rules = self.rules(key, event)
        if raw.max_payout is not None:
            cap = self.dollars(f"{key}.max_payout", raw.max_payout)
            most = most_one_player_wins(rules, event.minimum_wager_cents)
            if cap < (floor := max(MAX_PAYOUT_FLOOR_CENTS, most)):
                raise self.fail(
                    f"{key}.max_payout",
                    f"{format_cents(cap)} is below the § 688a.12(e) floor of {format_cents(floor)} "
                    "($50,000 or the most one player can win in a round betting the minimum, "
                    "whichever is greater)",
                )
            event = msgspec.structs.replace(event, max_payout_cents=cap)
            rules = self.rules(key, event)
        heartbeat = raw.heartbeat_timeout_s or controller.heartbeat_timeout_s
        if raw.heartbeat_timeout_s is not None:
            heartbeat = self.positive(f"{key}.heartbeat_timeout_s", raw.heartbeat_timeout_s)
        return TableConfig(
            table_id, transport, tuple(chosen.values()), event, rules, heartbeat, key
        )

    def transport(
        self,
        key: str,
        text: str,
        broker: BrokerSettings | None,
        ports: dict[str, SerialPortSettings],
    ) -> Transport:
        kind_text, colon, name = text.partition(":")
        kind = self.choice(key, kind_text, TransportKind)
        if (kind is TransportKind.SERIAL) != bool(colon and name):
            raise self.fail(key, f"{text!r}: write 'mqtt', 'simulator' or 'serial:<port name>'")
        if kind is TransportKind.MQTT and broker is None:
            raise self.fail(key, "'mqtt' needs a [broker] table")
        if name and name not in ports:
            raise self.fail(key, f"no [[serial]] port named {name!r}; configured: {_names(ports)}")
        return Transport(kind, ports[name] if name else None)

    def table_pool(
        self, key: str, pool_id: str | None, progressive: PaytableRef | None,
        pools: dict[str, PoolConfig],
    ) -> None:  # fmt: skip
        if pool_id is None and progressive is not None:
            raise self.fail(key, "a table with a progressive paytable names the pool it feeds")
        if pool_id is None:
            return
        if progressive is None:
            raise self.fail(key, "only a table with a progressive paytable feeds a pool")
        if (pool := pools.get(pool_id)) is None:
            raise self.fail(key, f"no pool {pool_id!r}; configured: {_names(pools)}")
        if pool.paytable.name != progressive.name:
            raise self.fail(
                key,
                f"pool {pool_id!r} pays paytable {pool.paytable.name}, but this table's "
                f"progressive is {progressive.name}",
            )

    def dynasty(self, key: str, paytable: Paytable, profile: str) -> None:
        every = {line for lines in DYNASTY_PROFILES.values() for line in lines}
        for row in paytable.lines:
            if row.line in every and row.line not in DYNASTY_PROFILES[profile]:
                raise self.fail(
                    key,
                    f"{paytable.name} pays {row.line}, which the {profile!r} Dynasty profile "
                    "(controller.dynasty_profile) does not define",
                )

    def rules(self, key: str, event: TableConfigured) -> TableRules:
        try:
            return table_rules(event)
        except TableRulesError as error:  # pragma: no cover - the checks above come first
            raise self.fail(key, str(error)) from None

    def simulator(
        self, raw: SimulatorSettings | None, tables: list[TableConfig]
    ) -> SimulatorSettings | None:
        if raw is None:
            return SimulatorSettings() if tables else None
        self.positive("simulator.round_interval_s", raw.round_interval_s)
        for name in ("occupancy", "bet_probability"):
            if not 0 <= getattr(raw, name) <= 1:
                raise self.fail(f"simulator.{name}", "a probability is 0 to 1")
        if raw.hit_every < 0:
            raise self.fail("simulator.hit_every", "0 (off) or a number of rounds")
        return raw

    # -- paytables -------------------------------------------------------------------------------

    def paytable(self, key: str, ref: str, wagers: frozenset[Wager]) -> PaytableRef:
        """A paytable by name (``paytable_dirs``, then the seeds) or by ``.toml`` path."""
        found = self.refs.get(ref) or self.read_paytable(key, ref)
        self.refs[ref] = found
        if found.paytable.wager not in wagers:
            wanted = " or ".join(sorted(wagers))
            raise self.fail(
                key, f"{found.name} is for the {found.paytable.wager} wager, not {wanted}"
            )
        first_key, first_text = self.first_use.setdefault(found.name, (key, found.text))
        if first_text != found.text:
            raise self.fail(key, f"{ref} is another paytable named {found.name} than {first_key}")
        return found

    def read_paytable(self, key: str, ref: str) -> PaytableRef:
        seeds = resources.files("controller") / "paytables"
        seed = seeds / f"{ref}.toml"
        if ref.endswith(".toml"):
            file: Traversable | None = self.path(ref)
        elif _PAYTABLE_NAME.match(ref):
            candidates: list[Traversable] = [d / f"{ref}.toml" for d in self.paytable_dirs]
            file = next((c for c in [*candidates, seed] if c.is_file()), None)
        else:
            raise self.fail(key, f"{ref!r} is neither a paytable name nor a .toml path")
        if file is None:
            known = ", ".join(sorted(e.name.removesuffix(".toml") for e in seeds.iterdir()))
            where = "controller.paytable_dirs or " if self.paytable_dirs else ""
            raise self.fail(key, f"no paytable {ref!r} in {where}the seeds ({known})")
        origin = "seed" if file is seed else str(file)
        try:
            text = file.read_text(encoding="utf-8")
            paytable = parse_paytable(text, f"seed paytable {ref}" if file is seed else origin)
        except OSError as error:
            raise self.fail(key, f"cannot read {file}: {error.strerror}") from None
        except PaytableError as error:
            raise self.fail(key, str(error)) from None
        if paytable.name != file.name.removesuffix(".toml"):
            raise self.fail(key, f"{file}: name: {paytable.name!r} does not match the file name")
        return PaytableRef(paytable, text, origin)


def _names(items: Collection[str]) -> str:
    return ", ".join(items) or "none"
