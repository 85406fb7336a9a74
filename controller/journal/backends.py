"""Opening the journal a location names: the SQLite file, or the PostgreSQL database (docs/ha.md).

Start-up (:func:`open_journal`) and the commands that append (:func:`append_to`) open their
journal here, through :class:`controller.journal.port.JournalPort`, whichever backend holds it;
the commands that only read open it read only (:func:`open_reader`, a
:class:`controller.journal.readonly.JournalReader`), and ``jackpotd verify`` checks either
without opening it for writing (:func:`verify_journal`). The command line never asks which
backend it has: both archive old rows to the same segments (:func:`archive_journal`).

Whichever the backend, a location that holds something other than a journal (another
SQLite file, a database of other tables) is refused in one line before anything is read or
written, and a reader never creates or migrates the journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.journal import archive, verify
from controller.journal.errors import JournalError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres import PostgresJournal, checks
from controller.journal.postgres import archive as database_archive
from controller.journal.postgres.connection import connect
from controller.journal.postgres.readonly import (
    PostgresReader,
    database_version,
    no_journal,
)
from controller.journal.readonly import NotAJournalError, ReadOnlyJournal, check_journal
from controller.journal.store import Journal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive import ArchiveRecord
    from controller.journal.location import JournalLocation
    from controller.journal.port import JournalPort
    from controller.journal.readonly import JournalReader
    from controller.journal.verify import VerifyReport


def open_journal(location: JournalLocation) -> JournalPort[Any]:
    """The journal at ``location``, opened for writing (an SQLite file's folder is made)."""
    if isinstance(location, DatabaseUrl):
        return PostgresJournal(location)
    location.parent.mkdir(parents=True, exist_ok=True)
    return Journal(location)


def writable(location: JournalLocation) -> None:
    """Refuse now, in one line, a location no journal may be written at; nothing is made.

    A file may be written if it is a journal or does not exist yet, in a folder (or where
    one can be made); a database if it is a journal or empty, reachable, and durable
    (:mod:`controller.journal.postgres.connection`). Another SQLite file or a database of
    other tables is never made a journal.
    """
    if isinstance(location, DatabaseUrl):
        database_version(location, writes=True)
        return
    folder = location.parent
    if folder.exists() and not folder.is_dir():
        raise JournalError(f"{location}: cannot create the journal: {folder} is not a folder")
    if location.exists() and location.stat().st_size > 0:
        try:
            check_journal(location)
        except NotAJournalError:
            raise
        except JournalError:
            pass  # unreadable for another reason: the writer opening it says which


def append_to(location: JournalLocation, *, must_exist: bool = True) -> JournalPort[Any]:
    """The journal a command appends to (:func:`writable`); it must exist unless ``must_exist``.

    A journal that does not exist yet (no file; a database without the journal's tables) is
    made only when the command feeds it events (``jackpotd apply``, a first enrollment).
    """
    writable(location)
    if must_exist:
        if isinstance(location, DatabaseUrl):
            if database_version(location) is None:
                raise no_journal(location)
        elif not location.exists():
            raise JournalError(f"{location}: no such journal (use --db)")
    return open_journal(location)


def open_reader(location: JournalLocation) -> JournalReader:
    """The journal at ``location``, read only: nothing is created, migrated or written."""
    if isinstance(location, DatabaseUrl):
        return PostgresReader(location)
    return ReadOnlyJournal(location)


def archive_journal(  # noqa: PLR0913 - the archive command's options, all keywords
    location: JournalLocation,
    out: Path,
    *,
    before: datetime | None,
    rows: int | None,
    keys: Sequence[str],
    now: str,
) -> list[ArchiveRecord]:
    """``jackpotd archive``: the same segments from a file or a database.

    :func:`controller.journal.archive.archive` on a file,
    :func:`controller.journal.postgres.archive.archive` on a database.
    """
    if isinstance(location, DatabaseUrl):
        if database_version(location) is None:
            raise no_journal(location)
        return database_archive.archive(location, out, before=before, rows=rows, keys=keys, now=now)
    if not location.exists():
        raise JournalError(f"{location}: no such journal")
    return archive.archive(location, out, before=before, rows=rows, keys=keys, now=now)


def reach_journal(location: JournalLocation) -> None:
    """Fail now, in one line, if the database a URL names cannot be reached or is not durable.

    For whoever must not leave anything behind on a journal that cannot open (the demo makes
    its manager's key file first); a file location is checked when it is opened.
    """
    if isinstance(location, DatabaseUrl):
        connect(location).close()


def verify_journal(
    location: JournalLocation,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
) -> VerifyReport:
    """``jackpotd verify``'s checks of the journal at ``location``, read only, never migrated.

    A file must be a journal (:func:`controller.journal.readonly.check_journal`); a database
    is read in one snapshot. ``archives``: the folder of either's archive segments.
    """
    if isinstance(location, DatabaseUrl):
        if database_version(location) is None:
            raise no_journal(location)
        return checks.verify(
            location, keys=keys, anchors=anchors, progress=progress, archives=archives
        )
    check_journal(location)
    return verify.verify(location, keys=keys, anchors=anchors, progress=progress, archives=archives)
