"""Reading the payouts the journal made, as they were made, for whoever must announce them.

The ``payouts`` table is materialized in the same transaction as the journal row that made
each payout (docs/journal.md), so it holds every committed payout, with the row (``seq``) and
time of that commit. A sink that announces hits can ask for those made after the last one it
recorded, to announce any a crash kept from it (drivers.mqtt.sink).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.effects import PayoutMade

if TYPE_CHECKING:
    import sqlite3

_FIELDS = PayoutMade.__struct_fields__


def last_seq(connection: sqlite3.Connection) -> int:
    """The journal's last row, 0 if it is empty or is not a journal (yet)."""
    if not _has_table(connection, "journal"):
        return 0
    (seq,) = connection.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()
    return int(seq)


def payouts_after(connection: sqlite3.Connection, seq: int) -> list[tuple[int, str, PayoutMade]]:
    """Each payout made by a journal row after ``seq``: (its row, its time, the payout as made).

    A verification since has set the row's status to ``paid``; the payout as made was
    ``pending`` then, and is given so.
    """
    if not _has_table(connection, "payouts"):
        return []
    columns = ", ".join(_FIELDS)
    rows = connection.execute(
        f"SELECT seq, at, verified_seq, {columns} FROM payouts "  # noqa: S608 - fixed names
        "WHERE seq > ? ORDER BY seq, rowid",
        (seq,),
    ).fetchall()
    made = []
    for row_seq, at, verified_seq, *values in rows:
        fields = dict(zip(_FIELDS, values, strict=True))
        fields["tax_report"] = bool(fields["tax_report"])
        if verified_seq is not None:
            fields["status"] = "pending"
        made.append((int(row_seq), str(at), PayoutMade(**fields)))
    return made


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return connection.execute(query, (name,)).fetchone() is not None
