"""The in-memory journal: ``memory://NAME``, the SQLite journal's code on a database in memory.

A third backend beside the SQLite file and the PostgreSQL database, for what needs a real
journal and no file: tests of the parts above the port, a demonstration. It passes the same
contract tests (tests/journal/contract/).

Why SQLite's memory database rather than Python structures: what a journal is beyond its
append path is SQL the SQLite file already has and is tested for: the materialized tables
and the state restored from them, the payout reads and the reader's ``pays`` filters
(:func:`controller.journal.readonly.pay_kinds` are SQL fragments), the site messages and
their check, the sinks' outbox, the catch-up of another writer, the start-up check and
verify. Built again on dicts, each would be a second implementation to keep equal to the
first by tests; on the same SQL, the memory journal is the file's code with another
connection (:mod:`.store`, :mod:`.readonly`), so it cannot drift from it, and the same
statement an intruder runs on a file (the contract's edited state, a deleted site message)
runs on it.

Why the ``memdb`` VFS (``file:/NAME?vfs=memdb``) rather than a shared-cache memory database
(``file:NAME?mode=memory&cache=shared``): memdb connections lock as a file's do, so a reader
waits (``busy_timeout``) while the sequencer commits in its thread, where a shared cache
answers ``SQLITE_LOCKED`` at once, which no busy timeout waits out. Its database lives while
a connection to it is open; :mod:`.database` keeps one per name, so that a journal closed and
opened again in the process finds its rows (docs/journal.md, "Backends").
"""

# sqlite_utils without numpy and pandas, before this backend imports it (as the SQLite one does).
from controller.journal.sqlite import lean  # noqa: F401
