"""The journal events that bring the ledger in line with the configuration at start-up.

:func:`config_events` compares a :class:`controller.config.load.Config` with the ledger's state and
returns only what differs, in an order the ledger accepts (a property's joining of central
first, so that its tables may name the wide-area pools; pools before the tables that feed them;
the tables before central's links, which take the pools' paytables from them):

* a pool the ledger has never seen is opened (``pool-opened``);
* a pool whose terms differ from those in force, or from those already queued, gets its new
  terms queued until its jackpot is won (``pool-terms-changed``, ``apply_now`` false,
  docs/money.md);
* a table whose rules differ from the ``table-configured`` event that set them is configured
  again, its paytables' TOML text included;
* a table the ledger knows but the configuration no longer names is closed
  (``table-status``, offline, "removed from the configuration") if it is open: no device of
  it is served any more, and its sign and the displays must not show it open. Its rules,
  any round left open and its payouts stay in the ledger (a round can still be voided, a hit
  verified); configured again, it reopens as any closed table does, when its devices speak.
  A pool the configuration no longer names keeps its meter: that money is still owed;
* at a property (``[wide_area] role = "property"``), a site, central's key or wide-area pools
  that differ from the ledger's link are joined again (``wide-area-joined``), its chain kept;
  another site than the journal's refuses to start: the chain of messages is that site's;
* at central, each property whose key or pools differ from its link, or that is not linked
  yet, is linked (``site-linked``); a property the file no longer names stays linked (only a
  manager's decision ends a link).

Who and why (``by``, ``reason``) do not count as a difference. Event ids are derived from the
content and from what they replace, so starting twice with one configuration journals nothing
new, and a configuration changed and then changed back is journaled both times. (A wide-area
link keeps no id of the event that made it, so a change of one is also named by its time.)
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING, Final, TypeVar

import msgspec

from controller.config.load import ConfigError
from controller.config.wide_area_settings import WideAreaCentral, WideAreaProperty
from controller.events import (
    AnyEvent,
    PoolOpened,
    PoolTermsChanged,
    TableConfigured,
    TableStatusChanged,
    encode_event,
)
from controller.ledger.authority import CONFIGURATION
from controller.money import exact_decimal, format_cents
from controller.wide_events import SiteLinked, WideAreaJoined

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from controller.config.load import Config, PoolConfig, TableConfig
    from controller.ledger.apply import LedgerState
    from controller.ledger.pool import Pool

REMOVED: Final = "removed from the configuration"
E = TypeVar("E", PoolOpened, PoolTermsChanged, TableConfigured, SiteLinked, WideAreaJoined)


def config_events(config: Config, state: LedgerState, at: str) -> list[AnyEvent]:
    """The events to journal at ``at`` so that the ledger runs ``config``; empty if it does."""
    events: list[AnyEvent] = []
    if isinstance(config.wide_area, WideAreaProperty):
        events += _joined(config, config.wide_area, state, at)
    events += [
        event
        for pool in _ledger_pools(config.pools)
        if (event := _pool_event(config, pool, state.pools.get(pool.pool_id), at)) is not None
    ]
    for table in config.tables:
        previous = state.table_events.get(table.table_id)
        if previous is None or _settings(previous) != _settings(table.event):
            events.append(_table_event(config, table, previous, at))
    if isinstance(config.wide_area, WideAreaCentral):
        events += _linked(config.wide_area, state, at)
    configured = {table.table_id for table in config.tables}
    for table_id in sorted(state.table_events.keys() - configured):
        live = state.table_states.get(table_id)
        if live is None or live.online:
            # Only an open table is closed, so the id (the start-up's time) is never reused.
            event_id = f"config/{table_id}/removed/{at}"
            events.append(TableStatusChanged(event_id, at, table_id, online=False, reason=REMOVED))
    return events


def _ledger_pools(pools: Iterable[PoolConfig]) -> Iterator[PoolConfig]:
    """The pools the ledger holds: a multi-level pool's levels, each a pool of its own."""
    for pool in pools:
        if not pool.levels:
            yield pool
        for level_id, terms in pool.levels:
            yield replace(pool, pool_id=level_id, terms=terms, levels=())


