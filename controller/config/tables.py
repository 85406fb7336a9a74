"""The ``[[tables]]`` section: each table's transport, side bets, pool, limits and rules.

:func:`read_tables` checks every entry through the file's
:class:`~controller.config.values.Checker`, finds the paytables its slots name through the
file's :class:`~controller.config.paytables.Paytables`, and builds the ``table-configured``
event that configures the table in the ledger (its ``event_id`` and ``at`` blank until
:mod:`controller.config.changes` journals it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import msgspec

from controller.config.schema import (
    ControllerConfig,
    PoolConfig,
    RawWagerLimits,
    TableConfig,
    Transport,
)
from controller.config.values import names
from controller.events import SpotLimits, TableConfigured
from controller.ledger.payout_floor import MAX_PAYOUT_FLOOR_CENTS, most_one_player_wins
from controller.ledger.table_rules import TableRulesError, table_rules
from controller.money import format_cents
from controller.plugins import by_section
from controller.rules.dynasty import off_profile
from controller.rules.paytable import Paytable, Wager
from controller.rules.spots import Spot, by_key, spec_of, spots

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from controller.config.paytables import Paytables
    from controller.config.schema import (
        DriverEntry,
        PaytableRef,
        RawSideBet,
        RawSpotLimits,
        RawTable,
    )
    from controller.config.values import Checker
    from controller.ledger.settlement import TableRules


class Context(NamedTuple):
    """What a table's checks need from the sections before it."""

    controller: ControllerConfig
    drivers: tuple[DriverEntry, ...]
    pools: dict[str, PoolConfig]
    wide_pools: frozenset[str] = frozenset()
    """At a property, the wide-area pools (central's) its tables may play."""


def read_tables(
    checks: Checker, paytables: Paytables, written: Sequence[RawTable], context: Context
) -> tuple[TableConfig, ...]:
    """Every ``[[tables]]`` entry, ids unique."""
    seen: dict[str, str] = {}
    tables = []
    for index, entry in enumerate(written):
        key = f"tables[{index}]"
        checks.identifier(f"{key}.id", entry.table_id, seen)
        tables.append(_table(checks, paytables, key, entry, context))
    return tuple(tables)


def _table(
    checks: Checker, paytables: Paytables, key: str, raw: RawTable, context: Context
) -> TableConfig:
    """One ``[[tables]]`` entry, with the event that configures it."""
    controller, drivers = context.controller, context.drivers
    table_id = raw.table_id
    transport = _transport(checks, f"{key}.transport", raw.transport, table_id, drivers)
    if not 1 <= raw.seats <= 9:
        raise checks.fail(f"{key}.seats", f"a table has 1 to 9 seats, not {raw.seats}")
    chosen = {
        spot: paytables.find(where, ref, spec_of(spot).wagers)
        for spot, (where, ref) in _written(checks, key, raw).items()
    }
    if not chosen:
        raise checks.fail(key, f"offers no side bet; set {_keys()}")
    bonus, progressive = chosen.get(Spot.BONUS), chosen.get(Spot.PROGRESSIVE)
    if bonus is not None and bonus.paytable.wager is Wager.DYNASTY_BONUS:
        raise checks.fail(
            f"{key}.bonus",
            f"{bonus.name} is a Dynasty Bonus paytable: offer it on the EZ Pai Gow spot, "
            f'dynasty = "{bonus.name}"',
        )
    dynasty = chosen.get(Spot.DYNASTY)
    if dynasty is not None:
        _dynasty(checks, f"{key}.dynasty", dynasty.paytable, controller.dynasty_profile)
    _table_pool(checks, f"{key}.pool", raw.pool, progressive, context)
    minimum = checks.dollars(f"{key}.minimum_wager", raw.minimum_wager, minimum=1)
    limits = _wager_limits(checks, key, raw, minimum, chosen.keys())
    if raw.envy_includes_dealer:
        raise checks.fail(
            f"{key}.envy_includes_dealer",
            "the Envy Bonus is paid for another player's hand, never the dealer's "
            "(58 Pa. Code § 688a.1; docs/rules.md § 9); remove the key",
        )
    event = TableConfigured(
        event_id="",
        at="",
        table_id=table_id,
        paytables={ref.name: ref.text for ref in chosen.values()},
        seats=raw.seats,
        minimum_wager_cents=minimum,
        pool_id=raw.pool,
        envy_minimum_cents=checks.dollars(f"{key}.envy_minimum", raw.envy_minimum),
        envy_includes_dealer=False,
        verification_cents=controller.verification_cents,
        tax_threshold_cents=controller.tax_threshold_cents,
        tax_wager_multiple=controller.tax_wager_multiple,
        hit_order=str(controller.hit_order),
        reason=f"configured in {checks.source}",
        wager_limits=limits,
        dynasty_profile=controller.dynasty_profile if dynasty else msgspec.UNSET,
    )
    event = _offering(event, chosen)
    rules = _rules(checks, key, event)
    if raw.max_payout is not None:
        cap = checks.dollars(f"{key}.max_payout", raw.max_payout)
        most = most_one_player_wins(rules, event.minimum_wager_cents)
        if cap < (floor := max(MAX_PAYOUT_FLOOR_CENTS, most)):
            raise checks.fail(
                f"{key}.max_payout",
                f"{format_cents(cap)} is below the § 688a.12(e) floor of {format_cents(floor)} "
                "($50,000 or the most one player can win in a round betting the minimum, "
                "whichever is greater)",
            )
        event = msgspec.structs.replace(event, max_payout_cents=cap)
        rules = _rules(checks, key, event)
    heartbeat = raw.heartbeat_timeout_s or controller.heartbeat_timeout_s
    if raw.heartbeat_timeout_s is not None:
        heartbeat = checks.positive(f"{key}.heartbeat_timeout_s", raw.heartbeat_timeout_s)
    return TableConfig(table_id, transport, tuple(chosen.values()), event, rules, heartbeat, key)


