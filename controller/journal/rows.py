"""Journal rows as the file stores them, and as the hash chain and every reader sees them.

A row is read as its **canonical** columns, whatever the schema version of the file: ``seq``,
``event_id``, ``kind``, ``at``, ``event`` and ``effects`` (canonical JSON), ``outcome``,
``reason``, ``prev_hash`` and ``hash`` (hex), the fields :mod:`controller.journal.chain` hashes
and the columns the journal had up to schema version 9. From version 10 the file stores less
(docs/journal.md, "What a row stores"):

* ``event``, ``effects`` and ``at`` in their compact forms (:mod:`controller.journal.compact`);
* ``reason`` NULL for an applied event, the refusal's reason otherwise (no ``outcome``);
* ``hash`` as its 32 bytes, and no ``prev_hash``: it is the row before's ``hash`` (for the
  first row after archived ones, the hash the archive ends with; sixty-four zeros for row 1).

A stored row that is not exactly the form this version writes (an edit of the file) reads as
its stored text, which its hash does not cover, and :attr:`Row.form` says why.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from controller.effects import AnyEffect, decode_effects
from controller.events import decode_event
from controller.journal.chain import GENESIS
from controller.journal.compact import FormError, at_text, canonical, canonical_texts, stored
from controller.journal.compact import stored_at as _stored_at
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.events import AnyEvent

COLUMNS: Final = ("seq", "event_id", "kind", "at", "event", "reason", "effects", "hash")
"""The journal table's columns from schema version 10."""
WRITTEN: Final = (*COLUMNS, "provenance")
"""What an append writes: the columns, and the row's provenance (schema 14 on), which the hash
chain does not cover (docs/journal.md, "Provenance")."""
INSERT: Final = (
    f"INSERT INTO journal ({', '.join(WRITTEN)}) "  # noqa: S608 - fixed column names
    f"VALUES ({', '.join('?' for _ in WRITTEN)})"
)
_SELECT: Final = f"SELECT {', '.join(COLUMNS)} FROM journal"  # noqa: S608 - fixed names


@dataclass(frozen=True, slots=True)
class Row:
    """One journal row read back."""

    values: dict[str, Any]
    """The canonical columns (see the module docstring)."""
    event: AnyEvent | None
    """The event, or None if the stored text is not one."""
    effects: tuple[AnyEffect, ...] | None
    """The effects as journaled, or None if the stored text is not a list of them."""
    form: str = ""
    """Why the stored row is not the form this version writes; empty if it is."""


def stored_row(
    values: dict[str, Any], event: AnyEvent, effects: tuple[AnyEffect, ...]
) -> tuple[Any, ...]:
    """The stored columns (:data:`COLUMNS`) of a row whose canonical ``values`` are given."""
    event_text, effects_text = stored(event, effects)
    reason = None if values["outcome"] == APPLIED else values["reason"]
    return (
        values["seq"], values["event_id"], values["kind"], _stored_at(values["at"]),
        event_text, reason, effects_text, bytes.fromhex(values["hash"]),
    )  # fmt: skip


def compact_layout(connection: sqlite3.Connection) -> bool:
    """Whether the file stores rows in the compact form (schema 10 on): no ``prev_hash``."""
    columns = {str(row[1]) for row in connection.execute("PRAGMA table_info(journal)")}
    return "prev_hash" not in columns


def _hex(value: object) -> str:
    return value.hex() if isinstance(value, bytes) else str(value)


def _compact(found: tuple[Any, ...], previous: str) -> Row:
    seq, event_id, kind, at, event_text, reason, effects_text, digest = found
    values: dict[str, Any] = {
        "seq": seq,
        "event_id": event_id,
        "kind": kind,
        "at": at_text(at) if isinstance(at, int) else str(at),
        "event": event_text,
        "outcome": APPLIED if reason is None else REJECTED,
        "reason": "" if reason is None else reason,
        "effects": effects_text,
        "prev_hash": previous,
        "hash": _hex(digest),
    }
    form = ""
    if _stored_at(values["at"]) != at:
        form = "its time is not stored as this version stores it"
    if not isinstance(digest, bytes) or len(digest) != len(GENESIS) // 2:
        form = "its hash is not stored as 32 bytes"
    try:
        event, effects = canonical(str(kind), str(event_id), values["at"], event_text, effects_text)
    except FormError as error:
        return Row(values, None, None, form or f"its stored event and effects: {error}")
    values["event"], values["effects"] = canonical_texts(event, effects)
    return Row(values, event, effects, form)


def _legacy(values: dict[str, Any]) -> Row:
    try:
        event = decode_event(str(values["event"]))
    except (ValueError, TypeError):
        event = None
    try:
        effects = tuple(decode_effects(str(values["effects"])))
    except (ValueError, TypeError):
        effects = None
    return Row(values, event, effects)


