"""The in-memory backend: a journal in this process's memory (:class:`.MemoryJournal`).

Registered under the ``memory`` scheme in :data:`controller.journal.backends.BACKENDS`: every
``memory://NAME``. One process holds it, so it has one writer's journal at a time as a file
does, and no fence; the sequencer opens it as any writer does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic

from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.memory import database, readonly
from controller.journal.memory.store import MemoryJournal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain
    from controller.journal.location import MemoryLocation
    from controller.journal.postgres.fence import Fence
    from controller.journal.row_checks import VerifyReport


class MemoryBackend(Generic[State]):
    """The journal ``memory://NAME`` of this process, recording ``domain``."""

    def __init__(self, location: MemoryLocation, domain: Domain[State]) -> None:
        self._location = location
        self.domain = domain

    @property
    def location(self) -> MemoryLocation:
        """The journal's name."""
        return self._location

    def open(self) -> MemoryJournal[State]:
        """The journal, opened for writing (made if this process holds none of the name)."""
        return MemoryJournal(self._location, self.domain)

    def open_sequenced(self, fence: Fence) -> MemoryJournal[State]:  # noqa: ARG002 - no fence
        """The journal for the sequencer: one process, one writer, no fence to take."""
        return self.open()

    def writable(self) -> None:
        """A journal, or nothing yet, under the name (anything else is refused)."""
        if database.exists(self._location):
            readonly.check_journal(self._location)

    def require(self, hint: str = "") -> None:
        """This process must hold a journal of the name."""
        if not database.exists(self._location):
            raise readonly.no_journal(self._location, hint)

    def reader(self) -> readonly.MemoryReader[State]:
        """The journal, read only (:class:`.readonly.MemoryReader`)."""
        return readonly.MemoryReader(self._location, self.domain)

    def archive(
        self,
        out: Path,
        *,
        before: datetime | None,
        rows: int | None,
        keys: Sequence[str],
        now: str,
    ) -> list[ArchiveRecord]:
        """Refused: a memory journal ends with its process; nothing of it is kept to archive."""
        del out, before, rows, keys, now
        raise JournalError(
            f"{self._location}: a journal in memory is not archived: it ends with its process"
        )

    def reach(self) -> None:
        """Nothing to reach: the journal is in this process."""

    def verify(
        self,
        *,
        keys: Sequence[str],
        anchors: Sequence[Anchor],
        progress: Callable[[int, int], None] | None,
        archives: Path | None,
    ) -> VerifyReport:
        """The name must hold a journal; then :func:`.readonly.verify`, on one moment's copy."""
        return readonly.verify(
            self._location,
            keys=keys,
            anchors=anchors,
            progress=progress,
            archives=archives,
            domain=self.domain,
        )
