"""The ``[wide_area]`` section: this controller as a property of a central system, or as central.

docs/wide-area.md, "Configuration". The section is optional; when it is there ``role`` says
which side of the link this controller is, and the keys of the other side are refused:

* **a property** names itself to central (``site``), trusts central's controller key
  (``central_key`` or ``central_key_file``), lists the wide-area pools its tables play
  (``pools``: central's, so never a local ``[[pools]]`` entry, each played by at least one of
  its ``[[tables]]``, all on one progressive paytable), closes wide-area wagers ``grace_s``
  after central was last heard, and reaches central's brokers through ``[wide_area.central]``,
  the MQTT driver's own ``[broker]`` keys, TLS required (Michigan R 432.1841: the link between
  a site and central is encrypted);
* **central** links properties (``[[wide_area.sites]]``: each one's id, controller key and the
  local pools it feeds) and acknowledges each of them every ``heartbeat_s`` even when idle.

The broker keys are read by the MQTT driver's spec (:mod:`controller.plugins`), as the
controller's ``[broker]`` and a table agent's are, so the same keys mean the same things.
Every error is one line, ``file: key: reason``. What the section changes in the ledger is
journaled by :mod:`controller.config.changes` (``WideAreaJoined``, ``SiteLinked``), inside a
manager's signed approval as pools and tables are (:mod:`controller.config.approval`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.config.driver_sections import driver_settings
from controller.config.values import names
from controller.config.wide_area_settings import (
    PropertySite,
    Role,
    WideAreaCentral,
    WideAreaProperty,
    WideAreaSettings,
)
from controller.plugins import uplink_driver
from controller.security.controller_key import (
    CREDENTIALS,
    ControllerKeyError,
    public_key,
    read_public_key,
    resolve,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from controller.config.schema import PoolConfig, TableConfig
    from controller.config.values import Checker

SECTION: Final = "wide_area"
"""The driver section whose keys ``[wide_area.central]`` takes."""
GRACE_S: Final = (5.0, 3600.0)
"""A property's wide-area wagers close this long after central was last heard."""
DEFAULT_GRACE_S: Final = 60.0
HEARTBEAT_S: Final = (1.0, 60.0)
"""How often central acknowledges each property, idle or not."""
DEFAULT_HEARTBEAT_S: Final = 5.0


