"""The floor of a table's maximum payout: the most one player can win on one hand (§ 688a.12(e)).

58 Pa. Code § 688a.12(e) lets a property cap what one player is paid on a single hand, at no
less than $50,000 or "the maximum amount that one player could win per round when betting the
minimum permissible wager, whichever is greater". That amount is worked out exactly here:

* **one hand, every wager on it.** A player's odds wagers (the bonus, Dynasty and insurance
  wagers, each at its spot's minimum) and the progressive wager's fixed pays are all paid on the
  player's own seven cards, each on the row its paytable pays for that hand. So the most is the
  largest sum over the sets of lines a seven-card hand can really have
  (:func:`controller.rules.hand_masks.hand_masks`), never the sum of each paytable's top row:
  the bonus's seven-card straight flush and the Ace High wager's top row ("both dealer and
  player have ace high", a hand with no pair, straight or flush) are never won together. The
  Ace High wager pays its "both" row on a player's ace-high hand and at most its best
  "dealer only" row on any other. Meter pays are left out, as the cap never applies to them.
* **Envy, only for a wager that qualifies.** A player collects Envy for each other player's
  hand only on a Qualifying Wager (§ 688a.1): a wager of at least the table's ``envy_minimum``
  on a paytable with an Envy column. At a $4 minimum nobody betting the minimum earns Envy of a
  $5 qualifying amount, so none is counted; where the minimum qualifies, each qualifying wager's
  largest Envy is counted for each other hand at the table (the dealer's only for a table
  journaled before § 688a.1 was read so: docs/rules.md § 9).

A table whose paytables read the joker in different modes (a semi-wild bonus and a fully-wild
progressive) sums the most of each mode's wagers: one hand read both ways is not enumerated,
so the floor there is an upper bound, never below the exact amount.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Final

from controller.ledger.wager_limits import minimum_of
from controller.rules.hand_masks import hand_masks
from controller.rules.paytable import FixedPay, MeterPay
from controller.rules.spots import spec_of

if TYPE_CHECKING:
    from controller.ledger.settlement import TableRules
    from controller.rules.cards import JokerMode
    from controller.rules.paytable import Paytable
    from controller.rules.spot_pays import Pay

MAX_PAYOUT_FLOOR_CENTS: Final = 5_000_000
"""§ 688a.12(e): a maximum payout of at least $50,000."""


def most_one_player_wins(rules: TableRules, minimum_wager_cents: int) -> int:
    """The most one player wins on one hand betting the minimum, meters aside (§ 688a.12(e)).

    Each odds spot offered counts as its spot pays (:mod:`controller.rules.spot_pays`), the
    progressive spot its fixed pays.
    """
    pays: dict[JokerMode, list[Pay]] = defaultdict(list)
    for spot, table in rules.offered().items():
        odds = spec_of(spot).pays
        if odds is None:
            pays[table.joker].append(_fixed(table))
        else:
            pays[table.joker].append(odds.most(table, minimum_of(rules, spot, minimum_wager_cents)))
    own = sum(
        max(sum(pay(mask) for pay in wagers) for mask in hand_masks(mode))
        for mode, wagers in pays.items()
    )
    others = rules.seats - 1 + (1 if rules.envy_includes_dealer else 0)
    return own + _envy(rules, minimum_wager_cents) * others


def _fixed(table: Paytable) -> Pay:
    """The progressive wager's largest fixed pay among the rows a hand qualifies for."""

    def pay(mask: int) -> int:
        return max(
            (
                row.pays.cents if isinstance(row.pays, FixedPay) else row.pays.fixed_cents
                for row in table.qualifying_rows(mask)
                if isinstance(row.pays, FixedPay | MeterPay)
            ),
            default=0,
        )

    return pay


def _envy(rules: TableRules, minimum_wager_cents: int) -> int:
    """The Envy one other hand can bring: each Qualifying Wager's largest (§ 688a.1)."""
    most = 0
    for spot, table in rules.offered().items():
        spec = spec_of(spot)
        if not spec.envy or not table.has_envy:
            continue
        if spec.odds:
            stake = minimum_of(rules, spot, minimum_wager_cents)
        else:  # the progressive wager is its paytable's one denomination
            stake = table.progressive.wager_cents if table.progressive else 0
        if stake >= rules.envy_minimum_cents:
            most += max((row.envy_cents or 0 for row in table.lines), default=0)
    return most
