"""The journal events that bring the ledger in line with the configuration at start-up.

:func:`config_events` compares a :class:`controller.config.load.Config` with the ledger's state and
returns only what differs, in an order the ledger accepts (pools before the tables that feed
them):

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
  A pool the configuration no longer names keeps its meter: that money is still owed.

Who and why (``by``, ``reason``) do not count as a difference. Event ids are derived from the
content and from what they replace, so starting twice with one configuration journals nothing
new, and a configuration changed and then changed back is journaled both times.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import TYPE_CHECKING, Final

import msgspec

from controller.config.load import ConfigError
from controller.events import (
    AnyEvent,
    PoolOpened,
    PoolTermsChanged,
    TableConfigured,
    TableStatusChanged,
    encode_event,
)
from controller.money import format_cents

if TYPE_CHECKING:
    from fractions import Fraction

    from controller.config.load import Config, PoolConfig, TableConfig
    from controller.ledger.apply import LedgerState
    from controller.ledger.pool import Pool

REMOVED: Final = "removed from the configuration"


def config_events(config: Config, state: LedgerState, at: str) -> list[AnyEvent]:
    """The events to journal at ``at`` so that the ledger runs ``config``; empty if it does."""
    events: list[AnyEvent] = [
        event
        for pool in config.pools
        if (event := _pool_event(config, pool, state.pools.get(pool.pool_id), at)) is not None
    ]
    for table in config.tables:
        previous = state.table_events.get(table.table_id)
        if previous is None or _settings(previous) != _settings(table.event):
            events.append(_table_event(config, table, previous, at))
    configured = {table.table_id for table in config.tables}
    for table_id in sorted(state.table_events.keys() - configured):
        live = state.table_states.get(table_id)
        if live is None or live.online:
            # Only an open table is closed, so the id (the start-up's time) is never reused.
            event_id = f"config/{table_id}/removed/{at}"
            events.append(TableStatusChanged(event_id, at, table_id, online=False, reason=REMOVED))
    return events


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
    if current is None:
        return msgspec.structs.replace(opened, event_id=_event_id("pool", opened, "new"))
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
    )
    replaces = f"{current.revision}/{current.pending_revision}"
    return msgspec.structs.replace(changed, event_id=_event_id("pool", changed, replaces))


def _table_event(
    config: Config, table: TableConfig, previous: TableConfigured | None, at: str
) -> TableConfigured:
    reason = f"table configured in {config.source}"
    if previous is not None:
        reason = f"table reconfigured in {config.source}"
    event = msgspec.structs.replace(table.event, at=at, by="config", reason=reason)
    replaces = previous.event_id if previous is not None else "new"
    return msgspec.structs.replace(event, event_id=_event_id("table", event, replaces))


def _settings(event: TableConfigured) -> TableConfigured:
    """The event without what does not configure anything: its id, time, author and reason."""
    return msgspec.structs.replace(event, event_id="", at="", by="", reason="")


def _event_id(
    kind: str, event: PoolOpened | PoolTermsChanged | TableConfigured, replaces: str
) -> str:
    """``config/<kind>/<id>/<digest>``: the digest of the settings and of what they replace."""
    subject = event.table_id if isinstance(event, TableConfigured) else event.pool_id
    blank = msgspec.structs.replace(event, event_id="", at="", by="", reason="")
    digest = hashlib.sha256(replaces.encode() + b"\n" + encode_event(blank)).hexdigest()
    return f"config/{kind}/{subject}/{digest[:16]}"


def exact_decimal(rate: Fraction) -> Decimal:
    """A rate parsed from decimal text, back as the exact decimal the events carry."""
    scale = 0
    while (10**scale) % rate.denominator:
        scale += 1
        if scale > 40:
            raise ValueError(f"{rate} has no exact decimal form")
    return Decimal(rate.numerator * 10**scale // rate.denominator).scaleb(-scale)
