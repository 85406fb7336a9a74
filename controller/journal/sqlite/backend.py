"""The SQLite backend: a journal in one file (:class:`controller.journal.sqlite.store.Journal`).

Registered under the ``sqlite`` scheme in :data:`controller.journal.backends.BACKENDS`: every
location that is a file's path. A file has one writer and no fence, so the sequencer opens it
as any writer does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic

from controller.journal.domain import State
from controller.journal.errors import JournalError, NotAJournalError
from controller.journal.sqlite import file_archive, verify
from controller.journal.sqlite.readonly import ReadOnlyJournal, check_journal
from controller.journal.sqlite.store import Journal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain
    from controller.journal.postgres.fence import Fence
    from controller.journal.row_checks import VerifyReport


class SqliteBackend(Generic[State]):
    """The journal in the SQLite file at ``path``, recording ``domain``."""

    def __init__(self, path: Path, domain: Domain[State]) -> None:
        self.path = path
        self.domain = domain

    @property
    def location(self) -> Path:
        """The journal's file."""
        return self.path

    def open(self) -> Journal[State]:
        """The journal, opened for writing; the file's folder is made."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return Journal(self.path, self.domain)

    def open_sequenced(self, fence: Fence) -> Journal[State]:  # noqa: ARG002 - a file has no fence
        """The journal for the sequencer: one writer, no fence to take."""
        return self.open()

    def writable(self) -> None:
        """A journal or no file yet, in a folder (or where one can be made)."""
        path = self.path
        folder = path.parent
        if folder.exists() and not folder.is_dir():
            raise JournalError(f"{path}: cannot create the journal: {folder} is not a folder")
        if path.exists() and path.stat().st_size > 0:
            try:
                check_journal(path)
            except NotAJournalError:
                raise
            except JournalError:
                pass  # unreadable for another reason: the writer opening it says which

    def require(self, hint: str = "") -> None:
        """The file must exist."""
        if not self.path.exists():
            raise JournalError(f"{self.path}: no such journal{hint}")

    def reader(self) -> ReadOnlyJournal[State]:
        """The file, read only (:class:`controller.journal.sqlite.readonly.ReadOnlyJournal`)."""
        return ReadOnlyJournal(self.path, self.domain)

    def archive(
        self,
        out: Path,
        *,
        before: datetime | None,
        rows: int | None,
        keys: Sequence[str],
        now: str,
    ) -> list[ArchiveRecord]:
        """:func:`controller.journal.sqlite.file_archive.archive`."""
        return file_archive.archive(
            self.path, out, before=before, rows=rows, keys=keys, now=now, domain=self.domain
        )

    def reach(self) -> None:
        """Nothing to reach: the file is checked when it is opened."""

    def verify(
        self,
        *,
        keys: Sequence[str],
        anchors: Sequence[Anchor],
        progress: Callable[[int, int], None] | None,
        archives: Path | None,
    ) -> VerifyReport:
        """The file must be a journal (:func:`check_journal`); then :func:`verify.verify`."""
        check_journal(self.path)
        return verify.verify(
            self.path,
            keys=keys,
            anchors=anchors,
            progress=progress,
            archives=archives,
            domain=self.domain,
        )
