"""The ledger's journal: every backend opened with the ledger as the domain it records.

The journal (:mod:`controller.journal`) records a domain it is handed and imports nothing of
the ledger (docs/architecture.md, "The layers"); the ledger (:mod:`controller.ledger`) knows
nothing of the journal. This package, above both, is where the application binds them: each
way of opening a journal (the factory :mod:`controller.journal.backends`, the sequencer's and a
standby's openings, ``journal copy``) with :data:`controller.ledger.domain.LEDGER` as its
domain, and the journal's port typed with the ledger's state (:data:`LedgerJournal`,
:data:`LedgerReader`). The backends' own classes, opened the same way, are in
:mod:`.sqlite`, :mod:`.postgres` and :mod:`.memory`, and ``journal copy`` (a file into a
database) in :mod:`.copying`, each imported only when asked for (an SQLite journal's process
never loads psycopg, nor a database's the SQLite backend).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from controller.journal import backends, sequencing
from controller.journal.port import JournalPort
from controller.journal.readonly import JournalReader
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.location import DatabaseUrl, JournalLocation
    from controller.journal.postgres import PostgresJournal
    from controller.journal.postgres.fence import Fence
    from controller.journal.row_checks import VerifyReport

__all__ = [
    "LEDGER",
    "LedgerJournal",
    "LedgerReader",
    "append_to",
    "archive_journal",
    "open_journal",
    "open_reader",
    "open_sequenced",
    "open_standby",
    "reach_journal",
    "verify_journal",
    "writable",
]

LedgerJournal: TypeAlias = JournalPort[Any, LedgerState]
"""The journal as the application uses it: any backend, recording the ledger."""
LedgerReader: TypeAlias = JournalReader[LedgerState]
"""A journal opened read only, its state the ledger's."""


def open_journal(location: JournalLocation) -> LedgerJournal:
    """The journal at ``location``, opened for writing (:func:`.backends.open_journal`)."""
    return backends.open_journal(location, LEDGER)


def writable(location: JournalLocation) -> None:
    """Refuse now, in one line, a location no journal may be written at (see the factory's)."""
    backends.writable(location, LEDGER)


def append_to(location: JournalLocation, *, must_exist: bool = True) -> LedgerJournal:
    """The journal a command appends to (:func:`.backends.append_to`)."""
    return backends.append_to(location, LEDGER, must_exist=must_exist)


def open_reader(location: JournalLocation) -> LedgerReader:
    """The journal at ``location``, read only (:func:`.backends.open_reader`)."""
    return backends.open_reader(location, LEDGER)


def archive_journal(  # noqa: PLR0913 - the archive command's options, all keywords
    location: JournalLocation,
    out: Path,
    *,
    before: datetime | None,
    rows: int | None,
    keys: Sequence[str],
    now: str,
) -> list[ArchiveRecord]:
    """``jackpotd archive`` (:func:`.backends.archive_journal`)."""
    return backends.archive_journal(
        location, LEDGER, out, before=before, rows=rows, keys=keys, now=now
    )


def reach_journal(location: JournalLocation) -> None:
    """Fail now, in one line, if the journal's store cannot be reached (see the factory's)."""
    backends.reach_journal(location, LEDGER)


def verify_journal(
    location: JournalLocation,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
) -> VerifyReport:
    """``jackpotd verify``'s checks, read only (:func:`.backends.verify_journal`)."""
    return backends.verify_journal(
        location, LEDGER, keys=keys, anchors=anchors, progress=progress, archives=archives
    )


def open_sequenced(location: JournalLocation, fence: Fence) -> LedgerJournal:
    """The journal for the sequencer of node ``fence.node`` (:func:`.sequencing.open_sequenced`)."""
    return sequencing.open_sequenced(location, fence, LEDGER)


def open_standby(location: DatabaseUrl, fence: Fence) -> PostgresJournal[LedgerState]:
    """A standby's journal, its fence not taken (:func:`.sequencing.open_standby`)."""
    return sequencing.open_standby(location, fence, LEDGER)
