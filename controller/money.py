"""Money as integer cents and rates as exact fractions, parsed from and printed in the seeds' style.

No float ever touches a money path: amounts are ``int`` cents and rates are
:class:`fractions.Fraction`, parsed from decimal text such as ``"28%"`` or ``"0.75%"``. A rate
keeps that one form from the file to the pool's money (docs/money.md, "Rates are exact
decimals"): parsed here, held by the ledger's ``PoolTerms``, written as a percentage for people
(:func:`format_percent`) and as the exact decimal the journal's pool events carry
(:func:`exact_decimal`), which the ledger reads back as the same fraction.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Final

from controller.errors import InputError

_DOLLARS: Final = re.compile(r"^\$(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{2}))?$")
_PERCENT: Final = re.compile(r"^(\d+(?:\.\d+)?)\s*%$")


class MoneyError(InputError, ValueError):
    """Text that is not an amount of money or a rate."""


def parse_dollars(text: str) -> int:
    """``"$5,000"`` or ``"$1.50"`` to integer cents."""
    match = _DOLLARS.match(text.strip())
    if match is None:
        raise MoneyError(f"{text!r} is not a dollar amount like $5,000 or $1.50")
    whole, cents = match.groups()
    return int(whole.replace(",", "")) * 100 + int(cents or 0)


def parse_percent(text: str) -> Fraction:
    """``"28%"`` or ``"0.75%"`` to an exact fraction (0.28, 3/400)."""
    match = _PERCENT.match(text.strip())
    if match is None:
        raise MoneyError(f"{text!r} is not a percentage like 28% or 0.75%")
    return Fraction(match.group(1)) / 100  # Fraction reads decimal text exactly


RATES_OVER_WAGER: Final = "rate of progression plus reserve rate exceeds 100% of the wager"
"""The refusal of a pool's rates that take more than the wager (journaled word for word)."""


def rates_over_wager(progression: Fraction, reserve: Fraction) -> bool:
    """Whether a pool's rates of progression and reserve together take more than the wager.

    The one rule, read by a paytable file's terms and a pool's (controller/ledger/pool.py),
    each refusing in its own layer's error with :data:`RATES_OVER_WAGER`.
    """
    return progression + reserve > 1


def format_cents(cents: int, *, always_cents: bool = True) -> str:
    """Integer cents as ``$12,345.67`` (or ``$12,345`` for whole dollars when asked)."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    if rest or always_cents:
        return f"{sign}${dollars:,}.{rest:02d}"
    return f"{sign}${dollars:,}"


def format_percent(rate: Fraction) -> str:
    """An exact rate as the shortest decimal percentage (``28%``, ``0.75%``)."""
    percent = rate * 100
    if percent.denominator == 1:
        return f"{percent.numerator}%"
    text = f"{Decimal(percent.numerator) / Decimal(percent.denominator):f}".rstrip("0")
    return f"{text}%"


def exact_decimal(rate: Fraction) -> Decimal:
    """A rate parsed from decimal text, back as the exact decimal the journal's events carry."""
    scale = 0
    while (10**scale) % rate.denominator:
        scale += 1
        if scale > 40:
            raise ValueError(f"{rate} has no exact decimal form")
    return Decimal(rate.numerator * 10**scale // rate.denominator).scaleb(-scale)
