"""The journal's named reads for reports, displays and metrics, written once for every backend.

A backend's journal offers them as methods (:class:`ReadSide`): the last committed row, the
payouts awaiting verification, the hits, the payout records that needed verification, the
last pays verified. Each is one query on the materialized ``payouts`` table, the same on every
backend; what differs is only how a backend runs a query (:meth:`ReadSide.query`), how it marks
a parameter (:class:`Dialect`), and what orders two payouts of one row: the SQLite file's
``payouts`` keep them in the order they were written, PostgreSQL's need the column ``made``
(docs/journal.md). The rows they give are :mod:`controller.journal.reads`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar

import msgspec

from controller.journal.reads import Hit, PayoutRecord, PendingPayout, payout_record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.effects import PayoutMade

HIT: Final = "kind = 'progressive' AND from_meter_cents > 0"
"""A progressive hit paid, at least in part, from a pool's meter."""
NEEDED_VERIFICATION: Final = (
    "(kind = 'progressive' OR verified_by IS NOT NULL OR status = 'pending')"
)
"""A payout a supervisor had to verify, or has verified."""

_Row = TypeVar("_Row", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Dialect:
    """How a backend's queries differ: its parameter's mark, and a payout's order within its row."""

    mark: str
    """The placeholder of one parameter (``?``, ``%s``)."""
    made: str = ""
    """The column that orders the payouts of one journal row, if the row order does not."""

    def order(self, column: str, direction: str = "") -> str:
        """``ORDER BY`` a column, then by :attr:`made` in the same direction."""
        ordered = f"ORDER BY {column} {direction}".rstrip()
        return f"{ordered}, {self.made} {direction}".rstrip() if self.made else ordered

    def last_verified(self) -> str:
        """The newest pays verified, the newest first, to a limit (an index's few rows)."""
        order = self.order("verified_seq", "DESC")
        return f"SELECT * FROM payouts WHERE verified_seq IS NOT NULL {order} LIMIT {self.mark}"  # noqa: S608


class ReadSide:
    """The named reads, as methods of a journal that can run a query on its reads' connection."""

    dialect: ClassVar[Dialect]
    """How this backend's queries are written."""

    def query(self, query: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
        """The rows a query selects, each as a dict of its columns; the backend runs it."""
        raise NotImplementedError

    def payouts_since(self, seq: int) -> list[tuple[int, str, PayoutMade]]:
        """Each payout made after row ``seq``, as made: its row, its time, the payout.

        What a sink that announces hits reads to catch up after a crash; a verification since
        has set the row's status to ``paid``, and the payout as made is given ``pending``.
        """
        raise NotImplementedError

    def _typed(self, kind: type[_Row], query: str, params: Sequence[object] = ()) -> list[_Row]:
        # strict=False: both backends store booleans (tax_report) as 0 and 1.
        return [msgspec.convert(row, kind, strict=False) for row in self.query(query, params)]

    def committed_seq(self) -> int:
        """The last committed journal row, 0 if there is none."""
        (row,) = self.query("SELECT coalesce(max(seq), 0) AS seq FROM journal")
        return int(row["seq"])

    def pending_payouts(self) -> list[PendingPayout]:
        """The payouts awaiting verification, oldest first."""
        fields = ", ".join(PendingPayout.__struct_fields__)
        where = "WHERE status = 'pending'"
        query = f"SELECT {fields} FROM payouts {where} {self.dialect.order('seq')}"  # noqa: S608
        return self._typed(PendingPayout, query)

    def oldest_pending_at(self) -> str | None:
        """When the oldest payout awaiting verification was made, ``None`` if none awaits."""
        rows = self.query("SELECT min(at) AS at FROM payouts WHERE status = 'pending'")
        return str(rows[0]["at"]) if rows and rows[0]["at"] is not None else None

    def hits(self, *, newest_first: bool = False, limit: int | None = None) -> list[Hit]:
        """The progressive hits paid from a meter, in journal order (or newest first)."""
        fields = ", ".join(Hit.__struct_fields__)
        order = self.dialect.order("seq", "DESC" if newest_first else "")
        query = f"SELECT {fields} FROM payouts WHERE {HIT} {order}"  # noqa: S608
        if limit is None:
            return self._typed(Hit, query)
        return self._typed(Hit, f"{query} LIMIT {self.dialect.mark}", [limit])

    def count_payouts(self, *, excluding_kind: str) -> int:
        """How many payouts the journal holds, those of one kind left out."""
        query = f"SELECT count(*) AS n FROM payouts WHERE kind != {self.dialect.mark}"  # noqa: S608
        (row,) = self.query(query, [excluding_kind])
        return int(row["n"])

    def verification_records(
        self, *, pending_only: bool = False, pool_id: str | None = None
    ) -> list[PayoutRecord]:
        """Progressive hits and payouts that needed verification, newest first, filtered."""
        where, params = [NEEDED_VERIFICATION], list[object]()
        if pending_only:
            where.append("status = 'pending'")
        if pool_id:
            where.append(f"pool_id = {self.dialect.mark}")
            params.append(pool_id)
        order = self.dialect.order("seq", "DESC")
        query = f"SELECT * FROM payouts WHERE {' AND '.join(where)} {order}"  # noqa: S608
        return [payout_record(row) for row in self.query(query, params)]

    def last_verified(self, limit: int) -> list[PayoutRecord]:
        """The last ``limit`` pays verified, the newest verification first."""
        return [payout_record(row) for row in self.query(self.dialect.last_verified(), [limit])]
