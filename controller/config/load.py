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
import os
import re
import socket
from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec

from controller.config.gaming_day import GamingDay, start_of, zone_of
from controller.config.schema import (
    Config,
    ConfigError,
    ControllerConfig,
    DriverEntry,
    Jurisdiction,
    PaytableRef,
    PoolConfig,
    RawConfig,
    RawController,
    TableConfig,
    Transport,
    WebSettings,
)
from controller.config.tables import Context, TableChecks
from controller.config.values import names
from controller.config.wide_area import SECTION, played_pools, read_wide_area, wide_area
from controller.journal.errors import JournalError
from controller.journal.high_water import high_water_path
from controller.journal.location import DatabaseUrl, journal_location
from controller.ledger.settlement import HitOrder
from controller.plugins import by_section
from controller.rules.ranking import AceFive
from controller.security.controller_key import CREDENTIALS

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from controller.journal.location import JournalLocation
    from controller.plugins import DriverSpec

__all__ = [
    "Config",
    "ConfigError",
    "ControllerConfig",
    "Jurisdiction",
    "PaytableRef",
    "PoolConfig",
    "TableConfig",
    "Transport",
    "WebSettings",
    "load_config",
    "parse_config",
]

T = TypeVar("T")

_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_PAYTABLE_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FIELD: Final = re.compile(r"Object (?:contains unknown|missing required) field `([^`]+)`")
_DYNASTY: Final = {"pa": ("pa", "pa-caption"), "nj": ("nj",)}
"""The Dynasty Bonus readings each jurisdiction allows, its default first (docs/rules.md 5.4)."""
MIN_CHECKPOINT_ROWS: Final = 100
MAX_CHECKPOINT_ROWS: Final = 1_000_000
"""Rows between checkpoints: fewer makes the journal mostly checkpoints, more a slow start-up."""
LEASE_S: Final = (1.0, 300.0)
"""The sequencer's lease: renewed thrice a lease, so shorter hammers the database; longer
delays a takeover after a node dies (docs/ha.md)."""
COMMIT_HANG_S: Final = (1.0, 3600.0)
MAX_HEAD_ROWS: Final = 10_000
MAX_SOCKET_PATH: Final = 107
"""The longest path a Unix socket may have (sun_path holds 108 bytes, the last a NUL)."""
HEAD_INTERVAL_S: Final = (0.05, 60.0)
"""Signed heads: how many acknowledged rows, and for how long, a rollback could drop unseen
(docs/security.md, "History never goes back"); more often costs a signature and an fsync."""


def read_config_file(path: Path) -> bytes:
    """A configuration file's bytes, or one line saying why it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise ConfigError(str(path), "(file)", f"cannot read: {error.strerror}") from error


def toml_document(data: bytes, source: str) -> dict[str, Any]:
    """A TOML document's tables, or one line saying where it is not valid TOML."""
    try:
        return msgspec.toml.decode(data, type=dict[str, Any])
    except msgspec.DecodeError as error:
        raise ConfigError(source, "(file)", f"not valid TOML: {error}") from error


def load_config(path: Path) -> Config:
    """Read and validate a configuration file."""
    return parse_config(read_config_file(path), str(path), path.absolute().parent)


def parse_config(text: str | bytes, source: str, base_dir: Path) -> Config:
    """Validate one configuration document; ``source`` names it in errors."""
    data = text.encode() if isinstance(text, str) else text
    document = toml_document(data, source)
    specs = by_section()
    # The drivers' sections go to the drivers' types; the rest must be the core's.
    sections = {name: document.pop(name) for name in list(document) if name in specs}
    wide = document.pop(SECTION, None)  # its broker keys are the MQTT driver's
    try:
        raw = msgspec.convert(document, RawConfig)
    except msgspec.ValidationError as error:
        key, reason = _key_of(error)
        raise ConfigError(source, key, reason) from error
    return _Loader(source, base_dir).load(raw, sections, wide, hashlib.sha256(data).hexdigest())


