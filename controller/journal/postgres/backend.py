"""The PostgreSQL backend: a journal in a database (:class:`.PostgresJournal`).

Registered under the ``postgresql`` scheme in :data:`controller.journal.backends.BACKENDS`:
every ``postgresql://`` (or ``postgres://``) URL. Several controller nodes may share the
database, so the sequencer opens it fenced (docs/ha.md, "The fenced sequencer").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic

from controller.journal.domain import State
from controller.journal.postgres import archive, checks
from controller.journal.postgres.connection import connect
from controller.journal.postgres.readonly import PostgresReader, database_version, no_journal
from controller.journal.postgres.store import PostgresJournal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.fence import Fence
    from controller.journal.row_checks import VerifyReport


class PostgresBackend(Generic[State]):
    """The journal in the PostgreSQL database at ``url``, recording ``domain``."""

    def __init__(self, url: DatabaseUrl, domain: Domain[State]) -> None:
        self.url = url
        self.domain = domain

    @property
    def location(self) -> DatabaseUrl:
        """The journal's database."""
        return self.url

    def open(self) -> PostgresJournal[State]:
        """The journal, opened for writing (an empty database is given the journal's tables)."""
        return PostgresJournal(self.url, domain=self.domain)

    def open_sequenced(self, fence: Fence) -> PostgresJournal[State]:
        """The journal with the sequencer's fence taken over (``FencedError``: held live)."""
        return PostgresJournal(self.url, fence=fence, domain=self.domain)

    def writable(self) -> None:
        """A journal or an empty database, reachable and durable."""
        database_version(self.url, writes=True)

    def require(self, hint: str = "") -> None:  # noqa: ARG002 - the database's message says
        """The database must hold the journal's tables."""
        if database_version(self.url) is None:
            raise no_journal(self.url)

    def reader(self) -> PostgresReader[State]:
        """The database, read only (:class:`.readonly.PostgresReader`)."""
        return PostgresReader(self.url, self.domain)

    def archive(
        self,
        out: Path,
        *,
        before: datetime | None,
        rows: int | None,
        keys: Sequence[str],
        now: str,
    ) -> list[ArchiveRecord]:
        """:func:`controller.journal.postgres.archive.archive`."""
        return archive.archive(
            self.url, out, before=before, rows=rows, keys=keys, now=now, domain=self.domain
        )

    def reach(self) -> None:
        """Connect once: unreachable or not durable is said in one line."""
        connect(self.url).close()

    def verify(
        self,
        *,
        keys: Sequence[str],
        anchors: Sequence[Anchor],
        progress: Callable[[int, int], None] | None,
        archives: Path | None,
    ) -> VerifyReport:
        """The database must hold a journal; then :func:`checks.verify`, in one snapshot."""
        self.require()
        return checks.verify(
            self.url,
            keys=keys,
            anchors=anchors,
            progress=progress,
            archives=archives,
            domain=self.domain,
        )
