"""Writing a batch's changes to the materialized state of a PostgreSQL journal.

The materialized tables (pools, tables, rounds, payouts, operators, ...) are what the journal
restores from; a group commit writes each changed row once, in the same transaction as the
batch's journal rows (controller/journal/postgres/store.py), and the checkpoint's snapshot
with it when the batch sealed one. The site messages the batch queued go into the outbox to
central (:mod:`controller.journal.postgres.site_messages`) in the same transaction.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final

from psycopg import sql

from controller.journal.checkpoints import KEEP
from controller.journal.postgres.site_messages import INSERT as QUEUE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.journal.appending import Changed
    from controller.journal.checkpoints import Sealed
    from controller.journal.postgres.connection import Connection
    from controller.ports import Receipt

DEVICES: Final = (
    "INSERT INTO device_seqs (table_id, device, high) VALUES (%s, %s, %s) "
    "ON CONFLICT (table_id, device) DO UPDATE SET high = GREATEST(device_seqs.high, EXCLUDED.high)"
)


@functools.cache
def _upsert(table: str, keys: tuple[str, ...], values: tuple[str, ...]) -> sql.Composed:
    """``INSERT ... ON CONFLICT DO UPDATE`` of a materialized table, built once per table."""
    names = sql.SQL(", ").join(sql.Identifier(name) for name in (*keys, *values))
    marks = sql.SQL(", ").join(sql.Placeholder() for _ in (*keys, *values))
    updates = sql.SQL(", ").join(
        sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(name)) for name in values
    )
    return sql.SQL("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {}").format(
        sql.Identifier(table),
        names,
        marks,
        sql.SQL(", ").join(sql.Identifier(name) for name in keys),
        updates,
    )


def materialize(connection: Connection, changed: Changed) -> None:
    """Write each changed row of the materialized state once, as the batch left it."""
    with connection.cursor() as cursor:
        for table, keys, values, rows in changed.writes:
            cursor.executemany(_upsert(table, keys, values), rows)
        cursor.executemany(
            "DELETE FROM rounds WHERE table_id = %s AND round_id = %s", changed.rounds_closed
        )
        cursor.executemany(
            "DELETE FROM operators WHERE name = %s",
            [(name,) for name in changed.operators_removed],
        )
        for row in changed.payouts:
            statement = sql.SQL("INSERT INTO payouts ({}) VALUES ({})").format(
                sql.SQL(", ").join(sql.Identifier(name) for name in row),
                sql.SQL(", ").join(sql.Placeholder() for _ in row),
            )
            cursor.execute(statement, tuple(row.values()))
        cursor.executemany(
            "UPDATE payouts SET status = 'paid', verified_by = %s, verified_seq = %s "
            "WHERE payout_id = %s",
            changed.verified,
        )
        if changed.site_messages:
            cursor.executemany(QUEUE, changed.site_messages)


def store_snapshot(connection: Connection, receipts: Sequence[Receipt], sealed: Sealed) -> None:
    """The checkpoint's snapshot, if this batch journaled it; the last few kept."""
    for receipt in receipts:
        if receipt.event_id == sealed.event.event_id and not receipt.duplicate and receipt.applied:
            connection.execute(
                "INSERT INTO snapshots (seq, head_seq, state) VALUES (%s, %s, %s)",
                [receipt.seq, sealed.event.head_seq, sealed.snapshot],
            )
            connection.execute(
                "DELETE FROM snapshots WHERE seq NOT IN "
                "(SELECT seq FROM snapshots ORDER BY seq DESC LIMIT %s)",
                [KEEP],
            )
