"""The archive segments a journal records (its table ``archives``), as every reader reads them.

Kept apart from the archiving itself (controller/journal/archive.py) so that what reads the
records (``verify``, the start-up check, PostgreSQL's archive) imports no archiving, and the
archiving may import them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from controller.journal.segments import Sealed

COLUMNS: Final = (
    "segment", "first_seq", "last_seq", "prev_hash", "last_hash", "rows", "sha256",
    "checkpoint_seq", "state", "archived_at",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ArchiveRecord(Sealed):
    """A segment as the live journal records it (the table ``archives``)."""

    checkpoint_seq: int | None
    state: str
    """The snapshot of the ledger state after row ``last_seq`` (:mod:`.snapshot`)."""
    archived_at: str
