"""The PostgreSQL journal: the same rows, hash chain and materialized state in a database.

:class:`PostgresJournal` implements :class:`controller.journal.port.JournalPort` as
:class:`controller.journal.sqlite.Journal` does for an SQLite file, and passes the same contract
tests (tests/journal/contract/). A batch is applied and its rows made by
:mod:`controller.journal.appending`, shared by both backends, so that the same events give
the same rows and hashes in either; only the SQL differs. docs/ha.md says why psycopg 3,
synchronous, and what a PostgreSQL journal does not do yet.

:class:`PostgresJournal` is imported from :mod:`.store` when first asked for: importing a
module of this package (the service's :mod:`.fence`) does not load psycopg, which an SQLite
journal's process never needs (controller/journal/backends.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.journal.postgres.store import PostgresJournal

__all__ = ["PostgresJournal"]


def __getattr__(name: str) -> object:
    """:class:`PostgresJournal`, imported when first asked for (module docstring)."""
    if name == "PostgresJournal":
        from controller.journal.postgres.store import PostgresJournal  # noqa: PLC0415

        return PostgresJournal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
