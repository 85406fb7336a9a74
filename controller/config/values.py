"""Checks of single configuration values: ids, money, rates, paths, files, choices.

:class:`ValueChecks` is the base of the configuration loader; each check raises a
:class:`ConfigError` naming the file, the key and the reason.
"""

from __future__ import annotations

import re
import stat
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from controller.config.schema import (
    ConfigError,
    PaytableRef,
)
from controller.money import MoneyError, format_cents, parse_dollars, parse_percent

if TYPE_CHECKING:
    from collections.abc import Collection
    from fractions import Fraction


_E = TypeVar("_E", bound=Enum)
_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_DOTTED: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_PAYTABLE_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FIELD: Final = re.compile(r"Object (?:contains unknown|missing required) field `([^`]+)`")
_DYNASTY: Final = {"pa": ("pa", "pa-caption"), "nj": ("nj",)}
"""The Dynasty Bonus readings each jurisdiction allows, its default first (docs/rules.md 5.4)."""


def names(items: Collection[str]) -> str:
    """Items for an error message ("none" when there are none)."""
    return ", ".join(items) or "none"


class ValueChecks:
    """The state every check needs: the file's name and folder, and the paytables read."""

    def __init__(self, source: str, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.paytable_dirs: tuple[Path, ...] = ()
        self.refs: dict[str, PaytableRef] = {}
        self.first_use: dict[str, tuple[str, str]] = {}

    def fail(self, key: str, reason: str) -> ConfigError:
        """An error naming this file, the key and the reason."""
        return ConfigError(self.source, key, reason)

    def path(self, text: str) -> Path:
        """A path from the file, relative to its folder."""
        return self.base_dir / Path(text).expanduser()

    def choice(self, key: str, value: str, kind: type[_E]) -> _E:
        """One of an enumeration's values, or an error listing them."""
        try:
            return kind(value)
        except ValueError as error:
            choices = ", ".join(repr(option.value) for option in kind)
            raise self.fail(key, f"{value!r} is not one of {choices}") from error

    def dollars(self, key: str, text: str, *, minimum: int = 0) -> int:
        """A dollar amount in cents, at least ``minimum``."""
        try:
            cents = parse_dollars(text)
        except MoneyError as error:
            raise self.fail(key, str(error)) from error
        if cents < minimum:
            raise self.fail(key, f"must be at least {format_cents(minimum)}")
        return cents

    def percent(self, key: str, text: str) -> Fraction:
        """A percentage as an exact fraction, at most 100 % of the wager."""
        try:
            rate = parse_percent(text)
        except MoneyError as error:
            raise self.fail(key, str(error)) from error
        if rate > 1:
            raise self.fail(key, f"{text} is above 100% of the wager")
        return rate

    def identifier(self, key: str, value: str, seen: dict[str, str] | None = None) -> str:
        """An id usable in topics and journal ids, unique among ``seen``."""
        if not _ID.match(value):
            raise self.fail(
                key, f"{value!r}: use letters, digits, '-' and '_' (ids appear in MQTT topics)"
            )
        return self.unique(key, value, seen)

    def dotted_identifier(self, key: str, value: str, seen: dict[str, str] | None = None) -> str:
        """An id that may also hold dots (a host's name, a site's), unique among ``seen``."""
        if not _DOTTED.match(value):
            raise self.fail(key, f"{value!r}: use letters, digits, '.', '-' and '_' (63 at most)")
        return self.unique(key, value, seen)

    def unique(self, key: str, value: str, seen: dict[str, str] | None) -> str:
        """``value``, refused if ``seen`` holds it (naming where), then remembered there."""
        if seen is not None:
            if value in seen:
                raise self.fail(key, f"{value!r} is also {seen[value]}")
            seen[value] = key
        return value

    def positive(self, key: str, value: float) -> float:
        """A number above zero."""
        if not value > 0:
            raise self.fail(key, f"must be above 0, not {value}")
        return value

    def count(self, key: str, value: int, *, low: int = 1, high: int = 100) -> int:
        """A whole number from ``low`` to ``high``."""
        if not low <= value <= high:
            raise self.fail(key, f"must be from {low} to {high}, not {value}")
        return value

    def port(self, key: str, port: int) -> int:
        """A TCP port, 1 to 65535."""
        if not 1 <= port <= 65535:
            raise self.fail(key, f"a TCP port is 1 to 65535, not {port}")
        return port

    def existing_file(self, key: str, text: str | None, *, secret: bool = False) -> str | None:
        """The file's path, if it exists; a ``secret`` one must be closed to other users."""
        if text is None:
            return None
        path = self.path(text)
        try:
            mode = path.stat().st_mode
        except OSError as error:
            raise self.fail(key, f"cannot read {path}: {error.strerror}") from error
        if not stat.S_ISREG(mode):
            raise self.fail(key, f"{path} is not a file")
        if secret and mode & 0o007:
            raise self.fail(
                key, f"{path} is open to every user (mode {mode & 0o777:o}); chmod o-rwx it"
            )
        return str(path)

    # -- sections --------------------------------------------------------------------------------
