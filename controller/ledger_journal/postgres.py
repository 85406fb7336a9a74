"""The ledger's journal in a PostgreSQL database: the PostgreSQL backend, recording the ledger.

:class:`PostgresJournal` and :class:`PostgresReader` are the backend's, opened with
:data:`controller.ledger.domain.LEDGER` unless another domain is given; :func:`verify` and
:func:`archive` are ``jackpotd verify`` and ``jackpotd archive`` of a database. Importing this
module loads psycopg, which an SQLite journal's process never needs.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from controller.journal.postgres import archive as database_archive
from controller.journal.postgres import checks, readonly, store
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

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

__all__ = ["PostgresJournal", "PostgresReader", "archive", "verify"]


class PostgresJournal(store.PostgresJournal[LedgerState]):
    """The ledger's journal in the database at ``url`` (:class:`.store.PostgresJournal`)."""

    def __init__(
        self,
        url: DatabaseUrl,
        *,
        fence: Fence | None = None,
        standby: bool = False,
        clock: Callable[[], float] = time.monotonic,
        domain: Domain[LedgerState] = LEDGER,
    ) -> None:
        super().__init__(url, fence=fence, standby=standby, clock=clock, domain=domain)


class PostgresReader(readonly.PostgresReader[LedgerState]):
    """The ledger's journal in the database, read only (:class:`.readonly.PostgresReader`)."""

    def __init__(self, url: DatabaseUrl, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(url, domain)


def verify(
    url: DatabaseUrl,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
) -> VerifyReport:
    """``jackpotd verify`` of the database (:func:`controller.journal.postgres.checks.verify`)."""
    return checks.verify(
        url, keys=keys, anchors=anchors, progress=progress, archives=archives, domain=LEDGER
    )


def archive(  # noqa: PLR0913 - the command's options, all keywords
    url: DatabaseUrl,
    directory: Path,
    *,
    before: datetime | None = None,
    rows: int | None = None,
    keys: Sequence[str] = (),
    now: str,
) -> list[ArchiveRecord]:
    """``jackpotd archive`` of the database (the backend's ``archive``)."""
    return database_archive.archive(
        url, directory, before=before, rows=rows, keys=keys, now=now, domain=LEDGER
    )
