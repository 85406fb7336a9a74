"""The PostgreSQL journal: the same rows, hash chain and materialized state in a database.

:class:`PostgresJournal` implements :class:`controller.journal.port.JournalPort` as
:class:`controller.journal.store.Journal` does for an SQLite file, and passes the same contract
tests (tests/journal/test_journal_contract.py). A batch is applied and its rows made by
:mod:`controller.journal.appending`, shared by both backends, so that the same events give
the same rows and hashes in either; only the SQL differs. docs/ha.md says why psycopg 3,
synchronous, and what a PostgreSQL journal does not do yet.
"""

from controller.journal.postgres.store import PostgresJournal

__all__ = ["PostgresJournal"]
