"""The ledger's journal in an SQLite file: :mod:`controller.journal.sqlite`, recording the ledger.

:class:`Journal` and :class:`ReadOnlyJournal` are the backend's, opened with
:data:`controller.ledger.domain.LEDGER` unless another domain is given; :func:`verify` and
:func:`archive` are ``jackpotd verify`` and ``jackpotd archive`` of a file, replayed with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal import sqlite
from controller.journal.sqlite import file_archive
from controller.journal.sqlite import readonly as file_reader
from controller.journal.sqlite import verify as file_verify
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain
    from controller.journal.row_checks import VerifyReport

__all__ = ["Journal", "ReadOnlyJournal", "archive", "verify"]


class Journal(sqlite.Journal[LedgerState]):
    """The ledger's journal in the SQLite file at ``path`` (the backend's ``Journal``)."""

    def __init__(self, path: Path | str, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(path, domain)


class ReadOnlyJournal(file_reader.ReadOnlyJournal[LedgerState]):
    """The ledger's journal file, read only (the backend's ``ReadOnlyJournal``)."""

    def __init__(self, path: Path | str, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(path, domain)


def verify(
    path: Path | str,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
) -> VerifyReport:
    """``jackpotd verify`` of the file (:func:`controller.journal.sqlite.verify.verify`)."""
    return file_verify.verify(
        path, keys=keys, anchors=anchors, progress=progress, archives=archives, domain=LEDGER
    )


def archive(  # noqa: PLR0913 - the command's options, all keywords
    path: Path,
    directory: Path,
    *,
    before: datetime | None = None,
    rows: int | None = None,
    keys: Sequence[str] = (),
    now: str,
) -> list[ArchiveRecord]:
    """``jackpotd archive`` of the file (:func:`controller.journal.sqlite.file_archive.archive`)."""
    return file_archive.archive(
        path, directory, before=before, rows=rows, keys=keys, now=now, domain=LEDGER
    )
