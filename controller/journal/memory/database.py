"""The in-memory journals of this process: SQLite databases in SQLite's ``memdb`` VFS.

``memory://NAME`` is the database ``file:/NAME?vfs=memdb``, which every connection of the
process that opens that name shares, as connections to one file do: the same locks (a writer's
``BEGIN IMMEDIATE``, readers waiting on ``busy_timeout`` while it commits), the same schema,
the same rows. No file is made and nothing outlives the process.

SQLite frees such a database when its last connection closes; a journal must outlive a writer
that closes and opens it again (a restart in the same process, the start-up check's reopening),
as a file does. So the first connection to a name is kept here (:func:`keep`) until
:func:`discard` names it, or the process ends: a name once opened is a journal until then.

A memdb database is bounded (``SQLITE_MEMDB_DEFAULT_MAXSIZE``, 1 GiB unless SQLite was built
otherwise): past it a write fails as on a full disk, and the journal fails closed.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING, Final

import sqlite_utils

if TYPE_CHECKING:
    from controller.journal.location import MemoryLocation

BUSY_TIMEOUT_MS: Final = 5000
"""How long a connection waits for another's write lock, as the SQLite file's do."""

_kept: dict[str, sqlite3.Connection] = {}
"""Each journal's first connection, held so that its database lives on (module docstring)."""
_lock = threading.Lock()


def uri(location: MemoryLocation, *, read_only: bool = False) -> str:
    """The SQLite URI of the journal's database (``mode=ro`` for a reader)."""
    return f"file:/{location.name}?vfs=memdb" + ("&mode=ro" if read_only else "")


def exists(location: MemoryLocation) -> bool:
    """Whether this process holds a journal, or anything, under the location's name."""
    with _lock:
        kept = _kept.get(location.name)
    if kept is None:
        return False
    (tables,) = kept.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return int(tables) > 0


def connect(location: MemoryLocation, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection of its own to the journal's database, made (empty) if there is none yet.

    Explicit transactions (``isolation_level=None``), as the file's; usable from another
    thread (the sequencer commits beside the event loop).
    """
    keep(location)
    connection = sqlite3.connect(
        uri(location, read_only=read_only),
        uri=True,
        isolation_level=None,
        check_same_thread=False,
    )
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA foreign_keys=ON")
    return connection


def database(location: MemoryLocation) -> sqlite_utils.Database:
    """:func:`connect`'s connection for writing, as :mod:`sqlite_utils` wraps the file's."""
    return sqlite_utils.Database(connect(location))


def keep(location: MemoryLocation) -> None:
    """Hold the journal's database alive until :func:`discard` (module docstring)."""
    with _lock:
        if location.name not in _kept:
            _kept[location.name] = sqlite3.connect(
                uri(location), uri=True, isolation_level=None, check_same_thread=False
            )


def discard(location: MemoryLocation) -> None:
    """Let the journal go: freed once the last connection still open to it closes."""
    with _lock:
        kept = _kept.pop(location.name, None)
    if kept is not None:
        kept.close()
