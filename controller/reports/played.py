"""Every wager a period settled, as the journal has it: its stake, paytable, meter and pay.

The ledger journals one ``payout`` effect for every settled wager, a loss included (its kind
``loss``, nothing paid), in the row that settles the round, and one for each Envy bonus (kind
``envy``). A voided round's wagers are returned (kind ``void``) and played no hand, so they
are left out. So the wagers played are the period's payout effects, each joined with:

* **the paytable in force** on its table and spot: the ``table-configured`` event (carried
  whole in its row or in a ``configuration-approved`` row) that the table's last ``table-set``
  effect before the settlement applied. The event carries each paytable's text, so the figures
  need no file.
* **the meter it was played at**, for a progressive wager: the pool's meter as the last
  ``balances`` effect before the settling row left it, which is the meter the round's hands
  were paid at (docs/rules.md § 4.2), to the fraction of a cent; on a multi-level pool, each
  level's meter (``POOL.LEVEL``'s balances), for the paytable's return at every level's meter.

A mystery level's pay (the reveal's ``payout``, docs/rules.md § 10) is won by no hand and staked
by no wager of its own (the winning wager was settled with its round): it is left out of the
wagers, so that a table's actual return is its hands' against its paytables' theoretical; the
report's mystery part lists each draw and hit (controller/reports/mystery_draws.py).

A row the ledger refused moved nothing and is passed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from controller.effects import Balances, PayoutMade, TableSet, decode_effects
from controller.events import ConfigurationApproved, TableConfigured, decode_event
from controller.journal import JournalError
from controller.ledger.settlement import PayoutKind
from controller.ledger.table_rules import spot_paytable
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

CONFIGURING_KINDS = frozenset({"table-configured", "configuration-approved"})
"""The kinds of the rows that can carry a table's configuration."""
MYSTERY_PAYOUT = "/mystery"
"""How a mystery level's payout id ends (controller/ledger/mystery_level.py)."""


@dataclass(frozen=True, slots=True)
class PlayedWager:
    """One settled wager and what it paid back, Envy apart."""

    seq: int
    """The row that settled it."""
    table_id: str
    round_id: str
    seat: int
    spot: str
    wager_cents: int
    paytable: str
    """The name of the paytable its spot was played on (``""`` if the journal names none)."""
    paytable_text: str
    """That paytable's TOML, as the table's configuration carried it."""
    pool_id: str | None
    """The table's progressive pool, for a progressive wager."""
    meter: Fraction | None
    """The pool's meter the round was paid at, for a progressive wager."""
    paid_back_cents: int
    """The win and the wager returned with it (0 for a loss; the stake for a push)."""
    from_meter_cents: int = 0
    """Of the win, what the pool's meter paid (a hit)."""
    level_meters: tuple[tuple[str, Fraction], ...] = ()
    """On a multi-level pool, each level's meter the round was paid at, by level name (then
    ``meter`` is None: no one meter is the pool's)."""


@dataclass(frozen=True, slots=True)
class EnvyPaid:
    """An Envy bonus a period paid: not part of any wager's own return (docs/analyzer.md)."""

    seq: int
    table_id: str
    seat: int
    spot: str
    win_cents: int


def _event(row: dict[str, Any]) -> Any:  # noqa: ANN401 - any event the row holds
    try:
        return decode_event(row["event"])
    except msgspec.MsgspecError as error:
        raise JournalError(f"row {row['seq']}: {error}") from error


def _configured(row: dict[str, Any]) -> Iterator[TableConfigured]:
    event = _event(row)
    if isinstance(event, TableConfigured):
        yield event
    elif isinstance(event, ConfigurationApproved):
        yield from (change for change in event.changes if isinstance(change, TableConfigured))


class _Floor:
    """What the rows so far say of the tables and the pools."""

    def __init__(self) -> None:
        self.configured: dict[str, TableConfigured] = {}
        self.applied: dict[str, TableConfigured] = {}
        self.meters: dict[str, Fraction] = {}

    def read(self, row: dict[str, Any], effects: list[Any]) -> None:
        if row["kind"] in CONFIGURING_KINDS:
            for event in _configured(row):
                self.configured[event.table_id] = event
        for effect in effects:
            if isinstance(effect, TableSet) and effect.table_id in self.configured:
                self.applied[effect.table_id] = self.configured[effect.table_id]
            elif isinstance(effect, Balances):
                self.meters[effect.pool_id] = Fraction(effect.meter)

    def paytable(self, table_id: str, spot: str) -> tuple[str, str, str | None]:
        """The paytable's name and text on a table's spot, and the table's pool."""
        event = self.applied.get(table_id)
        if event is None:
            return "", "", None
        try:
            name = spot_paytable(event, Spot(spot))
        except ValueError:
            name = None
        if name is None:
            return "", "", event.pool_id
        return name, event.paytables.get(name, ""), event.pool_id


def played(
    rows: Iterable[dict[str, Any]], begin: int, stop: int
) -> tuple[list[PlayedWager], list[EnvyPaid]]:
    """The wagers settled and the Envy paid in rows ``begin`` to ``stop`` (list indexes).

    ``rows`` are in journal order; every row before ``begin`` is read too, for the tables'
    configurations and the meters.
    """
    floor = _Floor()
    found = _Found()
    for index, row in enumerate(rows):
        if index >= stop:
            break
        if row["outcome"] != "applied":
            continue
        effects = decode_effects(row["effects"])
        if index >= begin:
            meters = dict(floor.meters)  # as the row found them: the round was paid at these
            for effect in effects:
                if isinstance(effect, PayoutMade):
                    found.settled(floor, meters, int(row["seq"]), effect)
        floor.read(row, effects)
    return found.wagers, found.envy


class _Found:
    """The period's wagers and Envy bonuses, as their rows are read."""

    def __init__(self) -> None:
        self.wagers: list[PlayedWager] = []
        self.envy: list[EnvyPaid] = []

    def settled(
        self, floor: _Floor, meters: dict[str, Fraction], seq: int, payout: PayoutMade
    ) -> None:
        if payout.kind == PayoutKind.ENVY:
            bonus = EnvyPaid(seq, payout.table_id, payout.seat, payout.spot, payout.win_cents)
            self.envy.append(bonus)
            return
        if payout.kind == PayoutKind.VOID:
            return
        if payout.payout_id.endswith(MYSTERY_PAYOUT) and (payout.line or "").startswith("mystery-"):
            return  # a mystery level's hit: no hand's pay, no wager's own (the docstring)
        name, text, pool_id = floor.paytable(payout.table_id, payout.spot)
        progressive = payout.spot == Spot.PROGRESSIVE
        meter = meters.get(pool_id) if progressive and pool_id is not None else None
        levels: tuple[tuple[str, Fraction], ...] = ()
        if progressive and pool_id is not None and meter is None:
            prefix = f"{pool_id}."
            levels = tuple(sorted(
                (key.removeprefix(prefix), value)
                for key, value in meters.items()
                if key.startswith(prefix)
            ))  # fmt: skip
        self.wagers.append(
            PlayedWager(
                seq, payout.table_id, payout.round_id, payout.seat, payout.spot,
                payout.wager_cents, name, text, pool_id if progressive else None, meter,
                payout.win_cents + payout.returned_cents, payout.from_meter_cents, levels,
            )
        )  # fmt: skip
