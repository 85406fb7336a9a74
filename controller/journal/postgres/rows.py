"""Journal rows in PostgreSQL, read back as their canonical columns (controller/journal/rows.py).

A row is stored in the compact form the SQLite file uses from schema 10
(:func:`controller.journal.rows.stored_row`), but for its time, kept as its canonical text;
it reads back as the same :class:`~controller.journal.rows.Row`: the canonical texts the hash
chain covers, ``outcome`` from whether a ``reason`` is stored, ``prev_hash`` the hash of the
row before. A stored row that is not exactly that form reads as its stored text, which its
hash does not cover, and ``form`` says why (as in the SQLite file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from controller.journal.chain import GENESIS
from controller.journal.compact import FormError, at_text, canonical, canonical_texts
from controller.journal.rows import COLUMNS, WRITTEN, Row
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.journal.postgres.connection import Connection

INSERT: Final = (
    f"INSERT INTO journal ({', '.join(WRITTEN)}) "  # noqa: S608 - fixed column names
    f"VALUES ({', '.join('%s' for _ in WRITTEN)})"
)
"""A row's columns and its provenance (version 5 on), which the hash chain does not cover."""
_SELECT: Final = f"SELECT {', '.join(COLUMNS)} FROM journal"  # noqa: S608 - fixed names
_HASH_BYTES: Final = len(GENESIS) // 2


def stored(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row as :func:`controller.journal.appending.append_events` makes it, as stored here."""
    seq, event_id, kind, at, *rest = row
    return (seq, event_id, kind, at_text(at), *rest)


def _row(found: tuple[Any, ...], previous: str) -> Row:
    seq, event_id, kind, at, event_text, reason, effects_text, digest = found
    values: dict[str, Any] = {
        "seq": int(seq),
        "event_id": event_id,
        "kind": kind,
        "at": at,
        "event": event_text,
        "outcome": APPLIED if reason is None else REJECTED,
        "reason": "" if reason is None else reason,
        "effects": effects_text,
        "prev_hash": previous,
        "hash": bytes(digest).hex(),
    }
    form = "" if len(digest) == _HASH_BYTES else "its hash is not stored as 32 bytes"
    try:
        event, effects = canonical(kind, event_id, at, event_text, effects_text)
    except FormError as error:
        return Row(values, None, None, form or f"its stored event and effects: {error}")
    values["event"], values["effects"] = canonical_texts(event, effects)
    return Row(values, event, effects, form)


def hash_before(connection: Connection, seq: int) -> str:
    """The hash row ``seq`` chains to: row ``seq - 1``'s, or the archive's that ends there.

    Sixty-four zeros for row 1, or when neither is in the database (rows were removed).
    """
    if seq <= 1:
        return GENESIS
    found = connection.execute("SELECT hash FROM journal WHERE seq = %s", [seq - 1]).fetchone()
    if found is not None:
        return bytes(found[0]).hex()
    # to_regclass: a journal of a schema before archives has no such table, and a failed
    # query would end the reader's transaction.
    archived = connection.execute("SELECT to_regclass('archives') IS NOT NULL").fetchone()
    if archived is None or not archived[0]:
        return GENESIS
    found = connection.execute(
        "SELECT last_hash FROM archives WHERE last_seq = %s", [seq - 1]
    ).fetchone()
    return GENESIS if found is None else str(found[0])


def read_rows(connection: Connection, after: int = 0) -> Iterator[Row]:
    """Every row after row ``after``, in order, streamed (a server-side cursor)."""
    previous: str | None = None
    with connection.cursor(name="journal_rows") as cursor:
        cursor.itersize = 2000
        cursor.execute(f"{_SELECT} WHERE seq > %s ORDER BY seq", [after])
        for found in cursor:
            if previous is None:
                previous = hash_before(connection, int(found[0]))
            row = _row(tuple(found), previous)
            previous = row.values["hash"]
            yield row


def row_at(connection: Connection, seq: int) -> Row | None:
    """Row ``seq``, or None if the journal does not hold it."""
    found = connection.execute(f"{_SELECT} WHERE seq = %s", [seq]).fetchone()
    return None if found is None else _row(tuple(found), hash_before(connection, seq))


def rows_with_ids(connection: Connection, event_ids: list[str]) -> list[Row]:
    """The rows of those event ids (their ``prev_hash`` not read)."""
    query = f"{_SELECT} WHERE event_id = ANY(%s) ORDER BY seq"
    return [_row(tuple(found), GENESIS) for found in connection.execute(query, [event_ids])]


def rows_of_kinds(connection: Connection, *kinds: str) -> list[Row]:
    """The rows of those kinds, in order (their ``prev_hash`` not read)."""
    query = f"{_SELECT} WHERE kind = ANY(%s) ORDER BY seq"
    return [_row(tuple(found), GENESIS) for found in connection.execute(query, [list(kinds)])]


def last_row(connection: Connection) -> tuple[int, str]:
    """The last row's ``seq`` and ``hash`` (0 and sixty-four zeros if none)."""
    found = connection.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    return (0, GENESIS) if found is None else (int(found[0]), bytes(found[1]).hex())


def provenances(connection: Connection, after: int = 0) -> Iterator[tuple[int, str | None]]:
    """Each row's ``seq`` and provenance after row ``after``, in order (None: not recorded)."""
    query = "SELECT seq, provenance FROM journal WHERE seq > %s ORDER BY seq"
    for seq, provenance in connection.execute(query, [after]):
        yield int(seq), None if provenance is None else str(provenance)
