"""The checker of one configuration file: single values, each refused as ``file: key: reason``.

A :class:`Checker` knows the file's name and folder (and, once ``[controller]`` is read, the
site and controller id the drivers' checks ask for: it is the
:class:`controller.plugins.SettingsChecks` they are given). Every section reader of the
configuration (the controller's, the pools', the tables', the drivers', ``[wide_area]``, a
table agent's and a sign station's file) is handed one and checks its values through it, so an
error always names the file, the key as written and the reason.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

import msgspec

from controller.config.schema import ConfigError
from controller.money import MoneyError, format_cents, parse_dollars, parse_percent

if TYPE_CHECKING:
    from collections.abc import Collection
    from fractions import Fraction

T = TypeVar("T")
_E = TypeVar("_E", bound=Enum)

CREDENTIALS: Final = "${CREDENTIALS_DIRECTORY}"
"""The prefix of a path systemd's ``LoadCredential=`` hands the service (docs/operations.md)."""
_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_DOTTED: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_FIELD: Final = re.compile(r"Object (?:contains unknown|missing required) field `([^`]+)`")


def names(items: Collection[str]) -> str:
    """Items for an error message ("none" when there are none)."""
    return ", ".join(items) or "none"


def join_key(key: str, where: str) -> str:
    """``serial[0]`` and ``url`` (or ``(file)``, or ``[1]``) as the file writes the key."""
    if where == "(file)":
        return key
    return f"{key}{where}" if where.startswith("[") else f"{key}.{where}"


def key_of(error: msgspec.ValidationError) -> tuple[str, str]:
    """Split msgspec's "reason - at `$.key`" into (key, reason), naming a missing/unknown field."""
    reason, _, where = str(error).rpartition(" - at `")
    if not reason:
        reason, where = str(error), ""
    key = where.rstrip("`").removeprefix("$").removeprefix(".")
    if found := _FIELD.search(reason):
        key = f"{key}.{found.group(1)}" if key else found.group(1)
    return key or "(file)", reason


@dataclass(frozen=True, slots=True)
class Checker:
    """One file's checks: its name and folder, and who it configures (for the drivers)."""

    source: str
    base_dir: Path
    site: str = ""
    """``[controller] site`` (a sign station's ``[sign] site``), once it is read."""
    controller_id: str = ""
    """``[controller] id`` (an agent's table id, a sign station's ``sign-<name>``)."""

    def naming(self, site: str, controller_id: str) -> Checker:
        """This file's checker, knowing the site and the id the drivers' checks use."""
        return replace(self, site=site, controller_id=controller_id)

    def fail(self, key: str, reason: str) -> ConfigError:
        """An error naming this file, the key and the reason."""
        return ConfigError(self.source, key, reason)

    def path(self, text: str) -> Path:
        """A path from the file, relative to its folder."""
        return self.base_dir / Path(text).expanduser()

    def typed(self, key: str, item: object, kind: type[T]) -> T:
        """``item``, at ``key`` in the file, as ``kind`` (unknown keys refused), or the reason."""
        try:
            return msgspec.convert(item, kind)
        except msgspec.ValidationError as error:
            where, reason = key_of(error)
            raise self.fail(join_key(key, where), reason) from error

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

    def within(self, key: str, value: float, bounds: tuple[float, float]) -> float:
        """Seconds from ``bounds[0]`` to ``bounds[1]``."""
        low, high = bounds
        if not low <= value <= high:
            raise self.fail(key, f"must be from {low:g} to {high:g} seconds, not {value:g}")
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
        """The file's path, if it exists; a ``secret`` one must be closed to other users.

        A path under ``${CREDENTIALS_DIRECTORY}`` (a systemd credential, ``LoadCredential=``)
        is expanded when that is set, as in the service; elsewhere (``jackpotd config check``
        at a shell, a manager's ``config approve``) it is kept as written, unchecked: nobody
        but the service reads it.
        """
        if text is None:
            return None
        if text.startswith(CREDENTIALS):
            folder = os.environ.get("CREDENTIALS_DIRECTORY")
            if not folder:
                return text
            path = Path(folder) / text.removeprefix(CREDENTIALS).lstrip("/")
        else:
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
