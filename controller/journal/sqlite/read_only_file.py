"""Opening a journal file to read it without writing a byte, wherever the file lies.

A supervisor's or an auditor's command may read the live journal, a copy handed to a lab, or
a backup on read-only media. SQLite's ``mode=ro`` alone writes next to the file: to read a
WAL-mode file it needs the ``-shm`` index beside it and makes it (and an empty ``-wal``)
when they are absent, and in a folder it cannot write it fails ("attempt to write a readonly
database"). So the file is opened one of two ways (docs/operations.md, "Read-only copies"):

* **A writer's files beside it**: a ``-wal`` holding frames, a ``-wal`` with its ``-shm``, or
  a rollback ``-journal``. A writer holds the file open, or one stopped before folding its
  last commits into the file; those rows are only in the WAL, and SQLite reads them, and
  keeps a snapshot while the writer commits, only through its locks and the ``-shm``:
  ``mode=ro``, which then makes nothing. A copy taken with its ``-wal`` and ``-shm`` reads
  anywhere; one with a ``-wal`` and no ``-shm``, in a folder that cannot be written, is
  refused, saying so.
* **None** (no ``-wal``, or an empty one alone): nobody holds the file in WAL mode and every
  committed row is in the file itself; ``mode=ro&immutable=1`` reads it with no ``-shm``, no
  lock and nothing made.

Immutable is only safe while nobody changes the file, and SQLite no longer checks that, so
the reader does: a WAL writer that starts meanwhile appends to its ``-wal`` only, which
leaves the file (and the reads) as they were, until a checkpoint copies frames into the
file. The file's device, inode, size and modification time are taken when it is opened and
compared when the reads are done (:meth:`ReadOnlyFile.check_unchanged`); if they moved, what
was read may mix two moments, and the command fails asking to be run again rather than show
it.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

from controller.journal.errors import JournalError

if TYPE_CHECKING:
    from pathlib import Path

Mark: TypeAlias = tuple[int, int, int, int]
"""A file's device, inode, size and modification time (ns)."""

OPEN_FAILURES: Final = frozenset({"SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM"})
"""SQLite's errors for a file (or its ``-shm``) it could not open as asked."""


@dataclass(frozen=True, slots=True)
class ReadOnlyFile:
    """A journal file's read-only connection, and how it was opened."""

    path: Path
    connection: sqlite3.Connection
    mark: Mark | None
    """The file as it was when opened immutable; None when SQLite's locks keep reads whole."""

    @property
    def immutable(self) -> bool:
        """Whether the file is read with no ``-shm``, no lock and nothing made beside it."""
        return self.mark is not None

    def check_unchanged(self) -> None:
        """Refuse what was read from an immutable file if the file changed meanwhile."""
        if self.mark is not None and _mark(self.path) != self.mark:
            raise JournalError(
                f"{self.path}: the journal changed while it was read (a writer opened it); "
                "run the command again"
            )


def open_read_only(path: Path, *, busy_timeout_ms: int = 5000) -> ReadOnlyFile:
    """The journal file at ``path``, opened to read and never to write (module docstring).

    Its first page is read here, so a file SQLite cannot open is refused now, in one line; a
    file that is no database at all is left for the caller's check of the schema to name.
    """
    if path.is_dir():
        raise JournalError(f"{path}: a folder, not a journal file")
    if not path.exists():
        raise JournalError(f"{path}: no such journal")
    quiet = not _writers_files(path)
    mark = _mark(path) if quiet else None
    uri = path.resolve().as_uri() + ("?mode=ro&immutable=1" if quiet else "?mode=ro")
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    except sqlite3.Error as error:
        raise JournalError(f"{path}: cannot read the journal: {error}") from error
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as error:
        connection.close()
        reason = _why(path, error) if error.sqlite_errorname in OPEN_FAILURES else error
        raise JournalError(f"{path}: cannot read the journal: {reason}") from error
    except sqlite3.DatabaseError:
        pass  # not a database: the caller's check of the schema refuses it in its own words
    return ReadOnlyFile(path, connection, mark)


def _writers_files(path: Path) -> bool:
    """Whether a writer's files are beside ``path`` (module docstring): SQLite's locks then."""
    wal, shm, rollback = (path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))
    if _size(rollback) > 0:
        return True
    return wal.exists() and (_size(wal) > 0 or shm.exists())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _mark(path: Path) -> Mark:
    status = path.stat()
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _why(path: Path, error: sqlite3.Error) -> str:
    """SQLite's refusal to open the file, in the words of what the reader can do about it."""
    if not os.access(path, os.R_OK):
        return "permission denied"
    shm = path.with_name(path.name + "-shm")
    if not shm.exists() and not os.access(path.parent, os.W_OK):
        return (
            f"its -wal holds rows not yet in the file, and SQLite reads them only with a -shm "
            f"beside it, which cannot be made in {path.parent}: copy the journal with its -wal "
            "and -shm, or to a folder that can be written"
        )
    return str(error)
