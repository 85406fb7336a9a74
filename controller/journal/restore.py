"""Reading the domain's state back from the journal's materialized rows (at start-up).

The rows are those every backend writes with every commit (:mod:`controller.journal.appending`):
pools, tables, live table states, open rounds, pending payouts, operators, and the
configuration revision and approved manifest in ``meta``, read by the same queries
(:data:`STATE_QUERIES`) on every backend; the SQLite file's reading is
:mod:`controller.journal.sqlite.restore`. What the rows hold is the domain's to read
(:meth:`controller.journal.domain.Domain.state_from_rows`): the journal hands it the rows, and
the effects of its applied lock rows, which an open round stored before contributions were
kept with its wagers takes them from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from controller.ports import APPLIED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from controller.effects import AnyEffect
    from controller.journal.domain import Domain, State
    from controller.journal.rows import Row

LOCK_KINDS: Final = ("bets-locked", "wager-locked")
"""The rows whose ``contributed`` effects give an old open round's contributions."""


STATE_QUERIES: Final = {
    "pools": "SELECT pool_id, state FROM pools",
    "tables": "SELECT table_id, config FROM tables",
    "rounds": "SELECT table_id, round_id, wagers FROM rounds",
    "pending": "SELECT * FROM payouts WHERE status = 'pending'",
    "meta": "SELECT key, value FROM meta",
    "table_states": "SELECT table_id, state FROM table_states",
    "operators": "SELECT * FROM operators",
}
"""What each part of the materialized state is read with: the same SQL on every backend."""


def restored(
    domain: Domain[State],
    rows: Mapping[str, Iterable[Mapping[str, Any]]],
    lock_rows: Callable[[], Iterable[Row]],
) -> State:
    """The domain's state in the rows of each of :data:`STATE_QUERIES` (named columns).

    ``lock_rows`` reads the journal's rows of :data:`LOCK_KINDS`; only the applied ones'
    effects reach the domain. A row it cannot read raises ValueError (or KeyError, TypeError,
    a msgspec error: the backend fails closed on any, naming its location).
    """

    def locks() -> Iterator[tuple[AnyEffect, ...]]:
        return (row.effects or () for row in lock_rows() if row.values["outcome"] == APPLIED)

    return domain.state_from_rows(rows, locks)
