"""The label values of the counters known before anything happens: from the pools and tables.

``increase()`` and ``rate()`` need two samples of a series, so a counter whose series appears
with its first event hides that event from them, and an alert on it misses the first hit, gap
or conflict. Every counter whose label values the controller knows at start (its pools and
tables, the spots and lines of their paytables) is therefore exposed at 0 from the first
scrape (docs/metrics.md, "Conventions"). Read from the ledger's state at each scrape, so a
table configured later has its series from then on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.ledger.settlement import PayoutKind
from controller.rules.paytable import FixedPay, MeterPay, Odds
from controller.rules.spots import spec_of, spots

if TYPE_CHECKING:
    from controller.ledger.settlement import TableRules
    from controller.ledger.state import LedgerState
    from controller.rules.paytable import Paytable
    from controller.rules.spots import Spot


def spot_paytables(rules: TableRules) -> dict[Spot, Paytable]:
    """The paytable of each spot the table offers."""
    return rules.offered()


def meter_lines(progressive: Paytable | None) -> list[str]:
    """The lines of a progressive paytable paid from the meter: those whose pay is a hit."""
    if progressive is None:
        return []
    return [str(row.line) for row in progressive.lines if isinstance(row.pays, MeterPay)]


def pay_lines(rules: TableRules) -> set[tuple[str, str]]:
    """(kind, line) of every pay the table's paytables can make: odds wins, progressive, Envy."""
    found: set[tuple[str, str]] = set()
    for spot, paytable in spot_paytables(rules).items():
        for row in paytable.lines:
            line = str(row.line)
            if isinstance(row.pays, Odds) and row.pays.to_one > 0:
                found.add((str(PayoutKind.WIN), line))
            elif isinstance(row.pays, FixedPay | MeterPay):
                found.add((str(PayoutKind.PROGRESSIVE), line))
            if row.envy_cents and spec_of(spot).envy:  # docs/rules.md § 9
                found.add((str(PayoutKind.ENVY), line))
    return found


@dataclass(frozen=True, slots=True)
class KnownLabels:
    """Each labelled counter's label values known from the configuration, sorted."""

    tables: list[str]
    contributing: list[tuple[str, str]]
    """(pool, table): each table's contributions to its pool."""
    wagers: list[tuple[str, str]]
    """(table, spot) of each spot a table offers."""
    refused: list[tuple[str, str]]
    """(table, spot) of every spot: a chip may be refused on a spot the table does not offer."""
    hits: list[tuple[str, str, str]]
    """(pool, table, line) of each meter line of a table's progressive paytable."""
    pays: list[tuple[str, str, str]]
    """(table, kind, line) of each pay a table's paytables can make."""


def known_labels(state: LedgerState) -> KnownLabels:
    """What the configuration journaled names, as label values."""
    tables = sorted(state.tables.items())
    return KnownLabels(
        tables=[table_id for table_id, _ in tables],
        contributing=[(r.pool_id, t) for t, r in tables if r.pool_id is not None],
        wagers=[(t, str(spot)) for t, r in tables for spot in sorted(spot_paytables(r))],
        refused=[(t, str(spot)) for t, _ in tables for spot in sorted(spots())],
        hits=[
            (r.pool_id, t, line)
            for t, r in tables
            if r.pool_id is not None
            for line in sorted(meter_lines(r.progressive))
        ],
        pays=[(t, kind, line) for t, r in tables for kind, line in sorted(pay_lines(r))],
    )
