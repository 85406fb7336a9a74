"""Wager limits: the least and the most each side-bet spot of a table takes (docs/rules.md § 8).

A table's configuration gives every odds spot it offers (bonus, Ace High, insurance) a minimum
and a maximum, journaled in ``TableConfigured.wager_limits``; the progressive spot takes its
paytable's one denomination and nothing else, so it has no limits of its own. A chip outside
its spot's limits is refused when bets are locked: it never becomes a wager, and the refusal
is journaled with its reason and shown to the table.

A ``table-configured`` event journaled before limits existed carries none; its table enforces
none (not even ``minimum_wager_cents``), exactly as it did, so that old journals replay to the
same meters. Every configuration written since carries them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from controller.errors import ConfigurationError
from controller.money import format_cents
from controller.rules.spots import Spot, spec_of

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from controller.events import SpotLimits, TableConfigured
    from controller.ledger.settlement import TableRules


class WagerLimitsError(ConfigurationError, ValueError):
    """Limits a table cannot be configured with; the message names the spot and the reason."""


def validated_limits(
    event: TableConfigured, offered: Collection[Spot]
) -> Mapping[Spot, SpotLimits] | None:
    """The limits of each odds spot the table offers, or None for an event without limits.

    Every odds spot offered has limits, no other spot has any, and each minimum is at least
    one cent and at most its maximum.
    """
    if isinstance(event.wager_limits, msgspec.UnsetType):
        return None
    limits: dict[Spot, SpotLimits] = {}
    for name, limit in sorted(event.wager_limits.items()):
        try:
            spot = Spot(name)
        except ValueError as error:
            raise WagerLimitsError(f"wager_limits: {name!r} is not a spot") from error
        if not spec_of(spot).odds:
            raise WagerLimitsError(
                f"wager_limits: {name}: the {name} wager is its paytable's one "
                "denomination and takes no limits"
            )
        if spot not in offered:
            raise WagerLimitsError(f"wager_limits: {name}: the table offers no {name} wager")
        if limit.minimum_cents < 1:
            raise WagerLimitsError(f"wager_limits: {name}: the minimum must be at least 1 cent")
        if limit.maximum_cents < limit.minimum_cents:
            raise WagerLimitsError(
                f"wager_limits: {name}: the maximum {format_cents(limit.maximum_cents)} is below "
                f"the minimum {format_cents(limit.minimum_cents)}"
            )
        limits[spot] = limit
    for spot in sorted(offered):
        if spec_of(spot).odds and spot not in limits:
            raise WagerLimitsError(f"wager_limits: {spot}: every spot needs a minimum and maximum")
    return limits


def out_of_limits(rules: TableRules, spot: Spot, amount_cents: int) -> str | None:
    """Why a wager of ``amount_cents`` on ``spot`` is refused at this table, or None."""
    if rules.wager_limits is None or not spec_of(spot).odds:
        return None
    limit = rules.wager_limits[spot]
    amount = format_cents(amount_cents)
    if amount_cents < limit.minimum_cents:
        return (
            f"the {spot} wager of {amount} is below table {rules.table_id}'s minimum of "
            f"{format_cents(limit.minimum_cents)}"
        )
    if amount_cents > limit.maximum_cents:
        return (
            f"the {spot} wager of {amount} is above table {rules.table_id}'s maximum of "
            f"{format_cents(limit.maximum_cents)}"
        )
    return None


def minimum_of(rules: TableRules, spot: Spot, table_minimum_cents: int) -> int:
    """The least a player may bet on ``spot`` (the table's minimum where no limits are set)."""
    if rules.wager_limits is None or spot not in rules.wager_limits:
        return table_minimum_cents
    return rules.wager_limits[spot].minimum_cents
