"""Checks of the pools and tables of a configuration, and of the paytables they name."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from controller.config.schema import (
    ControllerConfig,
    PaytableRef,
    PoolConfig,
    RawPool,
    RawTable,
    RawWagerLimits,
    TableConfig,
    Transport,
)
from controller.events import SpotLimits, TableConfigured
from controller.ledger.payout_floor import MAX_PAYOUT_FLOOR_CENTS, most_one_player_wins
from controller.ledger.pool import PoolTerms
from controller.ledger.table_rules import ODDS_WAGERS, TableRulesError, table_rules
from controller.money import format_cents, format_percent
from controller.plugins import by_section
from controller.rules.dynasty import off_profile
from controller.rules.paytable import Paytable, Wager
from controller.rules.paytable_files import SAMPLES, PaytableError, parse_paytable
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from collections.abc import Collection
    from importlib.resources.abc import Traversable

    from controller.config.schema import DriverEntry
    from controller.ledger.settlement import TableRules

from controller.config.values import _PAYTABLE_NAME, ValueChecks, names


class Context(NamedTuple):
    """What a table's checks need from the sections before it."""

    controller: ControllerConfig
    drivers: tuple[DriverEntry, ...]
    pools: dict[str, PoolConfig]
    wide_pools: frozenset[str] = frozenset()
    """At a property, the wide-area pools (central's) its tables may play."""