class RawSite(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One ``[[wide_area.sites]]`` entry as written (central's)."""

    site_id: str = msgspec.field(name="id")
    public_key: str | None = None
    public_key_file: str | None = None
    pools: list[str] = []


class RawWideArea(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[wide_area]`` as written; a key left out is None, so the other role's are told apart."""

    role: str
    site: str | None = None
    central_site: str | None = None
    central_key: str | None = None
    central_key_file: str | None = None
    pools: list[str] | None = None
    grace_s: float | None = None
    central: dict[str, Any] | None = None
    """The MQTT driver's ``[broker]`` keys, typed and checked by the driver."""
    sites: list[RawSite] | None = None
    heartbeat_s: float | None = None


_KEYS: Final = {
    Role.PROPERTY: (
        "site",
        "central_site",
        "central_key",
        "central_key_file",
        "pools",
        "grace_s",
        "central",
    ),
    Role.CENTRAL: ("sites", "heartbeat_s"),
}
"""The keys only one role takes."""
_WHO: Final = {Role.PROPERTY: "a property", Role.CENTRAL: "central"}


def read_wide_area(checks: Checker, written: object) -> RawWideArea | None:
    """The section as written (unknown keys refused, the role known), or None without one."""
    if written is None:
        return None
    raw = checks.typed(SECTION, written, RawWideArea)
    role = checks.choice(f"{SECTION}.role", raw.role, Role)
    for other in Role:
        if other is role:
            continue
        for name in _KEYS[other]:
            if getattr(raw, name) is not None:
                reason = f"only {_WHO[other]} sets it, and this controller is {_WHO[role]}"
                raise checks.fail(f"{SECTION}.{name}", reason)
    if role is Role.PROPERTY and not raw.pools:  # before the tables, which may name them
        reason = "list the wide-area pools this property's tables play (central's pool ids)"
        raise checks.fail(f"{SECTION}.pools", reason)
    return raw


def played_pools(raw: RawWideArea | None) -> frozenset[str]:
    """The wide-area pools a property's tables may name (none at central or a lone site)."""
    if raw is None or raw.role != Role.PROPERTY:
        return frozenset()
    return frozenset(raw.pools or ())


def wide_area(
    checks: Checker,
    raw: RawWideArea | None,
    pools: Mapping[str, PoolConfig],
    tables: tuple[TableConfig, ...],
) -> WideAreaSettings | None:
    """The checked section, once the pools and tables it refers to are known."""
    if raw is None:
        return None
    if raw.role == Role.PROPERTY:
        return _property(checks, raw, pools, tables)
    return _central(checks, raw, pools, tables)


def _property(
    checks: Checker,
    raw: RawWideArea,
    pools: Mapping[str, PoolConfig],
    tables: tuple[TableConfig, ...],
) -> WideAreaProperty:
    if raw.site is None:
        reason = "required: this property's id at central (its [[wide_area.sites]] id there)"
        raise checks.fail(f"{SECTION}.site", reason)
    site = checks.dotted_identifier(f"{SECTION}.site", raw.site)
    central_site = raw.central_site
    if not central_site or any(mark in central_site for mark in "+#") or "//" in central_site:
        reason = "required: central's [controller] site, the first levels of its topics"
        raise checks.fail(f"{SECTION}.central_site", reason)
    key = _public_key(checks, SECTION, "central_key", raw.central_key, raw.central_key_file)
    grace = DEFAULT_GRACE_S if raw.grace_s is None else raw.grace_s
    return WideAreaProperty(
        site=site,
        central_key=key,
        pools=_played(checks, raw.pools or [], pools, tables),
        grace_s=checks.within(f"{SECTION}.grace_s", grace, GRACE_S),
        central=_central_brokers(checks, raw.central, site),
        central_site=central_site,
    )


def _played(
    checks: Checker,
    listed: list[str],
    pools: Mapping[str, PoolConfig],
    tables: tuple[TableConfig, ...],
) -> dict[str, str]:
    """Each wide-area pool and the one progressive paytable the property's tables play it with."""
    played: dict[str, str] = {}
    seen: dict[str, str] = {}
    for index, pool_id in enumerate(listed):
        key = f"{SECTION}.pools[{index}]"
        checks.identifier(key, pool_id, seen)
        if (local := pools.get(pool_id)) is not None:
            reason = (
                f"{pool_id!r} is also a local pool ({local.key}): a wide-area pool is central's; "
                "keep it in one of them"
            )
            raise checks.fail(key, reason)
        played[pool_id] = _paytable_of(checks, key, pool_id, tables)
    return played


def _paytable_of(checks: Checker, key: str, pool_id: str, tables: tuple[TableConfig, ...]) -> str:
    """The one progressive paytable the tables playing a wide-area pool play it with."""
    playing = [
        (table.key, paytable)
        for table in tables
        if table.event.pool_id == pool_id and (paytable := table.event.progressive) is not None
    ]
    if not playing:
        reason = f"no [[tables]] entry plays {pool_id!r}: give one a progressive and this pool"
        raise checks.fail(key, reason)
    (first, paytable), *others = playing
    for table_key, other in others:
        if other != paytable:
            reason = (
                f"wide-area pool {pool_id!r} is played with {paytable} by {first}, not {other}: "
                "one pool, one paytable"
            )
            raise checks.fail(f"{table_key}.progressive", reason)
    return paytable


def _central_brokers(checks: Checker, written: dict[str, Any] | None, site: str) -> object:
    """``[wide_area.central]``: the MQTT driver's broker keys, over TLS only."""
    key = f"{SECTION}.central"
    if written is None:
        reason = "write a [wide_area.central] table: central's brokers, reached over TLS"
        raise checks.fail(key, reason)
    # A session per property at central's brokers, unless the file names one.
    item = {"client_id": f"site-{site}", **written}
    settings = driver_settings(checks, uplink_driver(), key, item)
    tls = written.get("tls")
    if not isinstance(tls, dict):
        reason = (
            "required: the link to central is encrypted (Michigan R 432.1841); "
            "write [wide_area.central.tls] with central's CA"
        )
        raise checks.fail(f"{key}.tls", reason)
    if tls.get("insecure_skip_hostname_check"):
        reason = "a link to central checks that it reached central; only false is accepted"
        raise checks.fail(f"{key}.tls.insecure_skip_hostname_check", reason)
    return settings


def _central(
    checks: Checker,
    raw: RawWideArea,
    pools: Mapping[str, PoolConfig],
    tables: tuple[TableConfig, ...],
) -> WideAreaCentral:
    if not raw.sites:
        reason = "link at least one property: a [[wide_area.sites]] entry each"
        raise checks.fail(f"{SECTION}.sites", reason)
    carried = {name for table in tables for name in table.event.paytables}
    seen: dict[str, str] = {}
    sites = []
    for index, entry in enumerate(raw.sites):
        key = f"{SECTION}.sites[{index}]"
        site = checks.dotted_identifier(f"{key}.id", entry.site_id, seen)
        public = _public_key(checks, key, "public_key", entry.public_key, entry.public_key_file)
        fed = _fed(checks, key, entry.pools, pools, carried)
        sites.append(PropertySite(site, public, fed, key))
    heartbeat = DEFAULT_HEARTBEAT_S if raw.heartbeat_s is None else raw.heartbeat_s
    return WideAreaCentral(
        tuple(sites), checks.within(f"{SECTION}.heartbeat_s", heartbeat, HEARTBEAT_S)
    )


def _fed(
    checks: Checker,
    key: str,
    listed: list[str],
    pools: Mapping[str, PoolConfig],
    carried: set[str],
) -> tuple[str, ...]:
    """The local pools a property feeds; central judges its claims by a table's paytable."""
    if not listed:
        raise checks.fail(f"{key}.pools", "list the pools the property's tables feed")
    seen: dict[str, str] = {}
    for index, pool_id in enumerate(listed):
        where = f"{key}.pools[{index}]"
        checks.unique(where, pool_id, seen)
        pool = pools.get(pool_id)
        if pool is None:
            raise checks.fail(where, f"no pool {pool_id!r}; configured: {names(pools)}")
        if pool.paytable.name not in carried:
            reason = (
                f"pool {pool_id!r} pays {pool.paytable.name}, which no [[tables]] entry carries: "
                "central judges the property's hits by it; give a table that progressive "
                "(it may stay closed)"
            )
            raise checks.fail(where, reason)
    return tuple(listed)


def _public_key(checks: Checker, key: str, name: str, text: str | None, file: str | None) -> str:
    """An Ed25519 public key written in the file (``name``) or read from one (``name_file``)."""
    if text is not None and file is not None:
        raise checks.fail(f"{key}.{name}_file", f"give {key}.{name} or this, not both")
    if text is not None:
        try:
            return public_key(text)
        except ControllerKeyError as error:
            raise checks.fail(f"{key}.{name}", str(error)) from None
    if file is None:
        reason = (
            f"required: the controller's public key (base64, as `jackpotd key generate` "
            f"prints it), or {name}_file"
        )
        raise checks.fail(f"{key}.{name}", reason)
    try:
        return read_public_key(_key_path(checks, file))
    except ControllerKeyError as error:
        raise checks.fail(f"{key}.{name}_file", str(error)) from None


def _key_path(checks: Checker, text: str) -> Path:
    """A key file's path as ``[controller] key_file``'s: this file's folder, or systemd's."""
    return resolve(text) if text.startswith(CREDENTIALS) else checks.path(text)