def hash_before(connection: sqlite3.Connection, seq: int) -> str | None:
    """The hash row ``seq`` must chain to: row ``seq - 1``'s, or the archive's that ends there.

    None if neither is in the file (rows were removed).
    """
    if seq <= 1:
        return GENESIS
    found = connection.execute("SELECT hash FROM journal WHERE seq = ?", [seq - 1]).fetchone()
    if found is not None:
        return _hex(found[0])
    try:
        archived = connection.execute(
            "SELECT last_hash FROM archives WHERE last_seq = ?", [seq - 1]
        ).fetchone()
    except sqlite3.OperationalError:  # a file of a schema before archives
        return None
    return None if archived is None else str(archived[0])


def read_rows(connection: sqlite3.Connection, after: int = 0) -> Iterator[Row]:
    """Every row after row ``after``, in order, as :class:`Row` (canonical ``values``).

    Each row's ``prev_hash`` is the stored one in a file of schema 9 or before; from schema
    10, the row before's hash as read (for the first row read, :func:`hash_before`).
    """
    if not compact_layout(connection):
        cursor = connection.execute("SELECT * FROM journal WHERE seq > ? ORDER BY seq", [after])
        names = [column[0] for column in cursor.description]
        for found in cursor:
            yield _legacy(dict(zip(names, found, strict=True)))
        return
    previous: str | None = None
    for found in connection.execute(f"{_SELECT} WHERE seq > ? ORDER BY seq", [after]):
        if previous is None:
            previous = hash_before(connection, int(found[0])) or GENESIS
        row = _compact(tuple(found), previous)
        previous = row.values["hash"]
        yield row


def row_at(connection: sqlite3.Connection, seq: int) -> Row | None:
    """Row ``seq``, or None if the file does not hold it."""
    return next(read_rows(connection, seq - 1), None) if _has(connection, seq) else None


def _has(connection: sqlite3.Connection, seq: int) -> bool:
    return connection.execute("SELECT 1 FROM journal WHERE seq = ?", [seq]).fetchone() is not None


def last_row(connection: sqlite3.Connection) -> tuple[int, str] | None:
    """The last row's ``seq`` and ``hash`` (hex), or None if the journal holds no row."""
    found = connection.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    return None if found is None else (int(found[0]), _hex(found[1]))


def _where(connection: sqlite3.Connection, where: str, params: list[Any]) -> Iterator[Row]:
    """The rows that match, in order, without their ``prev_hash`` (sixty-four zeros)."""
    if not compact_layout(connection):
        cursor = connection.execute(f"SELECT * FROM journal WHERE {where} ORDER BY seq", params)  # noqa: S608
        names = [column[0] for column in cursor.description]
        for found in cursor:
            yield _legacy(dict(zip(names, found, strict=True)))
        return
    for found in connection.execute(f"{_SELECT} WHERE {where} ORDER BY seq", params):
        yield _compact(tuple(found), GENESIS)


def rows_with_ids(connection: sqlite3.Connection, event_ids: list[str]) -> Iterator[Row]:
    """The rows of those event ids (their ``prev_hash`` not read)."""
    marks = ", ".join("?" for _ in event_ids)
    return _where(connection, f"event_id IN ({marks})", list(event_ids))


def rows_of_kinds(connection: sqlite3.Connection, *kinds: str) -> Iterator[Row]:
    """The rows of those kinds, in order (their ``prev_hash`` not read)."""
    marks = ", ".join("?" for _ in kinds)
    return _where(connection, f"kind IN ({marks})", list(kinds))


def times(connection: sqlite3.Connection, after: int = 0) -> Iterator[tuple[int, str]]:
    """Each row's ``seq`` and time (canonical text) after row ``after``, in order."""
    query = "SELECT seq, at FROM journal WHERE seq > ? ORDER BY seq"
    for seq, at in connection.execute(query, [after]):
        yield int(seq), at_text(at) if isinstance(at, int) else str(at)


def provenances(connection: sqlite3.Connection, after: int = 0) -> Iterator[tuple[int, str | None]]:
    """Each row's ``seq`` and provenance after row ``after``, in order (None: not recorded).

    A file of a schema before 14 has no provenance: each of its rows reads None.
    """
    columns = {str(row[1]) for row in connection.execute("PRAGMA table_info(journal)")}
    if "provenance" not in columns:
        query = "SELECT seq, NULL FROM journal WHERE seq > ? ORDER BY seq"
    else:
        query = "SELECT seq, provenance FROM journal WHERE seq > ? ORDER BY seq"
    for seq, provenance in connection.execute(query, [after]):
        yield int(seq), None if provenance is None else str(provenance)