def _join(key: str, where: str) -> str:
    """``serial[0]`` and ``url`` (or ``(file)``, or ``[1]``) as the file writes the key."""
    if where == "(file)":
        return key
    return f"{key}{where}" if where.startswith("[") else f"{key}.{where}"


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

    site = ""
    controller_id = ""

    def load(self, raw: RawConfig, sections: dict[str, Any], wide: object, digest: str) -> Config:
        controller = self.controller(raw.controller)
        self.site, self.controller_id = controller.site, controller.controller_id
        specs = by_section()
        drivers = [
            entry for name, value in sections.items() for entry in self.driver(specs[name], value)
        ]
        seen: dict[str, str] = {}
        pools = {
            (pool := self.pool(f"pools[{index}]", entry, seen)).pool_id: pool
            for index, entry in enumerate(raw.pools)
        }
        if not raw.tables:
            raise self.fail("tables", "configure at least one [[tables]] entry")
        seen = {}
        written = read_wide_area(self, wide)
        context = Context(controller, tuple(drivers), pools, played_pools(written))
        tables = tuple(
            self.table(f"tables[{index}]", entry, seen, context)
            for index, entry in enumerate(raw.tables)
        )
        drivers += self.implicit(specs.values(), drivers, tables)
        self.served(drivers, tables)
        self.references(drivers, pools, tables)
        if not raw.web.host.strip():
            raise self.fail("web.host", "an address to listen on is required")
        self.port("web.port", raw.web.port)
        if raw.web.max_connections <= raw.web.max_streams:
            raise self.fail(
                "web.max_connections",
                f"must be above max_streams ({raw.web.max_streams}), so that /healthz and "
                f"/metrics find a place while every stream is open, not {raw.web.max_connections}",
            )
        return Config(
            self.source,
            digest,
            controller,
            tuple(pools.values()),
            tables,
            raw.web,
            tuple(drivers),
            wide_area(self, written, pools, tables),
        )

    def driver(self, spec: DriverSpec[Any], value: object) -> list[DriverEntry]:
        """A driver's section, typed by the driver and checked by it (names unique)."""
        section = spec.section
        if spec.many and not isinstance(value, list):
            raise self.fail(section, f"write [[{section}]] tables, one per entry")
        if not spec.many and not isinstance(value, dict):
            raise self.fail(section, f"write a [{section}] table")
        items = value if isinstance(value, list) else [value]
        entries, seen = [], dict[str, str]()
        for index, item in enumerate(items):
            key = f"{section}[{index}]" if spec.many else section
            settings = self.driver_settings(spec, key, item)
            if spec.instance is not None:
                self.identifier(f"{key}.name", spec.instance(settings), seen)
            entries.append(DriverEntry(spec, key, settings))
        return entries

    def driver_settings(
        self,
        spec: DriverSpec[Any],
        key: str,
        item: Any,  # noqa: ANN401 - as the file holds it
    ) -> Any:  # noqa: ANN401 - the driver's own type
        """One entry of a driver's section, at ``key`` in the file, typed and checked by it."""
        settings = self.typed(key, item, spec.settings)
        if spec.check is not None:
            settings = spec.check(settings, self, key, item)
        return settings

    def typed(self, key: str, item: object, kind: type[T]) -> T:
        """``item``, at ``key`` in the file, as ``kind`` (unknown keys refused), or the reason."""
        try:
            return msgspec.convert(item, kind)
        except msgspec.ValidationError as error:
            where, reason = _key_of(error)
            raise self.fail(_join(key, where), reason) from error

    def implicit(
        self,
        specs: Iterable[DriverSpec[Any]],
        drivers: list[DriverEntry],
        tables: Iterable[TableConfig],
    ) -> list[DriverEntry]:
        """Entries on defaults for the drivers tables name with no section written."""
        used = {table.transport.driver for table in tables}
        configured = {entry.spec.name for entry in drivers}
        return [
            DriverEntry(spec, spec.section, spec.settings())
            for spec in specs
            if spec.implicit and spec.transport in used and spec.name not in configured
        ]

    def served(self, drivers: list[DriverEntry], tables: tuple[TableConfig, ...]) -> None:
        """An entry bound to one table (a serial line) must be that table's transport."""
        known = ", ".join(table.table_id for table in tables)
        by_id = {table.table_id: table for table in tables}
        for entry in drivers:
            spec = entry.spec
            table_id = spec.bound_table(entry.settings) if spec.bound_table else None
            if table_id is None:
                continue
            table = by_id.get(table_id)
            if table is None:
                raise self.fail(
                    f"{entry.key}.table_id", f"no table {table_id!r}; configured: {known}"
                )
            wanted = Transport(spec.transport or spec.name, entry.instance)
            if table.transport != wanted:
                reason = f"table {table_id!r} does not name transport '{wanted}'"
                raise self.fail(f"{entry.key}.table_id", reason)

    def references(
        self,
        drivers: list[DriverEntry],
        pools: dict[str, PoolConfig],
        tables: tuple[TableConfig, ...],
    ) -> None:
        """The pools and tables entries name exist; no two entries open one device line."""
        table_ids = {table.table_id for table in tables}
        lines: dict[str, str] = {}
        for entry in drivers:
            spec = entry.spec
            for where, kind, name in spec.references(entry.settings) if spec.references else ():
                if kind == "pool" and name not in pools:
                    reason = f"no pool {name!r}; configured: {names(pools)}"
                    raise self.fail(f"{entry.key}.{where}", reason)
                if kind == "table" and name not in table_ids:
                    raise self.fail(f"{entry.key}.{where}", f"no table {name!r}")
            for line in spec.devices(entry.settings) if spec.devices else ():
                if line in lines:
                    reason = f"the line {line!r} is {lines[line]}'s already: each needs its own"
                    raise self.fail(f"{entry.key}.url", reason)
                lines[line] = entry.key

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
        journal = self.journal(raw.journal)
        node = self.node(raw.node)
        return ControllerConfig(
            site=self.identifier("controller.site", raw.site),
            controller_id=self.identifier("controller.id", raw.controller_id),
            journal=journal,
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
            signer_socket=self.signer_socket(raw.signer_socket, raw.key_file),
            operator_socket=self.socket_path("controller.operator_socket", raw.operator_socket),
            operator_group=self.group("controller.operator_group", raw.operator_group),
            checkpoint_rows=self.checkpoint_rows(raw.checkpoint_rows),
            checkpoint_interval_s=self.positive(
                "controller.checkpoint_interval_s", raw.checkpoint_interval_s
            ),
            high_water_file=self.high_water_file(raw.high_water_file, journal, node),
            head_rows=self.head_rows(raw.head_rows),
            head_interval_s=self.within(
                "controller.head_interval_s", raw.head_interval_s, HEAD_INTERVAL_S
            ),
            node=node,
            lease_s=self.within("controller.lease_s", raw.lease_s, LEASE_S),
            commit_hang_s=self.within("controller.commit_hang_s", raw.commit_hang_s, COMMIT_HANG_S),
            gaming_day=self.gaming_day(raw.gaming_day_start, raw.time_zone),
        )

    def gaming_day(self, start: str, zone: str) -> GamingDay:
        """``gaming_day_start`` and ``time_zone``, each refused with its key and why."""
        try:
            begins = start_of(start)
        except ValueError as error:
            raise self.fail("controller.gaming_day_start", str(error)) from error
        try:
            return GamingDay(begins, zone_of(zone))
        except ValueError as error:
            raise self.fail("controller.time_zone", str(error)) from error

    def node(self, text: str | None) -> str:
        """This node's id in the sequencer's fence: the host's name unless the file says."""
        if text is None:
            return socket.gethostname() or "jackpotd"
        return self.dotted_identifier("controller.node", text)

    def within(self, key: str, value: float, bounds: tuple[float, float]) -> float:
        """Seconds from ``bounds[0]`` to ``bounds[1]``."""
        low, high = bounds
        if not low <= value <= high:
            raise self.fail(key, f"must be from {low:g} to {high:g} seconds, not {value:g}")
        return value

    def journal(self, text: str) -> JournalLocation:
        """The journal's file (relative to this file) or its ``postgresql://`` URL (docs/ha.md)."""
        try:
            return journal_location(text, self.base_dir)
        except JournalError as error:
            raise self.fail("controller.journal", str(error)) from None

    def key_file(self, text: str | None) -> str | None:
        """The controller key's path, relative to this file; ``${CREDENTIALS_DIRECTORY}`` kept."""
        if text is None or text.startswith(CREDENTIALS):
            return text
        if not text.strip():
            raise self.fail("controller.key_file", "names no file")
        return str(self.path(text))

    def signer_socket(self, text: str | None, key_file: str | None) -> str | None:
        """The signer's socket, relative to this file; never with ``key_file`` as well."""
        if text is None:
            return None
        key = "controller.signer_socket"
        if key_file is not None:
            raise self.fail(key, "the key is the signer's or the service's: set it or key_file")
        return self.socket_path(key, text)

    def socket_path(self, key: str, text: str | None) -> str | None:
        """A Unix socket's path, relative to this file, no longer than a socket's path may be."""
        if text is None:
            return None
        if not text.strip():
            raise self.fail(key, "names no socket")
        path = str(self.path(text))
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            raise self.fail(
                key, f"{path} is longer than a Unix socket's path may be ({MAX_SOCKET_PATH} bytes)"
            )
        return path

    def group(self, key: str, text: str | None) -> str | None:
        """A group's name as written (it is looked up where the daemon runs, when it starts)."""
        if text is None:
            return None
        if not text.strip() or text != text.strip():
            raise self.fail(key, f"{text!r} is not a group's name")
        return text

    def high_water_file(self, text: str | None, journal: JournalLocation, node: str) -> str | None:
        """The high-water file's path, relative to this file.

        Unset, an SQLite journal keeps it beside its file (None here: the journal's path says
        where). A PostgreSQL journal has no folder of its own: its default is ``var/`` beside
        this file, never the working directory, which is whatever the caller's happens to be.
        """
        if text is None:
            if isinstance(journal, DatabaseUrl):
                return str(self.base_dir / high_water_path(str(journal), node))
            return None
        if not text.strip():
            raise self.fail("controller.high_water_file", "names no file")
        return str(self.path(text))

    def head_rows(self, rows: int) -> int:
        """Rows between signed heads."""
        if not 1 <= rows <= MAX_HEAD_ROWS:
            raise self.fail(
                "controller.head_rows", f"must be from 1 to {MAX_HEAD_ROWS:,}, not {rows:,}"
            )
        return rows

    def checkpoint_rows(self, rows: int) -> int:
        """Rows between checkpoints: start-up replays at most about this many."""
        if not MIN_CHECKPOINT_ROWS <= rows <= MAX_CHECKPOINT_ROWS:
            raise self.fail(
                "controller.checkpoint_rows",
                f"must be from {MIN_CHECKPOINT_ROWS:,} to {MAX_CHECKPOINT_ROWS:,}, not {rows:,}",
            )
        return rows

    # -- paytables -------------------------------------------------------------------------------
