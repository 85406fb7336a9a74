"""Opening the journal a location names: the SQLite file, or the PostgreSQL database (docs/ha.md).

Start-up and the commands that write open their journal here, through
:class:`controller.journal.port.JournalPort`, whichever backend holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.journal.errors import JournalError
from controller.journal.location import DatabaseUrl
from controller.journal.store import Journal

if TYPE_CHECKING:
    from controller.journal.location import JournalLocation
    from controller.journal.port import JournalPort


def open_journal(location: JournalLocation) -> JournalPort[Any]:
    """The journal at ``location``, opened for writing (an SQLite file's folder is made)."""
    if isinstance(location, DatabaseUrl):
        raise JournalError(
            f"{location}: this controller cannot open a PostgreSQL journal yet (docs/ha.md)"
        )
    location.parent.mkdir(parents=True, exist_ok=True)
    return Journal(location)
