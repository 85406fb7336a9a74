"""The ledger's journal in an SQLite file: :mod:`controller.journal.sqlite`, recording the ledger.

:class:`Journal` and :class:`ReadOnlyJournal` are the backend's, opened with
:data:`controller.ledger.domain.LEDGER` unless another domain is given; :func:`verify` and
:func:`archive` are ``jackpotd verify`` and ``jackpotd archive`` of a file, replayed with it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from controller.journal import sqlite
from controller.journal.sqlite import file_archive
from controller.journal.sqlite import readonly as file_reader
from controller.journal.sqlite import verify as file_verify
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

if TYPE_CHECKING:
    from pathlib import Path

    from controller.journal.domain import Domain

__all__ = ["Journal", "ReadOnlyJournal", "archive", "verify"]


class Journal(sqlite.Journal[LedgerState]):
    """The ledger's journal in the SQLite file at ``path`` (the backend's ``Journal``)."""

    def __init__(self, path: Path | str, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(path, domain)


class ReadOnlyJournal(file_reader.ReadOnlyJournal[LedgerState]):
    """The ledger's journal file, read only (the backend's ``ReadOnlyJournal``)."""

    def __init__(self, path: Path | str, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(path, domain)


verify = functools.partial(file_verify.verify, domain=LEDGER)
"""``jackpotd verify`` of the file, replayed with the ledger."""
archive = functools.partial(file_archive.archive, domain=LEDGER)
"""``jackpotd archive`` of the file, replayed with the ledger."""
