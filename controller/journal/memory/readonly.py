"""The in-memory journal read only, and ``jackpotd verify``'s checks of it.

:class:`MemoryReader` is :class:`controller.journal.sqlite.readonly.ReadOnlyJournal` on a
``mode=ro`` connection to the memory database: the same state, rows, provenances and ``pays``
filters. :func:`verify` runs :class:`controller.journal.verification.Verification` on a copy of
the database taken in one step (SQLite's online backup): the rows, materialized state and
payouts of one moment, and no read lock held on the journal while the replay runs (a
rollback-journal database, which a memory one is, would make the writer wait for it).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import sqlite_utils

from controller.journal.domain import State
from controller.journal.errors import JournalError, SchemaError
from controller.journal.memory import database
from controller.journal.sqlite.readonly import LATEST, ReadOnlyJournal, schema_version
from controller.journal.sqlite.verify import PROGRESS_ROWS, _FileRows
from controller.journal.verification import Verification

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.domain import Domain
    from controller.journal.location import MemoryLocation
    from controller.journal.row_checks import VerifyReport


def no_journal(location: MemoryLocation, hint: str = "") -> JournalError:
    """The refusal of a name this process holds no journal under."""
    return JournalError(f"{location}: no such journal in this process{hint}")


def check_journal(location: MemoryLocation) -> int:
    """The schema version of the memory journal (read only); refuses anything else."""
    if not database.exists(location):
        raise no_journal(location)
    connection = database.connect(location, read_only=True)
    try:
        return schema_version(connection, location)  # type: ignore[arg-type] # named in messages
    finally:
        connection.close()


class MemoryReader(ReadOnlyJournal[State]):
    """The memory journal ``memory://NAME``, read only: nothing is created or written."""

    def __init__(self, location: MemoryLocation, domain: Domain[State]) -> None:
        # ReadOnlyJournal's own __init__ opens a file; this is it on the memory database.
        self.domain = domain
        version = check_journal(location)
        if version < LATEST:
            raise SchemaError(
                f"{location}: the journal is at schema version {version}, this controller reads "
                f"{LATEST}; the service brings it up to date when it starts"
            )
        self.path = location  # type: ignore[assignment] # the reader's path: the location
        self._connection = database.connect(location, read_only=True)
        self._database = sqlite_utils.Database(self._connection)

    def check_unchanged(self) -> None:
        """Nothing to check: a memory journal is never read immutable."""


def verify(  # noqa: PLR0913 - the journal, the command's options, its domain
    location: MemoryLocation,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
    domain: Domain[State],
) -> VerifyReport:
    """Check the memory journal as :func:`controller.journal.sqlite.verify.verify` checks a file.

    ``domain``: what the rows are replayed with.
    """
    check_journal(location)
    if archives is not None and not archives.is_dir():
        raise JournalError(f"{archives}: no such folder of archive segments")
    source = database.connect(location, read_only=True)
    copy = sqlite3.connect(":memory:", isolation_level=None)
    try:
        source.backup(copy)  # one moment of the journal (module docstring)
        copy.row_factory = sqlite3.Row
        every = PROGRESS_ROWS
        live = _FileRows(copy, domain)
        return Verification(live, domain, keys, anchors, progress or _silent, every).run(archives)
    except sqlite3.Error as error:
        raise JournalError(f"{location}: cannot read the journal: {error}") from error
    finally:
        source.close()
        copy.close()


def _silent(done: int, total: int) -> None:
    """No progress shown."""