def _pool_event(
    config: Config, pool: PoolConfig, current: Pool | None, at: str
) -> PoolOpened | PoolTermsChanged | None:
    terms = pool.terms
    opened = PoolOpened(
        event_id="",
        at=at,
        pool_id=pool.pool_id,
        paytable=terms.paytable,
        seed_cents=terms.seed_cents,
        rate_of_progression=exact_decimal(terms.rate_of_progression),
        reserve_rate=exact_decimal(terms.reserve_rate),
        limit_cents=terms.limit_cents,
        by="config",
        reason=f"pool configured in {config.source}",
    )
    if terms.must_hit_by_cents is not None:  # a mystery level's only: every other text stays
        opened = msgspec.structs.replace(
            opened, must_hit_by_cents=terms.must_hit_by_cents, spill_to=terms.spill_to
        )
    if current is None:
        event_id = _event_id("pool", pool.pool_id, _settings(opened), "new")
        return msgspec.structs.replace(opened, event_id=event_id)
    target = current.pending_terms if current.pending_terms is not None else current.terms
    if target == terms:
        return None
    if terms.limit_cents is not None and terms.limit_cents < current.meter_cents:
        raise ConfigError(
            config.source,
            f"{pool.key}.limit",
            f"{format_cents(terms.limit_cents)} is below the {format_cents(current.meter_cents)} "
            f"showing on pool {pool.pool_id}'s meter",
        )
    changed = PoolTermsChanged(
        event_id="",
        at=at,
        pool_id=opened.pool_id,
        paytable=opened.paytable,
        seed_cents=opened.seed_cents,
        rate_of_progression=opened.rate_of_progression,
        reserve_rate=opened.reserve_rate,
        limit_cents=opened.limit_cents,
        by="config",
        reason=f"terms changed in {config.source}; they apply once the jackpot is won",
        apply_now=False,
        must_hit_by_cents=opened.must_hit_by_cents,
        spill_to=opened.spill_to,
    )
    replaces = f"{current.revision}/{current.pending_revision}"
    event_id = _event_id("pool", pool.pool_id, _settings(changed), replaces)
    return msgspec.structs.replace(changed, event_id=event_id)


def _table_event(
    config: Config, table: TableConfig, previous: TableConfigured | None, at: str
) -> TableConfigured:
    reason = f"table configured in {config.source}"
    if previous is not None:
        reason = f"table reconfigured in {config.source}"
    event = msgspec.structs.replace(table.event, at=at, by="config", reason=reason)
    replaces = previous.event_id if previous is not None else "new"
    event_id = _event_id("table", table.table_id, _settings(event), replaces)
    return msgspec.structs.replace(event, event_id=event_id)


def _joined(
    config: Config, wide: WideAreaProperty, state: LedgerState, at: str
) -> list[WideAreaJoined]:
    """The property's joining of central, if the ledger's link is not the file's."""
    chain = state.chain
    if chain is not None and chain.site != wide.site:
        raise ConfigError(
            config.source,
            "wide_area.site",
            f"this journal's property is site {chain.site!r} to central, not {wide.site!r}: "
            "its chain of messages is that site's",
        )
    pools = dict(wide.pools)
    if chain is not None and (chain.central_key, chain.pools) == (wide.central_key, pools):
        return []
    event = WideAreaJoined("", at, wide.site, wide.central_key, pools, CONFIGURATION)
    replaces = "new" if chain is None else f"changed/{at}"
    event_id = _event_id("wide-area", wide.site, _settings(event), replaces)
    return [msgspec.structs.replace(event, event_id=event_id)]


def _linked(wide: WideAreaCentral, state: LedgerState, at: str) -> list[SiteLinked]:
    """Central's link of each property whose key or pools are not the file's."""
    events = []
    for site in wide.sites:
        known = state.sites.get(site.site)
        if known is not None and (known.public_key, known.pools) == (site.public_key, site.pools):
            continue
        event = SiteLinked("", at, site.site, site.public_key, list(site.pools), CONFIGURATION)
        replaces = "new" if known is None else f"changed/{at}"
        event_id = _event_id("site", site.site, _settings(event), replaces)
        events.append(msgspec.structs.replace(event, event_id=event_id))
    return events


def _settings(event: E) -> E:
    """The event without what does not configure anything: its id, time, author and reason."""
    blank = msgspec.structs.replace(event, event_id="", at="", by="")
    if isinstance(blank, SiteLinked | WideAreaJoined):
        return blank  # they have no reason
    return msgspec.structs.replace(blank, reason="")


def _event_id(kind: str, subject: str, settings: AnyEvent, replaces: str) -> str:
    """``config/<kind>/<id>/<digest>``: the digest of the settings and of what they replace."""
    digest = hashlib.sha256(replaces.encode() + b"\n" + encode_event(settings)).hexdigest()
    return f"config/{kind}/{subject}/{digest[:16]}"
