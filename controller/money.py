"""Money as integer cents and rates as exact fractions, parsed from and printed in the seeds' style.

No float ever touches a money path: amounts are ``int`` cents and rates are
:class:`fractions.Fraction`, parsed from decimal text such as ``"28%"`` or ``"0.75%"``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
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
    try:
        return Fraction(Decimal(match.group(1))) / 100
    except InvalidOperation as error:  # pragma: no cover - the pattern admits only decimals
        raise MoneyError(f"{text!r} is not a percentage") from error


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
