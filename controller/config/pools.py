"""The ``[[pools]]`` section: each pool's progressive paytable and the terms it runs on.

A pool takes its seed and rates from its paytable's ``[progressive]`` terms unless the file
overrides them. The terms are the ledger's :class:`controller.ledger.pool.PoolTerms`, built
here once: it holds what no pool may have (rates above 100 % of the wager together), and its
refusal is reported at the key the file wrote, as every configuration error is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from controller.config.schema import PoolConfig
from controller.ledger.levels import level_pool_id
from controller.ledger.pool import PoolTerms, PoolTermsError
from controller.money import format_cents
from controller.rules.paytable import Wager

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.config.paytables import Paytables
    from controller.config.schema import PaytableRef, RawPool
    from controller.config.values import Checker

_KEYS: Final = {"seed_cents": "seed", "limit_cents": "limit"}
"""A term's key in ``[[pools]]``, where it is not the term's own name."""


def read_pools(
    checks: Checker, paytables: Paytables, written: Sequence[RawPool]
) -> dict[str, PoolConfig]:
    """Every ``[[pools]]`` entry by its id (ids unique)."""
    seen: dict[str, str] = {}
    pools = (
        read_pool(checks, paytables, f"pools[{i}]", raw, seen) for i, raw in enumerate(written)
    )
    return {pool.pool_id: pool for pool in pools}


def read_pool(
    checks: Checker, paytables: Paytables, key: str, raw: RawPool, seen: dict[str, str]
) -> PoolConfig:
    """One ``[[pools]]`` entry."""
    checks.identifier(f"{key}.id", raw.pool_id, seen)
    found = paytables.find(f"{key}.paytable", raw.paytable, frozenset({Wager.PROGRESSIVE}))
    terms = found.paytable.progressive
    if terms is None:  # pragma: no cover - the loader requires terms of a progressive
        raise checks.fail(f"{key}.paytable", f"{found.name} has no [progressive] terms")
    if terms.levels:
        return _levelled(checks, key, raw, found)
    seed = terms.meter_seed_cents
    if raw.seed is not None:
        seed = checks.dollars(f"{key}.seed", raw.seed, minimum=1)
    progression, reserve = terms.rate_of_progression, terms.reserve_rate
    if raw.rate_of_progression is not None:
        progression = checks.percent(f"{key}.rate_of_progression", raw.rate_of_progression)
    if raw.reserve_rate is not None:
        reserve = checks.percent(f"{key}.reserve_rate", raw.reserve_rate)
    try:
        pool_terms = PoolTerms(seed, progression, reserve, paytable=found.name)
    except PoolTermsError as error:
        raise checks.fail(f"{key}.{_KEYS.get(error.term, error.term)}", error.detail) from error
    if raw.limit is not None:  # after the rates, as the file's keys have always been checked
        limit = checks.dollars(f"{key}.limit", raw.limit)
        if limit < seed:
            raise checks.fail(
                f"{key}.limit", f"{format_cents(limit)} is below the seed of {format_cents(seed)}"
            )
        pool_terms = replace(pool_terms, limit_cents=limit)
    return PoolConfig(raw.pool_id, found, pool_terms, key)


def _levelled(checks: Checker, key: str, raw: RawPool, found: PaytableRef) -> PoolConfig:
    """A pool on a multi-level paytable: each level's terms are its paytable's own."""
    for term in ("seed", "rate_of_progression", "reserve_rate", "limit"):
        if getattr(raw, term) is not None:
            raise checks.fail(
                f"{key}.{term}",
                f"{found.name} lists levels, each with its own terms: set them in the paytable",
            )
    levels: list[tuple[str, PoolTerms]] = []
    written = found.paytable.levels
    for index, level in enumerate(written):
        terms = PoolTerms(
            level.meter_seed_cents,
            level.rate_of_progression,
            level.reserve_rate,
            level.limit_cents,
            paytable=found.name,
            must_hit_by_cents=level.must_hit_by_cents,
            spill_to=level_pool_id(raw.pool_id, written[index + 1].level)
            if level.spill_to_next
            else "",
        )
        levels.append((level_pool_id(raw.pool_id, level.level), terms))
    return PoolConfig(raw.pool_id, found, levels[0][1], key, tuple(levels))
