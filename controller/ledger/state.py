"""The ledger's state, and the small helpers every ledger handler shares.

The state is immutable: each event yields a new :class:`LedgerState` whose mappings are new
dictionaries sharing the unchanged values, so that a refused event, or a journal write that
fails, leaves the previous state exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from controller.effects import Balances, fraction_text
from controller.errors import RefusedError
from controller.ledger.operators import Authority

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.events import TableConfigured
    from controller.ledger.journal_binding import JournalBinding
    from controller.ledger.operators import Operator
    from controller.ledger.pool import Pool
    from controller.ledger.settlement import Payout, SeatWager, TableRules
    from controller.ledger.table_state import TableState
    from controller.ledger.wide_area.sites import LinkedSite, SiteChain
    from controller.security.manifest import ApprovedManifest


class LedgerError(RefusedError, ValueError):
    """An event the ledger refuses; the state is unchanged."""


@dataclass(frozen=True, slots=True)
class LedgerState:
    """Everything the ledger owns."""

    pools: Mapping[str, Pool] = field(default_factory=dict)
    tables: Mapping[str, TableRules] = field(default_factory=dict)
    table_events: Mapping[str, TableConfigured] = field(default_factory=dict)
    table_states: Mapping[str, TableState] = field(default_factory=dict)
    rounds: Mapping[tuple[str, str], tuple[SeatWager, ...]] = field(default_factory=dict)
    pending: Mapping[str, Payout] = field(default_factory=dict)
    operators: Mapping[str, Operator] = field(default_factory=dict)
    manifest: ApprovedManifest | None = None
    revision: int = 0
    authority: Authority = field(default_factory=Authority)
    sites: Mapping[str, LinkedSite] = field(default_factory=dict)
    """Central's linked properties (docs/wide-area.md); none at a property or a lone site."""
    chain: SiteChain | None = None
    """A property's link to central (docs/wide-area.md); None unless it joined one."""
    binding: JournalBinding | None = None
    """The journal's identity and every signed event it applied (controller/ledger/binding.py);
    None on a journal written before identities existed."""


def balances(pool: Pool) -> Balances:
    """A pool's balances and running totals, as journaled after each event touching it."""
    return Balances(
        pool.pool_id,
        fraction_text(pool.meter),
        fraction_text(pool.reserve),
        fraction_text(pool.overflow),
        fraction_text(pool.contributions),
        pool.paid_cents,
        pool.house_funding_cents,
        pool.reserve_funding_cents,
        pool.adjustments_cents,
    )


def pool_of(state: LedgerState, pool_id: str) -> Pool:
    """A pool by id, or refuse the event."""
    try:
        return state.pools[pool_id]
    except KeyError as error:
        raise LedgerError(f"unknown pool {pool_id!r}") from error


def with_pool(state: LedgerState, pool: Pool) -> LedgerState:
    """The state with one pool replaced."""
    return replace(state, pools={**state.pools, pool.pool_id: pool})


def table_of(state: LedgerState, table_id: str) -> TableRules:
    """A table's rules by id, or refuse the event."""
    try:
        return state.tables[table_id]
    except KeyError as error:
        raise LedgerError(f"unknown table {table_id!r}") from error


def with_table_state(state: LedgerState, table: TableState) -> LedgerState:
    """The state with one table's live state replaced."""
    return replace(state, table_states={**state.table_states, table.table_id: table})


def authorize(state: LedgerState, by: str, action: str) -> None:
    """Refuse an action by someone who is not an enrolled operator allowed to take it.

    A site that has enrolled no operator yet (a lab, a test) is not checked; one that has is,
    for every supervisor action.
    """
    if not state.operators:
        return
    operator = state.operators.get(by)
    if operator is None:
        raise LedgerError(f"{by!r} is not an enrolled operator")
    if not operator.may(action):
        raise LedgerError(f"{by} ({operator.role}) may not {action}")
