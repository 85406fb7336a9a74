"""Multi-level progressive paytables: the ``[[progressive.levels]]`` a file lists, checked.

A pool of several levels (grand, major, minor, mini) gives each its own meter, seed, rates and
limit; a mystery level adds a must-hit-by amount, the ceiling of its hidden trigger
(controller/mystery). One wager contributes to every level at the level's rate, so the rates'
sums are held to 100 % of the wager as one level's are. Each meter-paid row names the level it
pays from; a mystery level is won at its trigger, by no hand. docs/paytables.md, "Levels".
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Final

import msgspec

from controller.money import RATES_OVER_WAGER, rates_over_wager
from controller.rules.paytable import MAIN_LEVEL, LevelTerms, MeterPay, ProgressiveTerms
from controller.rules.paytable_values import NAME, PaytableError, cents, rate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.rules.paytable import PaytableLine


class RawLevel(msgspec.Struct, forbid_unknown_fields=True):
    """One ``[[progressive.levels]]`` entry as written."""

    level: str
    meter_seed: str
    rate_of_progression: str
    reserve_rate: str = "0%"
    limit: str | None = None
    must_hit_by: str | None = None
    past_trigger: str = "overflow"


def levelled_terms(
    source: str,
    written: Sequence[RawLevel],
    flat: Sequence[str],
    wager_cents: int,
    *,
    returned: bool,
) -> ProgressiveTerms:
    """A multi-level paytable's terms: each level's own, and their sums (docs/paytables.md).

    ``flat`` names the one-level terms the file also wrote in ``[progressive]``: refused.
    """
    for key in flat:
        raise PaytableError(source, f"progressive.{key}", "each level states its own; drop it here")
    if not written:
        raise PaytableError(source, "progressive.levels", "list at least one level")
    levels: list[LevelTerms] = []
    for index, raw in enumerate(written):
        levels.append(_level(source, f"progressive.levels[{index}]", raw, levels))
    progression = sum((level.rate_of_progression for level in levels), Fraction(0))
    reserve = sum((level.reserve_rate for level in levels), Fraction(0))
    if rates_over_wager(progression, reserve):
        raise PaytableError(source, "progressive.levels", RATES_OVER_WAGER)
    if levels[-1].spill_to_next:
        raise PaytableError(
            source,
            f"progressive.levels[{len(levels) - 1}].past_trigger",
            "the last level has no next level; write overflow",
        )
    return ProgressiveTerms(
        wager_cents=wager_cents,
        meter_seed_cents=levels[0].meter_seed_cents,
        rate_of_progression=progression,
        reserve_rate=reserve,
        original_wager_returned=returned,
        levels=tuple(levels),
    )


_PAST_TRIGGER: Final = ("overflow", "next-level")


def _level(source: str, key: str, raw: RawLevel, before: list[LevelTerms]) -> LevelTerms:
    if not NAME.match(raw.level):
        raise PaytableError(
            source, f"{key}.level", "use lowercase letters, digits and single hyphens"
        )
    if any(level.level == raw.level for level in before):
        raise PaytableError(source, f"{key}.level", f"level {raw.level!r} is listed twice")
    seed = cents(source, f"{key}.meter_seed", raw.meter_seed)
    progression = rate(source, f"{key}.rate_of_progression", raw.rate_of_progression)
    reserve = rate(source, f"{key}.reserve_rate", raw.reserve_rate)
    limit = ceiling = None
    if raw.limit is not None:
        limit = cents(source, f"{key}.limit", raw.limit)
        if limit < seed:
            raise PaytableError(source, f"{key}.limit", "the limit cannot be below the seed")
    if raw.must_hit_by is not None:
        ceiling = cents(source, f"{key}.must_hit_by", raw.must_hit_by)
        if ceiling <= seed:
            raise PaytableError(
                source, f"{key}.must_hit_by", "a mystery level must hit by more than its seed"
            )
        if limit is not None:
            raise PaytableError(
                source, f"{key}.limit", "a mystery level's limit is its must-hit-by amount"
            )
    if raw.past_trigger not in _PAST_TRIGGER:
        raise PaytableError(
            source, f"{key}.past_trigger", f"{raw.past_trigger!r}: overflow or next-level"
        )
    if raw.past_trigger != "overflow" and ceiling is None:
        raise PaytableError(source, f"{key}.past_trigger", "only a mystery level has a trigger")
    if progression == 0:
        raise PaytableError(
            source, f"{key}.rate_of_progression", "a level's meter must rise with play"
        )
    return LevelTerms(
        raw.level,
        seed,
        progression,
        reserve,
        limit_cents=limit,
        must_hit_by_cents=ceiling,
        spill_to_next=raw.past_trigger == "next-level",
    )


def check_levels(source: str, rows: list[PaytableLine], terms: ProgressiveTerms) -> None:
    """Each meter pay names a level that hands win; a fixed pay names none (the house pays)."""
    for index, row in enumerate(rows):
        key = f"lines[{index}].level"
        meter_paid = isinstance(row.pays, MeterPay)
        if not terms.levels:
            if row.level != MAIN_LEVEL:
                raise PaytableError(source, key, "this paytable lists no levels")
            continue
        if not meter_paid:
            if row.level != MAIN_LEVEL:
                raise PaytableError(source, key, "a fixed pay is the house's, from no level")
            continue
        level = terms.level(row.level)
        if level is None:
            known = ", ".join(level.level for level in terms.levels)
            raise PaytableError(source, key, f"name the level it pays from; one of {known}")
        if level.mystery:
            raise PaytableError(
                source, key, f"{row.level} is a mystery level: it hits at its trigger, no hand"
            )
