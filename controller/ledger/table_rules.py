"""A table's side-bet rules, validated from the journaled ``table-configured`` event.

The event carries the paytables whole (TOML text), so the rules in force at any point of the
journal can be rebuilt without the files. Validation refuses a rule set a lab would refuse,
among them a maximum payout below the floor of § 688a.12(e) (controller/ledger/payout_floor.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from controller.errors import ConfigurationError
from controller.ledger.lockouts import has_identity
from controller.ledger.payout_floor import MAX_PAYOUT_FLOOR_CENTS, most_one_player_wins
from controller.ledger.settlement import HitOrder, TableRules
from controller.ledger.state import LedgerError
from controller.ledger.wager_limits import WagerLimitsError, validated_limits
from controller.rules.dynasty import off_profile
from controller.rules.paytable_files import PaytableError, parse_paytable
from controller.rules.spots import Spot, spec_of, spots

if TYPE_CHECKING:
    from controller.events import TableConfigured
    from controller.ledger.state import LedgerState
    from controller.rules.paytable import Paytable, Wager


class TableRulesError(ConfigurationError, ValueError):
    """A table configuration the controller refuses; the message names the table and the key."""


def _paytable(
    event: TableConfigured, key: str, name: str | None, wagers: frozenset[Wager]
) -> Paytable | None:
    if name is None:
        return None
    text = event.paytables.get(name)
    if text is None:
        raise TableRulesError(f"table {event.table_id}: {key}: paytable {name!r} is not included")
    try:
        table = parse_paytable(text, f"table {event.table_id} paytable {name}")
    except PaytableError as error:
        raise TableRulesError(str(error)) from error
    if table.name != name:
        raise TableRulesError(f"table {event.table_id}: {key}: the text is paytable {table.name!r}")
    if table.wager not in wagers:
        raise TableRulesError(f"table {event.table_id}: {key}: {name} is a {table.wager} paytable")
    return table


def envy_includes_dealer(event: TableConfigured) -> bool:
    """Whether the table pays Envy for the dealer's hand: as journaled, or true if unwritten.

    § 688a.1 pays Envy for another player's hand only, and every configuration writes false.
    An event journaled before that carries no value and was played with the old default,
    true; its rounds replay as they were paid (docs/rules.md § 9).
    """
    if isinstance(event.envy_includes_dealer, msgspec.UnsetType):
        return True
    return event.envy_includes_dealer


def refuse_envy_on_the_dealer(state: LedgerState, event: TableConfigured) -> None:
    """Refuse a new table configuration that would pay Envy for the dealer's hand.

    § 688a.1 pays Envy for another player's hand only (docs/rules.md § 9). On a journal with an
    identity (every journal this version founds, and none written before: see
    :func:`controller.ledger.lockouts.has_identity`) the event must say so, ``false``; one that
    leaves it out, whose old default is true, or writes true is refused, whoever signed it. A
    journal written before identities existed replays its tables as they were configured.
    """
    if has_identity(state) and event.envy_includes_dealer is not False:
        left_out = isinstance(event.envy_includes_dealer, msgspec.UnsetType)
        raise LedgerError(
            f"table {event.table_id}: envy_includes_dealer: "
            f"{'left out (it would be true)' if left_out else 'true'}; Envy is never paid for "
            "the dealer's hand (58 Pa. Code § 688a.1): write false"
        )


def spot_paytable(event: TableConfigured, spot: Spot) -> str | None:
    """The name of the paytable the event offers on ``spot``, or None.

    A spot of its own field (:attr:`~controller.rules.spots.SpotSpec.own_field`) is read from
    it, ``None`` or ``UNSET`` where not offered; any other from ``side_bets``.
    """
    spec = spec_of(spot)
    if not spec.own_field:
        side_bets = event.side_bets
        return None if isinstance(side_bets, msgspec.UnsetType) else side_bets.get(spot)
    name: str | msgspec.UnsetType | None = getattr(event, spec.key)
    return None if isinstance(name, msgspec.UnsetType) else name


def _dynasty_profile(event: TableConfigured, table: Paytable | None = None) -> None:
    """A Dynasty Bonus paytable goes with its journaled profile and keeps to it."""
    where = f"table {event.table_id}: dynasty_profile"
    profile = event.dynasty_profile
    if table is None:
        if (spot_paytable(event, Spot.DYNASTY) is None) != isinstance(profile, msgspec.UnsetType):
            raise TableRulesError(f"{where}: a Dynasty paytable and its profile go together")
        return
    if not isinstance(profile, msgspec.UnsetType):
        reason = off_profile(table, profile)
        if reason is not None:
            raise TableRulesError(f"{where}: {reason}")


def _spot_paytables(event: TableConfigured, progressive: Paytable | None) -> dict[Spot, Paytable]:
    """The paytable of each spot the event offers, checked, in the registry's order."""
    found: dict[Spot, Paytable] = {}
    for spot in spots():
        if spot is Spot.PROGRESSIVE:  # read first: the pool goes with it
            table = progressive
        else:
            if spot is Spot.DYNASTY:
                _dynasty_profile(event)
            spec = spec_of(spot)
            table = _paytable(event, spec.key, spot_paytable(event, spot), spec.wagers)
            if spot is Spot.DYNASTY:
                _dynasty_profile(event, table)
        if table is not None:
            found[spot] = table
    written = () if isinstance(event.side_bets, msgspec.UnsetType) else event.side_bets
    unknown = sorted(set(written) - {str(spot) for spot in found if not spec_of(spot).own_field})
    if unknown:
        raise TableRulesError(
            f"table {event.table_id}: side_bets: {unknown[0]!r} is not a registered side bet"
        )
    return found