def _written(checks: Checker, key: str, raw: RawTable) -> dict[Spot, tuple[str, str]]:
    """Each spot the entry offers, in the registry's order: where its paytable is, and its name.

    A spot with a key of its own is written under that key (``bonus = ...``); any other under
    ``side_bets.<key>`` (controller/rules/spots.py).
    """
    for written in raw.side_bets:
        spot = by_key(written)
        if spot is None or spec_of(spot).own_field:
            where = f"{key}.side_bets.{written}"
            raise checks.fail(where, f"no side bet {written!r}; registered: {_side_bet_keys()}")
    found: dict[Spot, tuple[str, str]] = {}
    for spot in spots():
        spec = spec_of(spot)
        if spec.own_field:
            ref: str | None = getattr(raw, spec.key)
            if ref is not None:
                found[spot] = (f"{key}.{spec.key}", ref)
        elif (side_bet := raw.side_bets.get(spec.key)) is not None:
            found[spot] = (f"{key}.side_bets.{spec.key}.paytable", side_bet.paytable)
    return found


def _keys() -> str:
    """The keys a table offers its side bets under: "bonus, ace_high, ... or dynasty"."""
    specs = [spec_of(spot) for spot in spots()]
    keys = [spec.key if spec.own_field else f"side_bets.{spec.key}" for spec in specs]
    return f"{', '.join(keys[:-1])} or {keys[-1]}"


def _side_bet_keys() -> str:
    return names([spec.key for spec in map(spec_of, spots()) if not spec.own_field])


def _offering(event: TableConfigured, chosen: dict[Spot, PaytableRef]) -> TableConfigured:
    """The event with each chosen spot's paytable under its key, or in ``side_bets``."""
    fields: dict[str, object] = {}
    side_bets: dict[str, str] = {}
    for spot, ref in chosen.items():
        spec = spec_of(spot)
        if spec.own_field:
            fields[spec.key] = ref.name
        else:
            side_bets[spot] = ref.name
    if side_bets:
        fields["side_bets"] = side_bets
    return msgspec.structs.replace(event, **fields)


def _override(raw: RawTable, spot: Spot) -> tuple[str, RawSpotLimits | RawSideBet | None]:
    """Where a spot's limits are overridden, and the override written there (or None)."""
    spec = spec_of(spot)
    if not spec.own_field:
        return f"side_bets.{spec.key}", raw.side_bets.get(spec.key)
    overrides = raw.wager_limits or RawWagerLimits()
    override: RawSpotLimits | None = getattr(overrides, spec.key)
    return f"wager_limits.{spec.key}", override


