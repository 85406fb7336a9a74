"""The controller's configuration: one TOML file, validated at start-up into typed objects.

The file is decoded into frozen msgspec Structs that refuse unknown keys, then checked and
turned into the objects the daemon runs on (:class:`Config`). Anything wrong stops the load
with a :class:`ConfigError` whose message is one line, ``file: key: reason``, the key written
as in the file (``tables[2].pool``, ``broker.tls.ca_file``). Relative paths in the file are
relative to its folder. ``deploy/jackpotd.toml`` documents every key;
:mod:`controller.config.changes` turns a configuration into the journal events that bring the
ledger in line with it.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Final

import msgspec

from controller.config.schema import (
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
    SimulatorSettings,
    TableConfig,
    Transport,
    TransportKind,
    WebSettings,
)
from controller.config.tables import Context, TableChecks
from controller.config.values import names
from controller.ledger.settlement import HitOrder
from controller.rules.ranking import AceFive
from controller.security.controller_key import CREDENTIALS

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.settings import BrokerSettings, SerialPortSettings
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

_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_PAYTABLE_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FIELD: Final = re.compile(r"Object (?:contains unknown|missing required) field `([^`]+)`")
_DYNASTY: Final = {"pa": ("pa", "pa-caption"), "nj": ("nj",)}
"""The Dynasty Bonus readings each jurisdiction allows, its default first (docs/rules.md 5.4)."""
MIN_CHECKPOINT_ROWS: Final = 100
MAX_CHECKPOINT_ROWS: Final = 1_000_000
"""Rows between checkpoints: fewer makes the journal mostly checkpoints, more a slow start-up."""


def load_config(path: Path) -> Config:
    """Read and validate a configuration file."""
    try:
        text = path.read_bytes()
    except OSError as error:
        raise ConfigError(str(path), "(file)", f"cannot read: {error.strerror}") from error
    return parse_config(text, str(path), path.absolute().parent)


def parse_config(text: str | bytes, source: str, base_dir: Path) -> Config:
    """Validate one configuration document; ``source`` names it in errors."""
    data = text.encode() if isinstance(text, str) else text
    try:
        raw = msgspec.toml.decode(data, type=RawConfig)
        keys = msgspec.toml.decode(data, type=RawKeys)
    except msgspec.ValidationError as error:
        key, reason = _key_of(error)
        raise ConfigError(source, key, reason) from error
    except msgspec.DecodeError as error:
        raise ConfigError(source, "(file)", f"not valid TOML: {error}") from error
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


class _Loader(TableChecks):
    """Checks one file section by section, remembering the paytables it has read."""

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
            self.table(f"tables[{index}]", entry, seen, Context(controller, broker, ports, pools))
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
        seen_names: set[str] = set()
        table_ids = {table.table_id for table in tables}
        device_urls = {port.url for port in ports.values()}
        for index, sign in enumerate(raw):
            key = f"alpha_sign[{index}]"
            if sign.name in seen_names:
                raise self.fail(f"{key}.name", f"sign {sign.name!r} is configured twice")
            seen_names.add(sign.name)
            if sign.pool_id not in pools:
                raise self.fail(
                    f"{key}.pool_id", f"no pool {sign.pool_id!r}; configured: {names(pools)}"
                )
            for position, table_id in enumerate(sign.tables):
                if table_id not in table_ids:
                    raise self.fail(f"{key}.tables[{position}]", f"no table {table_id!r}")
            if sign.url in device_urls:
                raise self.fail(f"{key}.url", "a sign needs its own line, not a [[serial]] port's")
        return tuple(raw)

    # -- values ----------------------------------------------------------------------------------

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
            dual_control_cents=self.dollars(
                "controller.dual_control_amount", raw.dual_control_amount, minimum=1
            ),
            lockout_after=self.count("controller.lockout_after", raw.lockout_after),
            key_file=self.key_file(raw.key_file),
            checkpoint_rows=self.checkpoint_rows(raw.checkpoint_rows),
            checkpoint_interval_s=self.positive(
                "controller.checkpoint_interval_s", raw.checkpoint_interval_s
            ),
        )

    def key_file(self, text: str | None) -> str | None:
        """The controller key's path, relative to this file; ``${CREDENTIALS_DIRECTORY}`` kept."""
        if text is None or text.startswith(CREDENTIALS):
            return text
        if not text.strip():
            raise self.fail("controller.key_file", "names no file")
        return str(self.path(text))

    def checkpoint_rows(self, rows: int) -> int:
        """Rows between checkpoints: start-up replays at most about this many."""
        if not MIN_CHECKPOINT_ROWS <= rows <= MAX_CHECKPOINT_ROWS:
            raise self.fail(
                "controller.checkpoint_rows",
                f"must be from {MIN_CHECKPOINT_ROWS:,} to {MAX_CHECKPOINT_ROWS:,}, not {rows:,}",
            )
        return rows

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
        out_password = self.out_login(raw)
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
            out_password_file=out_password,
            tls=tls,
        )

    def out_login(self, raw: BrokerSettings) -> str | None:
        """Check the second connection's user; its password file, resolved."""
        if raw.out_password_file is not None and raw.out_username is None:
            raise self.fail("broker.out_password_file", "a password needs broker.out_username")
        if raw.out_username is not None:
            if raw.username is None:
                raise self.fail("broker.out_username", "needs broker.username as well")
            if raw.out_username == raw.username:
                # Under use_username_as_clientid the two would take each other's session.
                raise self.fail(
                    "broker.out_username", "is broker.username: each connection needs its own user"
                )
        return self.existing_file("broker.out_password_file", raw.out_password_file, secret=True)

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