class TableChecks(ValueChecks):
    """Pools, tables and paytable references."""

    def pool(self, key: str, raw: RawPool, seen: dict[str, str]) -> PoolConfig:
        """One ``[[pools]]`` entry."""
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

    def table(self, key: str, raw: RawTable, seen: dict[str, str], context: Context) -> TableConfig:
        """One ``[[tables]]`` entry, with the event that configures it."""
        controller, drivers, pools, wide_pools = context
        table_id = self.identifier(f"{key}.id", raw.table_id, seen)
        transport = self.transport(f"{key}.transport", raw.transport, table_id, drivers)
        if not 1 <= raw.seats <= 9:
            raise self.fail(f"{key}.seats", f"a table has 1 to 9 seats, not {raw.seats}")
        slots = (
            ("bonus", raw.bonus, ODDS_WAGERS),
            ("ace_high", raw.ace_high, frozenset({Wager.ACE_HIGH})),
            ("insurance", raw.insurance, frozenset({Wager.INSURANCE})),
            ("progressive", raw.progressive, frozenset({Wager.PROGRESSIVE})),
            ("dynasty", raw.dynasty, frozenset({Wager.DYNASTY_BONUS})),
        )
        chosen = {
            slot: self.paytable(f"{key}.{slot}", ref, wagers)
            for slot, ref, wagers in slots
            if ref is not None
        }
        if not chosen:
            raise self.fail(
                key, "offers no side bet; set bonus, ace_high, insurance, progressive or dynasty"
            )
        bonus, ace_high, progressive = (
            chosen.get(slot) for slot in ("bonus", "ace_high", "progressive")
        )
        if bonus is not None and bonus.paytable.wager is Wager.DYNASTY_BONUS:
            raise self.fail(
                f"{key}.bonus",
                f"{bonus.name} is a Dynasty Bonus paytable: offer it on the EZ Pai Gow spot, "
                f'dynasty = "{bonus.name}"',
            )
        dynasty = chosen.get("dynasty")
        if dynasty is not None:
            self.dynasty(f"{key}.dynasty", dynasty.paytable, controller.dynasty_profile)
        self.table_pool(f"{key}.pool", raw.pool, progressive, pools, wide_pools)
        minimum = self.dollars(f"{key}.minimum_wager", raw.minimum_wager, minimum=1)
        limits = self.wager_limits(key, raw, minimum, chosen.keys())
        insurance = chosen.get("insurance")
        if raw.envy_includes_dealer:
            raise self.fail(
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
            bonus=bonus.name if bonus else None,
            ace_high=ace_high.name if ace_high else None,
            progressive=progressive.name if progressive else None,
            pool_id=raw.pool,
            envy_minimum_cents=self.dollars(f"{key}.envy_minimum", raw.envy_minimum),
            envy_includes_dealer=False,
            verification_cents=controller.verification_cents,
            tax_threshold_cents=controller.tax_threshold_cents,
            tax_wager_multiple=controller.tax_wager_multiple,
            hit_order=str(controller.hit_order),
            reason=f"configured in {self.source}",
            insurance=insurance.name if insurance else msgspec.UNSET,
            wager_limits=limits,
            dynasty=dynasty.name if dynasty else msgspec.UNSET,
            dynasty_profile=controller.dynasty_profile if dynasty else msgspec.UNSET,
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

    def wager_limits(
        self, key: str, raw: RawTable, minimum: int, offered: Collection[str]
    ) -> dict[str, SpotLimits]:
        """Each odds spot's minimum and maximum wager (docs/rules.md § 8), keyed by spot.

        ``minimum_wager`` and ``maximum_wager`` apply to every odds spot the table offers;
        ``wager_limits.<bonus|ace_high|dynasty>`` overrides either for one spot. The progressive
        spot takes its paytable's one denomination, so it has no limits to set.
        """
        maximum = self.dollars(f"{key}.maximum_wager", raw.maximum_wager, minimum=1)
        if maximum < minimum:
            raise self.fail(
                f"{key}.maximum_wager",
                f"{format_cents(maximum)} is below minimum_wager {format_cents(minimum)}",
            )
        overrides = raw.wager_limits or RawWagerLimits()
        if overrides.progressive is not None:
            raise self.fail(
                f"{key}.wager_limits.progressive",
                "the progressive wager is its paytable's one denomination; it takes no limits",
            )
        limits: dict[str, SpotLimits] = {}
        for slot, spot in (
            ("bonus", Spot.BONUS),
            ("ace_high", Spot.ACE_HIGH),
            ("insurance", Spot.INSURANCE),
            ("dynasty", Spot.DYNASTY),
        ):
            where, override = f"{key}.wager_limits.{slot}", getattr(overrides, slot)
            if slot not in offered:
                if override is not None:
                    raise self.fail(where, f"the table offers no {slot} wager")
                continue
            low, high = minimum, maximum
            if override is not None and override.minimum is not None:
                low = self.dollars(f"{where}.minimum", override.minimum, minimum=1)
            if override is not None and override.maximum is not None:
                high = self.dollars(f"{where}.maximum", override.maximum, minimum=1)
            if high < low:
                raise self.fail(
                    where,
                    f"the maximum {format_cents(high)} is below the minimum {format_cents(low)}",
                )
            limits[str(spot)] = SpotLimits(low, high)
        return limits

    def transport(
        self, key: str, text: str, table_id: str, drivers: tuple[DriverEntry, ...]
    ) -> Transport:
        """A table's transport: a driver's word, and the entry's name if entries are named.

        ``mqtt``, ``simulator``, ``serial:rail-1``: the entry must be configured, and an entry
        bound to one table (a serial line) must be bound to this one.
        """
        specs = {spec.transport: spec for spec in by_section().values() if spec.transport}
        word, colon, name = text.partition(":")
        spec = specs.get(word)
        forms = {
            each: f"'{each}:<name>'" if spec.instance else f"'{each}'"
            for each, spec in specs.items()
        }
        if spec is None:
            written = ", ".join(form for _, form in sorted(forms.items()))
            raise self.fail(key, f"{text!r} is not a transport: write {written}")
        if (spec.instance is not None) != bool(colon and name):
            raise self.fail(key, f"{text!r}: write {forms[word]}")
        entries = [entry for entry in drivers if entry.spec is spec]
        if not entries and not spec.implicit and spec.instance is None:
            raise self.fail(key, f"'{word}' needs a [{spec.section}] table")
        if spec.instance is None:
            return Transport(word)
        named = {entry.instance: entry for entry in entries}
        entry = named.get(name)
        if entry is None:
            configured = ", ".join(sorted(str(each) for each in named)) or "none"
            raise self.fail(
                key, f"no [[{spec.section}]] entry named {name!r}; configured: {configured}"
            )
        bound = spec.bound_table(entry.settings) if spec.bound_table else None
        if bound is not None and bound != table_id:
            raise self.fail(
                key, f"[[{spec.section}]] {name!r} is for table {bound!r} ({entry.key}.table_id)"
            )
        return Transport(word, name)

    def table_pool(
        self, key: str, pool_id: str | None, progressive: PaytableRef | None,
        pools: dict[str, PoolConfig], wide_pools: frozenset[str],
    ) -> None:  # fmt: skip
        """The pool a table's progressive wagers feed, paying the same paytable.

        A property's table may play a wide-area pool instead (``[wide_area] pools``): central's,
        so its paytable is central's too, and one for every table on it (checked with the
        section, controller/config/wide_area.py).
        """
        if pool_id is None and progressive is not None:
            raise self.fail(key, "a table with a progressive paytable names the pool it feeds")
        if pool_id is None:
            return
        if progressive is None:
            raise self.fail(key, "only a table with a progressive paytable feeds a pool")
        if pool_id in wide_pools and pool_id not in pools:
            return
        if (pool := pools.get(pool_id)) is None:
            known = names([*pools, *sorted(wide_pools)])
            raise self.fail(key, f"no pool {pool_id!r}; configured: {known}")
        if pool.paytable.name != progressive.name:
            raise self.fail(
                key,
                f"pool {pool_id!r} pays paytable {pool.paytable.name}, but this table's "
                f"progressive is {progressive.name}",
            )

    def dynasty(self, key: str, paytable: Paytable, profile: str) -> None:
        """A Dynasty Bonus paytable must follow the jurisdiction's profile."""
        reason = off_profile(paytable, profile)
        if reason is not None:
            raise self.fail(key, f"{reason} (controller.dynasty_profile, docs/rules.md § 5.4)")

    def rules(self, key: str, event: TableConfigured) -> TableRules:
        """The table rules of a configuration event, or the reason they are refused."""
        try:
            return table_rules(event)
        except TableRulesError as error:  # pragma: no cover - the checks above come first
            raise self.fail(key, str(error)) from error

    def paytable(self, key: str, ref: str, wagers: frozenset[Wager]) -> PaytableRef:
        """A paytable by name (``paytable_dirs``, then the seeds) or by ``.toml`` path."""
        found = self.refs.get(ref) or self.read_paytable(key, ref)
        self.refs[ref] = found
        if found.paytable.sample:
            raise self.fail(
                key,
                f"{found.name} is a sample, not a filed paytable: file your own in "
                "controller.paytable_dirs (docs/paytables.md)",
            )
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
        """A paytable by name or path, of one of the wagers a slot takes."""
        seeds = resources.files("controller") / "paytables"
        seed = seeds / f"{ref}.toml"
        if ref.endswith(".toml"):
            file: Traversable | None = self.path(ref)
        elif _PAYTABLE_NAME.match(ref):
            candidates: list[Traversable] = [d / f"{ref}.toml" for d in self.paytable_dirs]
            sample = seeds / SAMPLES / f"{ref}.toml"  # found only to be refused by name
            file = next((c for c in [*candidates, seed, sample] if c.is_file()), None)
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
            raise self.fail(key, f"cannot read {file}: {error.strerror}") from error
        except PaytableError as error:
            raise self.fail(key, str(error)) from error
        if paytable.name != file.name.removesuffix(".toml"):
            raise self.fail(key, f"{file}: name: {paytable.name!r} does not match the file name")
        return PaytableRef(paytable, text, origin)
