"""The ledger's journal in a PostgreSQL database: the PostgreSQL backend, recording the ledger.

:class:`PostgresJournal` and :class:`PostgresReader` are the backend's, opened with
:data:`controller.ledger.domain.LEDGER` unless another domain is given; :func:`verify` and
:func:`archive` are ``jackpotd verify`` and ``jackpotd archive`` of a database. Importing this
module loads psycopg, which an SQLite journal's process never needs.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

from controller.journal.postgres import archive as database_archive
from controller.journal.postgres import checks, readonly, store
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.journal.domain import Domain
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.fence import Fence

__all__ = ["PostgresJournal", "PostgresReader", "archive", "verify"]


class PostgresJournal(store.PostgresJournal[LedgerState]):
    """The ledger's journal in the database at ``url`` (:class:`.store.PostgresJournal`)."""

    def __init__(
        self,
        url: DatabaseUrl,
        *,
        fence: Fence | None = None,
        standby: bool = False,
        clock: Callable[[], float] = time.monotonic,
        domain: Domain[LedgerState] = LEDGER,
    ) -> None:
        super().__init__(url, fence=fence, standby=standby, clock=clock, domain=domain)


class PostgresReader(readonly.PostgresReader[LedgerState]):
    """The ledger's journal in the database, read only (:class:`.readonly.PostgresReader`)."""

    def __init__(self, url: DatabaseUrl, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(url, domain)


verify = functools.partial(checks.verify, domain=LEDGER)
"""``jackpotd verify`` of the database, replayed with the ledger."""
archive = functools.partial(database_archive.archive, domain=LEDGER)
"""``jackpotd archive`` of the database, replayed with the ledger."""