def _wager_limits(
    checks: Checker, key: str, raw: RawTable, minimum: int, offered: Collection[Spot]
) -> dict[str, SpotLimits]:
    """Each odds spot's minimum and maximum wager (docs/rules.md § 8), keyed by spot.

    ``minimum_wager`` and ``maximum_wager`` apply to every odds spot the table offers;
    ``wager_limits.<bonus|ace_high|insurance|dynasty>`` overrides either for one spot (and
    ``side_bets.<key>`` for a spot written there). The progressive spot takes its paytable's
    one denomination, so it has no limits to set.
    """
    maximum = checks.dollars(f"{key}.maximum_wager", raw.maximum_wager, minimum=1)
    if maximum < minimum:
        raise checks.fail(
            f"{key}.maximum_wager",
            f"{format_cents(maximum)} is below minimum_wager {format_cents(minimum)}",
        )
    overrides = raw.wager_limits or RawWagerLimits()
    if overrides.progressive is not None:
        raise checks.fail(
            f"{key}.wager_limits.progressive",
            "the progressive wager is its paytable's one denomination; it takes no limits",
        )
    limits: dict[str, SpotLimits] = {}
    for spot in spots():
        if not spec_of(spot).odds:
            continue
        slot, override = _override(raw, spot)
        where = f"{key}.{slot}"
        if spot not in offered:
            if override is not None:
                raise checks.fail(where, f"the table offers no {spec_of(spot).key} wager")
            continue
        low, high = minimum, maximum
        if override is not None and override.minimum is not None:
            low = checks.dollars(f"{where}.minimum", override.minimum, minimum=1)
        if override is not None and override.maximum is not None:
            high = checks.dollars(f"{where}.maximum", override.maximum, minimum=1)
        if high < low:
            raise checks.fail(
                where,
                f"the maximum {format_cents(high)} is below the minimum {format_cents(low)}",
            )
        limits[str(spot)] = SpotLimits(low, high)
    return limits


def _transport(
    checks: Checker, key: str, text: str, table_id: str, drivers: tuple[DriverEntry, ...]
) -> Transport:
    """A table's transport: a driver's word, and the entry's name if entries are named.

    ``mqtt``, ``simulator``, ``serial:rail-1``: the entry must be configured, and an entry
    bound to one table (a serial line) must be bound to this one.
    """
    specs = {spec.transport: spec for spec in by_section().values() if spec.transport}
    word, colon, name = text.partition(":")
    spec = specs.get(word)
    forms = {
        each: f"'{each}:<name>'" if spec.instance else f"'{each}'" for each, spec in specs.items()
    }
    if spec is None:
        written = ", ".join(form for _, form in sorted(forms.items()))
        raise checks.fail(key, f"{text!r} is not a transport: write {written}")
    if (spec.instance is not None) != bool(colon and name):
        raise checks.fail(key, f"{text!r}: write {forms[word]}")
    entries = [entry for entry in drivers if entry.spec is spec]
    if not entries and not spec.implicit and spec.instance is None:
        raise checks.fail(key, f"'{word}' needs a [{spec.section}] table")
    if spec.instance is None:
        return Transport(word)
    named = {entry.instance: entry for entry in entries}
    entry = named.get(name)
    if entry is None:
        configured = ", ".join(sorted(str(each) for each in named)) or "none"
        raise checks.fail(
            key, f"no [[{spec.section}]] entry named {name!r}; configured: {configured}"
        )
    bound = spec.bound_table(entry.settings) if spec.bound_table else None
    if bound is not None and bound != table_id:
        raise checks.fail(
            key, f"[[{spec.section}]] {name!r} is for table {bound!r} ({entry.key}.table_id)"
        )
    return Transport(word, name)


def _table_pool(
    checks: Checker,
    key: str,
    pool_id: str | None,
    progressive: PaytableRef | None,
    context: Context,
) -> None:
    """The pool a table's progressive wagers feed, paying the same paytable.

    A property's table may play a wide-area pool instead (``[wide_area] pools``): central's,
    so its paytable is central's too, and one for every table on it (checked with the
    section, controller/config/wide_area.py).
    """
    pools, wide_pools = context.pools, context.wide_pools
    if pool_id is None and progressive is not None:
        raise checks.fail(key, "a table with a progressive paytable names the pool it feeds")
    if pool_id is None:
        return
    if progressive is None:
        raise checks.fail(key, "only a table with a progressive paytable feeds a pool")
    if pool_id in wide_pools and pool_id not in pools:
        return
    if (pool := pools.get(pool_id)) is None:
        known = names([*pools, *sorted(wide_pools)])
        raise checks.fail(key, f"no pool {pool_id!r}; configured: {known}")
    if pool.paytable.name != progressive.name:
        raise checks.fail(
            key,
            f"pool {pool_id!r} pays paytable {pool.paytable.name}, but this table's "
            f"progressive is {progressive.name}",
        )


def _dynasty(checks: Checker, key: str, paytable: Paytable, profile: str) -> None:
    """A Dynasty Bonus paytable must follow the jurisdiction's profile."""
    reason = off_profile(paytable, profile)
    if reason is not None:
        raise checks.fail(key, f"{reason} (controller.dynasty_profile, docs/rules.md § 5.4)")


def _rules(checks: Checker, key: str, event: TableConfigured) -> TableRules:
    """The table rules of a configuration event, or the reason they are refused."""
    try:
        return table_rules(event)
    except TableRulesError as error:  # pragma: no cover - the checks above come first
        raise checks.fail(key, str(error)) from error
