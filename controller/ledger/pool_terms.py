"""A pool's terms, and the refusals of a pool.

:class:`PoolTerms` is what a pool is configured with, held at construction to what any pool may
have, whether it comes from a configuration or from the journal; :class:`PoolTermsError` names
the term refused. :class:`PoolError` is the refusal of any operation on a pool
(:mod:`controller.ledger.pool`), of which a refused term is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from controller.errors import RefusedError
from controller.money import RATES_OVER_WAGER, format_percent, rates_over_wager

__all__ = ["PoolError", "PoolTerms", "PoolTermsError"]


class PoolError(RefusedError, ValueError):
    """An operation the pool must refuse (it changes nothing)."""


class PoolTermsError(PoolError):
    """Terms no pool may have: ``term`` names the field of :class:`PoolTerms` refused.

    The message is the reason the journal records (and hashes into the row) when it refuses an
    event carrying such terms, and a replay must give it again word for word (docs/journal.md),
    so it never changes; ``detail`` says the same with the figures, for a configuration's error.
    """

    def __init__(self, term: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.term = term
        self.detail = detail or message


@dataclass(frozen=True, slots=True)
class PoolTerms:
    """What a pool is configured with. Changes wait until the jackpot is won (docs/money.md).

    The rates are exact fractions of the wager, as parsed from the file's decimal percentages
    (:func:`controller.money.parse_percent`); this is the one place their sum is held to 100 %
    of the wager, whether the terms come from a configuration or from the journal.
    """

    seed_cents: int
    rate_of_progression: Fraction
    reserve_rate: Fraction = Fraction(0)
    limit_cents: int | None = None
    paytable: str = ""
    must_hit_by_cents: int | None = None
    """A mystery level's ceiling: it hits at a sealed trigger in [seed, this) (mystery_level.py)."""
    spill_to: str = ""
    """Where a mystery hit's amount past the trigger goes: the next level (its id), or the
    level's own overflow (empty)."""

    def __post_init__(self) -> None:
        if self.seed_cents < 0:
            raise PoolTermsError("seed_cents", "the seed cannot be negative")
        for term in ("rate_of_progression", "reserve_rate"):
            if getattr(self, term) < 0:
                raise PoolTermsError(term, "rates cannot be negative")
        if rates_over_wager(self.rate_of_progression, self.reserve_rate):
            raise PoolTermsError(
                "reserve_rate",
                RATES_OVER_WAGER,
                f"rate of progression {format_percent(self.rate_of_progression)} plus reserve "
                f"rate {format_percent(self.reserve_rate)} exceeds 100% of the wager",
            )
        if self.limit_cents is not None and self.limit_cents < self.seed_cents:
            raise PoolTermsError("limit_cents", "the limit cannot be below the seed")
        if self.must_hit_by_cents is not None and self.must_hit_by_cents <= self.seed_cents:
            raise PoolTermsError(
                "must_hit_by_cents", "a mystery level must hit by more than its seed"
            )
