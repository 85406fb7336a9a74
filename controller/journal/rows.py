"""Journal rows as every backend stores them, and as the hash chain and every reader sees them.

A row is read as its **canonical** columns, whatever the schema version of the store: ``seq``,
``event_id``, ``kind``, ``at``, ``event`` and ``effects`` (canonical JSON), ``outcome``,
``reason``, ``prev_hash`` and ``hash`` (hex), the fields :mod:`controller.journal.chain` hashes
and the columns the journal had up to schema version 9. From version 10 the file stores less
(docs/journal.md, "What a row stores"):

* ``event``, ``effects`` and ``at`` in their compact forms (:mod:`controller.journal.compact`);
* ``reason`` NULL for an applied event, the refusal's reason otherwise (no ``outcome``);
* ``hash`` as its 32 bytes, and no ``prev_hash``: it is the row before's ``hash`` (for the
  first row after archived ones, the hash the archive ends with; sixty-four zeros for row 1).

A stored row that is not exactly the form this version writes (an edit of the file) reads as
its stored text, which its hash does not cover, and :attr:`Row.form` says why. The SQLite
file's queries are :mod:`controller.journal.sqlite.rows`; PostgreSQL's
:mod:`controller.journal.postgres.rows`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from controller.journal.chain import GENESIS
from controller.journal.compact import FormError, at_text, canonical, canonical_texts, stored
from controller.journal.compact import stored_at as _stored_at
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from controller.effects import AnyEffect
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


def hex_text(value: object) -> str:
    """A stored hash as hex: its bytes (schema 10 on), or the hex text it was stored as."""
    return value.hex() if isinstance(value, bytes) else str(value)


def stored_to_row(found: tuple[Any, ...], previous: str) -> Row:
    """A row of the compact form (:data:`COLUMNS`, in order) read back canonically.

    ``previous`` is the hash of the row before (the compact form stores no ``prev_hash``).
    Every backend stores these columns and reads them back here.
    """
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
        "hash": hex_text(digest),
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