def table_rules(event: TableConfigured) -> TableRules:
    """Validated rules of one table."""
    where = f"table {event.table_id}"
    try:
        hit_order = HitOrder(event.hit_order)
    except ValueError as error:
        raise TableRulesError(
            f"{where}: hit_order: sequential or split, not {event.hit_order!r}"
        ) from error
    if not 1 <= event.seats <= 9:
        raise TableRulesError(f"{where}: seats: 1 to 9, not {event.seats}")
    progressive = _paytable(
        event, "progressive", event.progressive, spec_of(Spot.PROGRESSIVE).wagers
    )
    if (progressive is None) != (event.pool_id is None):
        raise TableRulesError(f"{where}: pool_id: a progressive paytable and a pool go together")
    for key in (
        "envy_minimum_cents",
        "tax_threshold_cents",
        "tax_wager_multiple",
        "minimum_wager_cents",
    ):
        if getattr(event, key) < 0:
            raise TableRulesError(f"{where}: {key}: cannot be negative")
    paytables = _spot_paytables(event, progressive)
    offered = list(paytables)
    try:
        limits = validated_limits(event, offered)
    except WagerLimitsError as error:
        raise TableRulesError(f"{where}: {error}") from error
    rules = TableRules(
        table_id=event.table_id,
        seats=event.seats,
        bonus=paytables.get(Spot.BONUS),
        ace_high=paytables.get(Spot.ACE_HIGH),
        insurance=paytables.get(Spot.INSURANCE),
        progressive=progressive,
        pool_id=event.pool_id,
        envy_minimum_cents=event.envy_minimum_cents,
        envy_includes_dealer=envy_includes_dealer(event),
        max_payout_cents=event.max_payout_cents,
        verification_cents=event.verification_cents,
        tax_threshold_cents=event.tax_threshold_cents,
        tax_wager_multiple=event.tax_wager_multiple,
        hit_order=hit_order,
        wager_limits=limits,
        dynasty=paytables.get(Spot.DYNASTY),
        side_bets={spot: table for spot, table in paytables.items() if not spec_of(spot).own_field},
    )
    if event.max_payout_cents is not None:
        floor = max(MAX_PAYOUT_FLOOR_CENTS, most_one_player_wins(rules, event.minimum_wager_cents))
        if event.max_payout_cents < floor:
            raise TableRulesError(
                f"{where}: max_payout_cents: {event.max_payout_cents} is below the floor of "
                f"{floor} cents (§ 688a.12(e): $50,000 or the most one player can win betting "
                "the minimum, whichever is greater)"
            )
    return rules
