"""Drivers by name, from one table; third parties add theirs through an entry-point group.

The configuration picks a driver by name; installed packages add drivers through the
``jackpotd.drivers`` entry-point group, as python-can does.

A driver factory takes the driver's configuration section (typed by the driver) and returns a
:class:`controller.ports.Source` or :class:`controller.ports.Sink`.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, Final

from controller.errors import ConfigurationError

ENTRY_POINT_GROUP: Final = "jackpotd.drivers"

BUILTIN: Final[dict[str, str]] = {}
"""Driver name -> ``module:attribute`` of its factory, for the drivers shipped here."""


class UnknownDriverError(ConfigurationError, LookupError):
    """No driver of that name is built in or installed."""


def register_builtin(name: str, target: str) -> None:
    """Declare a built-in driver (used by the driver packages at import)."""
    BUILTIN[name] = target


def available() -> dict[str, str]:
    """Every driver name and where its factory lives: built-ins, then installed plug-ins."""
    drivers = dict(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        drivers.setdefault(entry.name, entry.value)
    return drivers


def load(name: str) -> Any:  # noqa: ANN401 - a factory's type is the driver's own business
    """The factory of a driver, by name."""
    drivers = available()
    try:
        target = drivers[name]
    except KeyError as error:
        known = ", ".join(sorted(drivers)) or "none"
        raise UnknownDriverError(f"no driver named {name!r}; known: {known}") from error
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)
