"""The PostgreSQL journal's named reads and its materialized state, as the SQLite file's.

The same queries as :mod:`controller.journal.reads` and :mod:`controller.journal.restore`
(the materialized state's :data:`~controller.journal.restore.STATE_QUERIES` are run as they
are), with PostgreSQL's parameters; they return the same typed rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec
from psycopg.rows import dict_row

from controller.effects import PayoutMade
from controller.journal.postgres.rows import rows_of_kinds
from controller.journal.reads import Hit, PayoutRecord, PendingPayout, payout_record
from controller.journal.restore import LOCK_KINDS, STATE_QUERIES, restored

if TYPE_CHECKING:
    from controller.journal.domain import Domain, State
    from controller.journal.postgres.connection import Connection

_HIT: Final = "kind = 'progressive' AND from_meter_cents > 0"
_NEEDED_VERIFICATION: Final = (
    "(kind = 'progressive' OR verified_by IS NOT NULL OR status = 'pending')"
)
_Row = TypeVar("_Row", bound=msgspec.Struct)


def _dicts(
    connection: Connection, query: str, params: list[Any] | None = None
) -> list[dict[str, Any]]:
    with connection.cursor(row_factory=dict_row) as cursor:
        return cursor.execute(query, params).fetchall()


def _typed(
    connection: Connection, kind: type[_Row], query: str, params: list[Any] | None = None
) -> list[_Row]:
    # strict=False: tax_report is stored as 0 or 1, as in the SQLite file.
    return [msgspec.convert(row, kind, strict=False) for row in _dicts(connection, query, params)]


def load_state(connection: Connection, domain: Domain[State]) -> State:
    """The domain's state as materialized in the database."""
    rows = {name: _dicts(connection, query) for name, query in STATE_QUERIES.items()}
    return restored(domain, rows, lambda: rows_of_kinds(connection, *LOCK_KINDS))


def committed_seq(connection: Connection) -> int:
    """The last committed journal row, 0 if there is none."""
    found = connection.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()
    return int(found[0]) if found else 0


def pending_payouts(connection: Connection) -> list[PendingPayout]:
    """The payouts awaiting verification, oldest first."""
    fields = ", ".join(PendingPayout.__struct_fields__)
    query = f"SELECT {fields} FROM payouts WHERE status = 'pending' ORDER BY seq, made"  # noqa: S608
    return _typed(connection, PendingPayout, query)


def oldest_pending_at(connection: Connection) -> str | None:
    """When the oldest payout awaiting verification was made, ``None`` if none awaits."""
    found = connection.execute("SELECT min(at) FROM payouts WHERE status = 'pending'").fetchone()
    return None if found is None or found[0] is None else str(found[0])


def hits(
    connection: Connection, *, newest_first: bool = False, limit: int | None = None
) -> list[Hit]:
    """The progressive hits paid from a meter, in journal order (or newest first)."""
    fields = ", ".join(Hit.__struct_fields__)
    order = "DESC" if newest_first else "ASC"
    query = f"SELECT {fields} FROM payouts WHERE {_HIT} ORDER BY seq {order}, made {order}"  # noqa: S608
    if limit is None:
        return _typed(connection, Hit, query)
    return _typed(connection, Hit, f"{query} LIMIT %s", [limit])


def count_payouts(connection: Connection, *, excluding_kind: str) -> int:
    """How many payouts the journal holds, those of one kind left out."""
    found = connection.execute(
        "SELECT count(*) FROM payouts WHERE kind != %s", [excluding_kind]
    ).fetchone()
    return int(found[0]) if found else 0


def verification_records(
    connection: Connection, *, pending_only: bool = False, pool_id: str | None = None
) -> list[PayoutRecord]:
    """Progressive hits and payouts that needed verification, newest first, filtered."""
    where, params = [_NEEDED_VERIFICATION], list[Any]()
    if pending_only:
        where.append("status = 'pending'")
    if pool_id:
        where.append("pool_id = %s")
        params.append(pool_id)
    query = f"SELECT * FROM payouts WHERE {' AND '.join(where)} ORDER BY seq DESC, made DESC"  # noqa: S608
    return payout_records(connection, query, params)


def last_verified(connection: Connection, limit: int) -> list[PayoutRecord]:
    """The last ``limit`` pays verified, the newest verification first (an index's few rows)."""
    query = (
        "SELECT * FROM payouts WHERE verified_seq IS NOT NULL "
        "ORDER BY verified_seq DESC, made DESC LIMIT %s"
    )
    return payout_records(connection, query, [limit])


def payout_records(connection: Connection, query: str, params: list[Any]) -> list[PayoutRecord]:
    """The ``payouts`` rows a query selects (every column), as :class:`PayoutRecord`."""
    return [payout_record(row) for row in _dicts(connection, query, params)]


def payouts_after(connection: Connection, seq: int) -> list[tuple[int, str, PayoutMade]]:
    """Each payout made by a journal row after ``seq``: (its row, its time, the payout as made).

    A verification since has set the row's status to ``paid``; the payout as made was
    ``pending`` then, and is given so (:func:`controller.journal.sqlite.payouts.payouts_after`).
    """
    fields = PayoutMade.__struct_fields__
    query = (
        f"SELECT seq, at, verified_seq, {', '.join(fields)} FROM payouts "  # noqa: S608
        "WHERE seq > %s ORDER BY seq, made"
    )
    made = []
    for row_seq, at, verified_seq, *values in connection.execute(query, [seq]).fetchall():
        payout = dict(zip(fields, values, strict=True))
        payout["tax_report"] = bool(payout["tax_report"])
        if verified_seq is not None:
            payout["status"] = "pending"
        made.append((int(row_seq), str(at), PayoutMade(**payout)))
    return made


class PostgresReadSide:
    """The named reads, as methods of a journal that has a reads' connection (``reader``)."""

    @property
    def reader(self) -> Connection:
        """The connection the reads run on; the journal provides it."""
        raise NotImplementedError

    def device_highs(self) -> dict[tuple[str, str], int]:
        """The highest event ``seq`` journaled from each device."""
        rows = self.reader.execute("SELECT table_id, device, high FROM device_seqs").fetchall()
        return {(str(table), str(device)): int(high) for table, device, high in rows}

    def committed_seq(self) -> int:
        """The last committed row, as another reader sees it (0 if none)."""
        return committed_seq(self.reader)

    def pending_payouts(self) -> list[PendingPayout]:
        """The payouts awaiting verification, oldest first."""
        return pending_payouts(self.reader)

    def oldest_pending_at(self) -> str | None:
        """When the oldest payout awaiting verification was made."""
        return oldest_pending_at(self.reader)

    def hits(self, *, newest_first: bool = False, limit: int | None = None) -> list[Hit]:
        """The progressive hits paid from a meter."""
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
        """Each payout made after row ``seq``, as made: its row, its time, the payout."""
        return payouts_after(self.reader, seq)
