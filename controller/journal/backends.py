"""Opening the journal a location names: one factory, keyed by the location's scheme.

:func:`backend_for` is the only place that chooses a backend. :data:`BACKENDS` maps each
scheme (:func:`controller.journal.location.scheme`: ``sqlite`` for a file's path,
``postgresql`` for a URL) to the module and class that implement :class:`JournalBackend` for
it, as python-can's interface registry maps an interface's name to its bus: the module is
imported when a location of its scheme is first opened, so an SQLite journal never loads
psycopg and a backend adds one line here (docs/journal.md, "Backends").

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

import importlib
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.location import scheme

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain
    from controller.journal.location import JournalLocation
    from controller.journal.port import JournalPort
    from controller.journal.postgres.fence import Fence
    from controller.journal.readonly import JournalReader
    from controller.journal.row_checks import VerifyReport


class JournalBackend(Protocol[State]):
    """One backend's ways to open, check, archive and verify the journal at one location.

    Each is made for one location and the domain its journal records (:func:`backend_for`).
    """

    @property
    def location(self) -> JournalLocation:
        """Where the journal is."""

    def open(self) -> JournalPort[Any, State]:
        """The journal, opened for writing (made if there is none yet)."""

    def open_sequenced(self, fence: Fence) -> JournalPort[Any, State]:
        """The journal for the sequencer of node ``fence.node``: a shared one's fence taken."""

    def writable(self) -> None:
        """Refuse now, in one line, a location no journal may be written at; nothing is made."""

    def require(self, hint: str = "") -> None:
        """Refuse now, in one line, a location that holds no journal yet (``hint`` ends it)."""

    def reader(self) -> JournalReader[State]:
        """The journal, read only: nothing is created, migrated or written."""

    def archive(
        self,
        out: Path,
        *,
        before: datetime | None,
        rows: int | None,
        keys: Sequence[str],
        now: str,
    ) -> list[ArchiveRecord]:
        """Archive old rows to segments in ``out`` (docs/journal.md, "Archives")."""

    def reach(self) -> None:
        """Fail now, in one line, if the journal's store cannot be reached (nothing is made)."""

    def verify(
        self,
        *,
        keys: Sequence[str],
        anchors: Sequence[Anchor],
        progress: Callable[[int, int], None] | None,
        archives: Path | None,
    ) -> VerifyReport:
        """``jackpotd verify``'s checks, read only, never migrated."""


BACKENDS: Final[dict[str, tuple[str, str]]] = {
    "sqlite": ("controller.journal.sqlite.backend", "SqliteBackend"),
    "postgresql": ("controller.journal.postgres.backend", "PostgresBackend"),
    "memory": ("controller.journal.memory.backend", "MemoryBackend"),
}
"""Each scheme's backend: the module that implements it, and its :class:`JournalBackend`."""


def backend_for(location: JournalLocation, domain: Domain[State]) -> JournalBackend[State]:
    """The backend of the journal at ``location``, chosen by its scheme (module docstring).

    ``domain``: what its journal records, replays and reads its state back with (the
    application's: the ledger, ``controller.ledger_journal``).
    """
    try:
        module, name = BACKENDS[scheme(location)]
    except KeyError:
        raise JournalError(f"{location}: no journal backend for its scheme") from None
    backend = getattr(importlib.import_module(module), name)
    return cast("JournalBackend[State]", backend(location, domain))


def open_journal(location: JournalLocation, domain: Domain[State]) -> JournalPort[Any, State]:
    """The journal at ``location``, opened for writing (an SQLite file's folder is made)."""
    return backend_for(location, domain).open()


def writable(location: JournalLocation, domain: Domain[Any]) -> None:
    """Refuse now, in one line, a location no journal may be written at; nothing is made.

    A file may be written if it is a journal or does not exist yet, in a folder (or where
    one can be made); a database if it is a journal or empty, reachable, and durable
    (:mod:`controller.journal.postgres.connection`). Another SQLite file or a database of
    other tables is never made a journal.
    """
    backend_for(location, domain).writable()


def append_to(
    location: JournalLocation, domain: Domain[State], *, must_exist: bool = True
) -> JournalPort[Any, State]:
    """The journal a command appends to (:func:`writable`); it must exist unless ``must_exist``.

    A journal that does not exist yet (no file; a database without the journal's tables) is
    made only when the command feeds it events (``jackpotd apply``, a first enrollment).
    """
    backend = backend_for(location, domain)
    backend.writable()
    if must_exist:
        backend.require(" (use --db)")
    return backend.open()


def open_reader(location: JournalLocation, domain: Domain[State]) -> JournalReader[State]:
    """The journal at ``location``, read only: nothing is created, migrated or written."""
    return backend_for(location, domain).reader()


def archive_journal(  # noqa: PLR0913 - the archive command's options, all keywords
    location: JournalLocation,
    out: Path,
    *,
    domain: Domain[Any],
    before: datetime | None,
    rows: int | None,
    keys: Sequence[str],
    now: str,
) -> list[ArchiveRecord]:
    """``jackpotd archive``: the same segments from a file or a database.

    :func:`controller.journal.sqlite.file_archive.archive` on a file,
    :func:`controller.journal.postgres.archive.archive` on a database.
    """
    backend = backend_for(location, domain)
    backend.require()
    return backend.archive(out, before=before, rows=rows, keys=keys, now=now)


def reach_journal(location: JournalLocation, domain: Domain[Any]) -> None:
    """Fail now, in one line, if the database a URL names cannot be reached or is not durable.

    For whoever must not leave anything behind on a journal that cannot open (the demo makes
    its manager's key file first); a file location is checked when it is opened.
    """
    backend_for(location, domain).reach()


def verify_journal(  # noqa: PLR0913 - the journal, its domain, the command's options
    location: JournalLocation,
    *,
    domain: Domain[Any],
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
) -> VerifyReport:
    """``jackpotd verify``'s checks of the journal at ``location``, read only, never migrated.

    A file must be a journal (:func:`controller.journal.sqlite.readonly.check_journal`); a database
    is read in one snapshot. ``archives``: the folder of either's archive segments.
    """
    return backend_for(location, domain).verify(
        keys=keys, anchors=anchors, progress=progress, archives=archives
    )
