"""The controller's configuration: one TOML file, validated at start-up into typed objects.

The file is decoded into frozen msgspec Structs that refuse unknown keys, then checked and
turned into the objects the daemon runs on (:class:`Config`). Anything wrong stops the load
with a :class:`ConfigError` whose message is one line, ``file: key: reason``, the key written
as in the file (``tables[2].pool``, ``broker.tls.ca_file``). Relative paths in the file are
relative to its folder. ``deploy/jackpotd.toml`` documents every key;
:mod:`controller.config.changes` turns a configuration into the journal events that bring the
ledger in line with it.

Each section has its reader (:mod:`~controller.config.controller_section`,
:mod:`~controller.config.pools`, :mod:`~controller.config.tables`,
:mod:`~controller.config.driver_sections` for the drivers' own sections,
:mod:`~controller.config.wide_area`); each is handed the file's
:class:`~controller.config.values.Checker`, which names the file in every error, and the pools
and tables share the file's :class:`~controller.config.paytables.Paytables`. This module reads
the file and calls them in order, each section given what the ones before it made.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import msgspec

from controller.config.controller_section import read_controller
from controller.config.driver_sections import implicit, read_driver, references, served
from controller.config.paytables import Paytables
from controller.config.pools import read_pools
from controller.config.schema import (
    Config,
    ConfigError,
    ControllerConfig,
    Jurisdiction,
    PaytableRef,
    PoolConfig,
    RawConfig,
    TableConfig,
    Transport,
    WebSettings,
)
from controller.config.tables import Context, read_tables
from controller.config.values import Checker, key_of
from controller.config.web_section import read_web
from controller.config.wide_area import SECTION, played_pools, read_wide_area, wide_area
from controller.plugins import by_section

if TYPE_CHECKING:
    from pathlib import Path

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
        key, reason = key_of(error)
        raise ConfigError(source, key, reason) from error
    digest = hashlib.sha256(data).hexdigest()
    return _checked(Checker(source, base_dir), raw, sections, wide, digest)


def _checked(
    checks: Checker, raw: RawConfig, sections: dict[str, Any], wide: object, digest: str
) -> Config:
    """The file's sections checked in order, each given what the sections before it made."""
    controller = read_controller(checks, raw.controller)
    checks = checks.naming(controller.site, controller.controller_id)
    specs = by_section()
    drivers = [
        entry
        for name, value in sections.items()
        for entry in read_driver(checks, specs[name], value)
    ]
    paytables = Paytables(checks, controller.paytable_dirs)
    pools = read_pools(checks, paytables, raw.pools)
    if not raw.tables:
        raise checks.fail("tables", "configure at least one [[tables]] entry")
    written = read_wide_area(checks, wide)
    context = Context(controller, tuple(drivers), pools, played_pools(written))
    tables = read_tables(checks, paytables, raw.tables, context)
    drivers += implicit(specs.values(), drivers, tables)
    served(checks, drivers, tables)
    references(checks, drivers, pools, tables)
    web = read_web(checks, raw.web, console=controller.operator_socket is not None)
    return Config(
        checks.source,
        digest,
        controller,
        tuple(pools.values()),
        tables,
        web,
        tuple(drivers),
        wide_area(checks, written, pools, tables),
    )
