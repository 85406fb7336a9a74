"""The ledger state read back from an SQLite journal's materialized rows (at start-up).

The queries and the state they give are every backend's (:mod:`controller.journal.restore`);
an open round stored before contributions were kept with its wagers takes them from the
file's lock rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal.restore import LOCK_KINDS, STATE_QUERIES, state_from_rows
from controller.journal.sqlite.rows import rows_of_kinds

if TYPE_CHECKING:
    import sqlite_utils

    from controller.ledger.apply import LedgerState


def load_state(database: sqlite_utils.Database) -> LedgerState:
    """The ledger state as materialized in the SQLite file."""
    rows = {name: database.query(query) for name, query in STATE_QUERIES.items()}
    return state_from_rows(rows, lambda: rows_of_kinds(database.conn, *LOCK_KINDS))
