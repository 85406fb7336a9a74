"""An SQLite journal's reads for reports, displays and metrics, as typed rows.

Every query the rest of the controller runs on an SQLite journal lives here, behind named
functions that :class:`controller.journal.sqlite.Journal` and its read-only twin offer as
methods (:class:`ReadSide`). They read the materialized ``payouts`` table through
sqlite-utils, on whatever connection they are given: the journal's read-only one for the
display and metrics, which never touches the writer's connection a commit may be using
(docs/journal.md). The rows they give (:mod:`controller.journal.reads`) are every backend's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar

import msgspec

from controller.journal.reads import Hit, PayoutRecord, PendingPayout, payout_record
from controller.journal.sqlite.payouts import payouts_after

if TYPE_CHECKING:
    import sqlite_utils

    from controller.effects import PayoutMade


_HIT: Final = "kind = 'progressive' AND from_meter_cents > 0"


_NEEDED_VERIFICATION: Final = (
    "(kind = 'progressive' OR verified_by IS NOT NULL OR status = 'pending')"
)


_Row = TypeVar("_Row", bound=msgspec.Struct)


def _rows(
    database: sqlite_utils.Database,
    kind: type[_Row],
    query: str,
    params: list[object] | None = None,
) -> list[_Row]:
    # strict=False: SQLite stores booleans as 0 and 1.
    return [
        msgspec.convert(dict(row), kind, strict=False)
        for row in database.query(query, params or [])
    ]


def committed_seq(database: sqlite_utils.Database) -> int:
    """The last committed journal row, 0 if there is none."""
    rows = list(database.query("SELECT coalesce(max(seq), 0) AS seq FROM journal"))
    return int(rows[0]["seq"])


def pending_payouts(database: sqlite_utils.Database) -> list[PendingPayout]:
    """The payouts awaiting verification, oldest first."""
    fields = ", ".join(PendingPayout.__struct_fields__)
    query = f"SELECT {fields} FROM payouts WHERE status = 'pending' ORDER BY seq"  # noqa: S608
    return _rows(database, PendingPayout, query)


def oldest_pending_at(database: sqlite_utils.Database) -> str | None:
    """When the oldest payout awaiting verification was made, ``None`` if none awaits."""
    rows = list(database.query("SELECT min(at) AS at FROM payouts WHERE status = 'pending'"))
    return str(rows[0]["at"]) if rows and rows[0]["at"] is not None else None


def hits(
    database: sqlite_utils.Database, *, newest_first: bool = False, limit: int | None = None
) -> list[Hit]:
    """The progressive hits paid from a meter, in journal order (or newest first)."""
    fields = ", ".join(Hit.__struct_fields__)
    order = "DESC" if newest_first else ""
    query = f"SELECT {fields} FROM payouts WHERE {_HIT} ORDER BY seq {order}"  # noqa: S608
    if limit is None:
        return _rows(database, Hit, query)
    return _rows(database, Hit, f"{query} LIMIT ?", [limit])


def count_payouts(database: sqlite_utils.Database, *, excluding_kind: str) -> int:
    """How many payouts the journal holds, those of one kind left out."""
    query = "SELECT count(*) AS n FROM payouts WHERE kind != ?"
    return int(next(iter(database.query(query, [excluding_kind])))["n"])


def verification_records(
    database: sqlite_utils.Database, *, pending_only: bool = False, pool_id: str | None = None
) -> list[PayoutRecord]:
    """Progressive hits and payouts that needed verification, newest first, filtered."""
    where, params = [_NEEDED_VERIFICATION], list[object]()
    if pending_only:
        where.append("status = 'pending'")
    if pool_id:
        where.append("pool_id = ?")
        params.append(pool_id)
    query = f"SELECT * FROM payouts WHERE {' AND '.join(where)} ORDER BY seq DESC"  # noqa: S608
    return [payout_record(row) for row in database.query(query, params)]


LAST_VERIFIED: Final = (
    "SELECT * FROM payouts WHERE verified_seq IS NOT NULL ORDER BY verified_seq DESC LIMIT ?"
)
"""The newest pays verified, through the index ``payouts_verified`` (journal/schema.py)."""


def last_verified(database: sqlite_utils.Database, limit: int) -> list[PayoutRecord]:
    """The last ``limit`` pays verified, the newest verification first (an index's few rows)."""
    return [payout_record(row) for row in database.query(LAST_VERIFIED, [limit])]


class ReadSide:
    """The named reads, as methods of a journal that has a read-only connection (``reader``)."""

    @property
    def reader(self) -> sqlite_utils.Database:
        """The connection the reads run on; a journal backend provides it."""
        raise NotImplementedError

    def committed_seq(self) -> int:
        """The last committed journal row, 0 if there is none (:func:`committed_seq`)."""
        return committed_seq(self.reader)

    def pending_payouts(self) -> list[PendingPayout]:
        """The payouts awaiting verification, oldest first."""
        return pending_payouts(self.reader)

    def oldest_pending_at(self) -> str | None:
        """When the oldest payout awaiting verification was made, ``None`` if none awaits."""
        return oldest_pending_at(self.reader)

    def hits(self, *, newest_first: bool = False, limit: int | None = None) -> list[Hit]:
        """The progressive hits paid from a meter (:func:`hits`)."""
        return hits(self.reader, newest_first=newest_first, limit=limit)

    def count_payouts(self, *, excluding_kind: str) -> int:
        """How many payouts the journal holds, those of one kind left out."""
        return count_payouts(self.reader, excluding_kind=excluding_kind)

    def verification_records(
        self, *, pending_only: bool = False, pool_id: str | None = None
    ) -> list[PayoutRecord]:
        """Progressive hits and payouts that needed verification, newest first."""
        return verification_records(self.reader, pending_only=pending_only, pool_id=pool_id)

    def last_verified(self, limit: int) -> list[PayoutRecord]:
        """The last ``limit`` pays verified, the newest verification first."""
        return last_verified(self.reader, limit)

    def payouts_since(self, seq: int) -> list[tuple[int, str, PayoutMade]]:
        """Each payout made after row ``seq``, as made: its row, its time, the payout.

        What a sink that announces hits reads to catch up after a crash (:mod:`.sqlite.payouts`).
        """
        return payouts_after(self.reader.conn, seq)
