"""The places on the layout: the seats, the dealer's, and the wager spots in front of a seat.

Devices name them (a bet sensor reports a spot), paytables are filed per spot, and the ledger
settles per spot; they belong to the rules of the game, not to any one of those.

Every spot is registered here once, as a :class:`SpotSpec`: its name (on the wire, in wagers,
payout ids and the journaled ``wager_limits``), its key in a table's configuration, the
paytables it takes, how its wager is paid (:mod:`controller.rules.spot_pays`) and whether it
qualifies for Envy. The configuration, the ``table-configured`` event, the drivers' vocabulary
and the ledger's table rules iterate the registry in its order, which is the order the
configuration has always written the spots in (so events encode as they always did). A new
side bet is one entry below, its paytable's wager kind (controller/rules/paytable.py), its
paytables and its documentation (docs/architecture.md, "Spots").

:class:`Spot` is the spot's name, the enumeration the journal's codec and the drivers decode.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from controller.rules.paytable import Wager
from controller.rules.spot_pays import AGAINST_DEALER, OWN_HAND

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.rules.spot_pays import OddsPays

DEALER_SEAT: Final = 0
"""The dealer's seat number; player seats are numbered from 1 (docs/rules.md)."""

_NAME: Final = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
"""A spot's name: it is a field of a serial frame and a part of payout ids (no ``,`` or ``/``)."""
_KEY: Final = re.compile(r"[a-z][a-z0-9_]*")
"""A spot's configuration key: a bare TOML key and a Python identifier."""


@dataclass(frozen=True, slots=True)
class SpotSpec:
    """One spot: what names it, what it takes and how it is paid."""

    name: str
    """As devices, wagers, payouts and the journaled ``wager_limits`` name it (``ace-high``)."""
    key: str
    """Its key in a table's configuration (``ace_high``), ``wager_limits.<key>`` too."""
    title: str
    """As a refusal names its wagers: "takes no Ace High wagers"."""
    wagers: frozenset[Wager]
    """The paytables it takes, by their ``wager``."""
    pays: OddsPays | None
    """How an odds wager is paid; None for the progressive spot, paid from its pool's meter
    and taking its paytable's one denomination (so it has no wager limits)."""
    envy: bool = False
    """A wager on it qualifies for the Envy Bonus of its paytable (58 Pa. Code § 688a.1)."""
    own_field: bool = False
    """Its paytable is a field of its own, ``key``, of the table's configuration entry, the
    ``table-configured`` event and the table rules: the spots that predate this registry, whose
    events must encode as they always did. Any other spot is written under the table's
    ``side_bets`` and journaled in ``TableConfigured.side_bets``."""

    @property
    def odds(self) -> bool:
        """Whether it is an odds wager, with a minimum and a maximum of its own."""
        return self.pays is not None


class Spot(StrEnum):
    """A spot by its name: those below, and any registered since (:func:`register`).

    A spot registered after these is an enumeration's pseudo-member, made once by
    :meth:`_missing_` (as :class:`enum.Flag` makes its combinations): ``Spot("lucky-7s")`` and
    msgspec's decoders find it, it compares, sorts, prints and encodes by its name like these,
    but iterating the class gives these five only; :func:`spots` gives them all.
    """

    BONUS = "bonus"
    ACE_HIGH = "ace-high"
    INSURANCE = "insurance"
    """The NJ insurance wager on the seat's own hand (N.J.A.C. 13:69F-11.2(h), 11.15)."""
    PROGRESSIVE = "progressive"
    DYNASTY = "dynasty"
    """The EZ Pai Gow Dynasty Bonus (N.J.A.C. 13:69F-11(i); 58 Pa. Code § 645a.6(g))."""

    @classmethod
    def _missing_(cls, value: object) -> Spot | None:
        return _REGISTERED.get(value) if isinstance(value, str) else None


_SPECS: dict[str, SpotSpec] = {}
"""Every registered spot's spec by its name, in the registry's order."""
_REGISTERED: dict[str, Spot] = {}
"""The spots registered beyond the enumeration's own members."""


def spots() -> tuple[Spot, ...]:
    """Every registered spot, in the registry's order."""
    return tuple(Spot(name) for name in _SPECS)


def spec_of(spot: Spot) -> SpotSpec:
    """Everything registered about a spot."""
    return _SPECS[spot.value]


def register(spec: SpotSpec) -> Spot:
    """Add a spot to the registry, after those registered before it; its :class:`Spot`."""
    if not _NAME.fullmatch(spec.name):
        raise ValueError(f"{spec.name!r}: a spot's name is lowercase words joined by '-'")
    if not _KEY.fullmatch(spec.key):
        raise ValueError(f"{spec.key!r}: a spot's key is lowercase words joined by '_'")
    for other in _SPECS.values():
        if spec.name == other.name or spec.key == other.key:
            raise ValueError(f"{spec.name!r} ({spec.key}): the spot {other.name!r} is registered")
    if spec.name not in Spot._value2member_map_:
        spot = str.__new__(Spot, spec.name)
        spot._name_, spot._value_ = spec.key.upper(), spec.name
        _REGISTERED[spec.name] = spot
    _SPECS[spec.name] = spec
    return Spot(spec.name)


@contextmanager
def registered(spec: SpotSpec) -> Iterator[Spot]:
    """A spot registered for the time of a ``with`` block (a test's side bet), then withdrawn."""
    spot = register(spec)
    try:
        yield spot
    finally:
        del _SPECS[spec.name]
        _REGISTERED.pop(spec.name, None)


def by_key(key: str) -> Spot | None:
    """The spot with a configuration key, or None."""
    return next((spot for spot in spots() if spec_of(spot).key == key), None)


ODDS_WAGERS: Final = frozenset({Wager.FORTUNE_BONUS, Wager.EMPERORS_TREASURE, Wager.DYNASTY_BONUS})
"""What the bonus spot takes (a Dynasty Bonus paytable only to be refused with the key to use)."""

register(SpotSpec("bonus", "bonus", "bonus", ODDS_WAGERS, OWN_HAND, envy=True, own_field=True))
register(
    SpotSpec(
        "ace-high",
        "ace_high",
        "Ace High",
        frozenset({Wager.ACE_HIGH}),
        AGAINST_DEALER,
        own_field=True,
    )
)
register(
    SpotSpec(
        "insurance",
        "insurance",
        "insurance",
        frozenset({Wager.INSURANCE}),
        OWN_HAND,
        own_field=True,
    )
)
register(
    SpotSpec(
        "progressive",
        "progressive",
        "progressive",
        frozenset({Wager.PROGRESSIVE}),
        None,
        envy=True,
        own_field=True,
    )
)
register(
    SpotSpec(
        "dynasty",
        "dynasty",
        "dynasty",
        frozenset({Wager.DYNASTY_BONUS}),
        OWN_HAND,
        envy=True,
        own_field=True,
    )
)
