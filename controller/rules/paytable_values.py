"""What every part of a paytable file's loader shares: its error, and amounts and rates read.

Each value keeps the seed's own words in the file (``"$10,000"``, ``"28%"``); these read them
and name the file and key of a value they refuse.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from controller.errors import ConfigurationError
from controller.money import MoneyError, parse_dollars, parse_percent

if TYPE_CHECKING:
    from fractions import Fraction

NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
"""A paytable's or a level's name: lowercase letters, digits and single hyphens."""


class PaytableError(ConfigurationError, ValueError):
    """A paytable file that cannot be loaded; the message names file, key and reason."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        super().__init__(f"{source}: {key}: {reason}")
        self.source = source
        self.key = key
        self.reason = reason


def cents(source: str, key: str, text: str) -> int:
    """An amount above $0, in the file's words."""
    try:
        amount = parse_dollars(text)
    except MoneyError as error:
        raise PaytableError(source, key, str(error)) from error
    if amount == 0:
        raise PaytableError(source, key, "must be above $0")
    return amount


def rate(source: str, key: str, text: str) -> Fraction:
    """A rate of the wager, in the file's words (``"28%"``)."""
    try:
        return parse_percent(text)
    except MoneyError as error:
        raise PaytableError(source, key, str(error)) from error
