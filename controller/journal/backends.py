"""Opening the journal a location names: the SQLite file, or the PostgreSQL database (docs/ha.md).

Start-up and the commands that write open their journal here, through
:class:`controller.journal.port.JournalPort`, whichever backend holds it; ``jackpotd verify``
checks either without opening it for writing (:func:`verify_journal`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.journal import verify
from controller.journal.errors import JournalError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres import PostgresJournal, checks
from controller.journal.postgres.connection import connect
from controller.journal.readonly import check_journal
from controller.journal.store import Journal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.location import JournalLocation
    from controller.journal.port import JournalPort
    from controller.journal.verify import VerifyReport


def open_journal(location: JournalLocation) -> JournalPort[Any]:
    """The journal at ``location``, opened for writing (an SQLite file's folder is made)."""
    if isinstance(location, DatabaseUrl):
        return PostgresJournal(location)
    location.parent.mkdir(parents=True, exist_ok=True)
    return Journal(location)


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
    is read in one snapshot. A PostgreSQL journal has no archive segments (docs/ha.md).
    """
    if isinstance(location, DatabaseUrl):
        if archives is not None:
            raise JournalError(f"{location}: a PostgreSQL journal has no archive segments")
        return checks.verify(location, keys=keys, anchors=anchors, progress=progress)
    check_journal(location)
    return verify.verify(location, keys=keys, anchors=anchors, progress=progress, archives=archives)
