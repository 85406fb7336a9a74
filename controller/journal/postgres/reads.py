"""The PostgreSQL journal's named reads and its materialized state, as the SQLite file's.

The named reads are every backend's (:class:`controller.journal.read_side.ReadSide`), run
on the reads' connection with PostgreSQL's parameters (:data:`DATABASE`); the materialized
state's :data:`~controller.journal.restore.STATE_QUERIES` are run as they are. They return
the same typed rows as the file's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from psycopg.rows import dict_row

from controller.effects import PayoutMade
from controller.journal.checkpoints import StoredSnapshot
from controller.journal.postgres.rows import rows_of_kinds
from controller.journal.read_side import Dialect, ReadSide
from controller.journal.reads import PayoutRecord, payout_record
from controller.journal.restore import LOCK_KINDS, STATE_QUERIES, restored

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.journal.domain import Domain, State
    from controller.journal.postgres.connection import Connection

DATABASE: Final = Dialect(mark="%s", made="made")
"""A database's queries: ``%s`` parameters; two payouts of one row ordered by ``made``."""


def _dicts(
    connection: Connection, query: str, params: list[Any] | None = None
) -> list[dict[str, Any]]:
    with connection.cursor(row_factory=dict_row) as cursor:
        return cursor.execute(query, params).fetchall()


def load_state(connection: Connection, domain: Domain[State]) -> State:
    """The domain's state as materialized in the database."""
    rows = {name: _dicts(connection, query) for name, query in STATE_QUERIES.items()}
    return restored(domain, rows, lambda: rows_of_kinds(connection, *LOCK_KINDS))


def stored_snapshots(connection: Connection) -> list[StoredSnapshot]:
    """The snapshots the journal keeps, newest first."""
    rows = connection.execute("SELECT seq, head_seq, state FROM snapshots ORDER BY seq DESC")
    return [StoredSnapshot(int(seq), int(head), str(state)) for seq, head, state in rows]


def committed_seq(connection: Connection) -> int:
    """The last committed journal row, 0 if there is none."""
    found = connection.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()
    return int(found[0]) if found else 0


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


class PostgresReadSide(ReadSide):
    """The named reads, as methods of a journal that has a reads' connection (``reader``)."""

    dialect: ClassVar[Dialect] = DATABASE

    @property
    def reader(self) -> Connection:
        """The connection the reads run on; the journal provides it."""
        raise NotImplementedError

    def query(self, query: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
        """The rows a query selects, on the reads' connection."""
        return _dicts(self.reader, query, list(params))

    def device_highs(self) -> dict[tuple[str, str], int]:
        """The highest event ``seq`` journaled from each device."""
        rows = self.reader.execute("SELECT table_id, device, high FROM device_seqs").fetchall()
        return {(str(table), str(device)): int(high) for table, device, high in rows}

    def payouts_since(self, seq: int) -> list[tuple[int, str, PayoutMade]]:
        """Each payout made after row ``seq``, as made: its row, its time, the payout."""
        return payouts_after(self.reader, seq)
