"""The drivers' sections of a file (``[broker]``, ``[[serial]]``), each typed by its driver.

docs/architecture.md, "Drivers": a driver's :class:`~controller.plugins.DriverSpec` owns its
section's settings and checks them, given the file's :class:`~controller.config.values.Checker`
(a :class:`~controller.plugins.SettingsChecks`). What no single entry can know is checked here
once the tables are read: an entry bound to one table is that table's transport, the pools and
tables an entry names exist, and no two entries open one device line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.config.schema import DriverEntry, Transport
from controller.config.values import names

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from controller.config.schema import PoolConfig, TableConfig
    from controller.config.values import Checker
    from controller.plugins import DriverSpec


def read_driver(checks: Checker, spec: DriverSpec[Any], value: object) -> list[DriverEntry]:
    """A driver's section, typed by the driver and checked by it (names unique)."""
    section = spec.section
    if spec.many and not isinstance(value, list):
        raise checks.fail(section, f"write [[{section}]] tables, one per entry")
    if not spec.many and not isinstance(value, dict):
        raise checks.fail(section, f"write a [{section}] table")
    items = value if isinstance(value, list) else [value]
    entries, seen = [], dict[str, str]()
    for index, item in enumerate(items):
        key = f"{section}[{index}]" if spec.many else section
        settings = driver_settings(checks, spec, key, item)
        if spec.instance is not None:
            checks.identifier(f"{key}.name", spec.instance(settings), seen)
        entries.append(DriverEntry(spec, key, settings))
    return entries


def driver_settings(
    checks: Checker,
    spec: DriverSpec[Any],
    key: str,
    item: Any,  # noqa: ANN401 - as the file holds it
) -> Any:  # noqa: ANN401 - the driver's own type
    """One entry of a driver's section, at ``key`` in the file, typed and checked by it."""
    settings = checks.typed(key, item, spec.settings)
    if spec.check is not None:
        settings = spec.check(settings, checks, key, item)
    return settings


def implicit(
    specs: Iterable[DriverSpec[Any]], drivers: list[DriverEntry], tables: Iterable[TableConfig]
) -> list[DriverEntry]:
    """Entries on defaults for the drivers tables name with no section written."""
    used = {table.transport.driver for table in tables}
    configured = {entry.spec.name for entry in drivers}
    return [
        DriverEntry(spec, spec.section, spec.settings())
        for spec in specs
        if spec.implicit and spec.transport in used and spec.name not in configured
    ]


def served(checks: Checker, drivers: list[DriverEntry], tables: tuple[TableConfig, ...]) -> None:
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
            raise checks.fail(
                f"{entry.key}.table_id", f"no table {table_id!r}; configured: {known}"
            )
        wanted = Transport(spec.transport or spec.name, entry.instance)
        if table.transport != wanted:
            reason = f"table {table_id!r} does not name transport '{wanted}'"
            raise checks.fail(f"{entry.key}.table_id", reason)


def references(
    checks: Checker,
    drivers: list[DriverEntry],
    pools: Mapping[str, PoolConfig],
    tables: tuple[TableConfig, ...],
) -> None:
    """The pools and tables entries name exist; no two entries open one device line.

    A pool may be named by one of its levels, ``POOL.LEVEL`` (a sign over a mystery level,
    docs/signs.md): each level has its own meter.
    """
    table_ids = {table.table_id for table in tables}
    meters = set(pools) | {level for pool in pools.values() for level, _terms in pool.levels}
    lines: dict[str, str] = {}
    for entry in drivers:
        spec = entry.spec
        for where, kind, name in spec.references(entry.settings) if spec.references else ():
            if kind == "pool" and name not in meters:
                reason = f"no pool {name!r}; configured: {names(pools)}"
                raise checks.fail(f"{entry.key}.{where}", reason)
            if kind == "table" and name not in table_ids:
                raise checks.fail(f"{entry.key}.{where}", f"no table {name!r}")
        for line in spec.devices(entry.settings) if spec.devices else ():
            if line in lines:
                reason = f"the line {line!r} is {lines[line]}'s already: each needs its own"
                raise checks.fail(f"{entry.key}.url", reason)
            lines[line] = entry.key
