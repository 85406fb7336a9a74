"""A checkpoint's snapshot in an SQLite journal: stored in the checkpoint's transaction, read back.

What a checkpoint is, what it signs and how it is trusted is :mod:`controller.journal.checkpoints`
and :mod:`controller.journal.state_trust`, which every backend shares; the SQLite file keeps the
last :data:`~controller.journal.checkpoints.KEEP` snapshots in its table ``snapshots``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal.checkpoints import KEEP, Sealed, StoredSnapshot

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from controller.ports import Receipt


def store_snapshot(
    connection: sqlite3.Connection, receipts: Sequence[Receipt], sealed: Sealed
) -> None:
    """Store the snapshot of a checkpoint journaled by this transaction; keep the last few.

    Nothing is stored if the checkpoint was not written (a duplicate of one journaled before).
    """
    for receipt in receipts:
        if receipt.event_id == sealed.event.event_id and not receipt.duplicate and receipt.applied:
            connection.execute(
                "INSERT INTO snapshots (seq, head_seq, state) VALUES (?, ?, ?)",
                [receipt.seq, sealed.event.head_seq, sealed.snapshot],
            )
            connection.execute(
                "DELETE FROM snapshots WHERE seq NOT IN "
                "(SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)",
                [KEEP],
            )


def stored_snapshots(connection: sqlite3.Connection) -> list[StoredSnapshot]:
    """The snapshots the journal keeps, newest first."""
    rows = connection.execute("SELECT seq, head_seq, state FROM snapshots ORDER BY seq DESC")
    return [StoredSnapshot(int(seq), int(head), str(state)) for seq, head, state in rows]
