"""The ledger state read back from an SQLite journal's materialized rows (at start-up).

The queries are every backend's, and the state they give the domain's
(:mod:`controller.journal.restore`);
an open round stored before contributions were kept with its wagers takes them from the
file's lock rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal.restore import LOCK_KINDS, STATE_QUERIES, restored
from controller.journal.sqlite.rows import rows_of_kinds

if TYPE_CHECKING:
    import sqlite_utils

    from controller.journal.domain import Domain, State


def load_state(database: sqlite_utils.Database, domain: Domain[State]) -> State:
    """The domain's state as materialized in the SQLite file."""
    rows = {name: database.query(query) for name, query in STATE_QUERIES.items()}
    return restored(domain, rows, lambda: rows_of_kinds(database.conn, *LOCK_KINDS))
