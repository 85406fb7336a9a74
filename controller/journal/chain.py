"""The hash chain: each journal row carries the SHA-256 of the row before it and of itself.

A row's hash covers the previous row's hash and the canonical JSON of every stored field of
the row, so that changing, removing, inserting or reordering any row breaks every hash after
it. The first row's previous hash is sixty-four zeros.
"""

from __future__ import annotations

import hashlib
from typing import Final

import msgspec

GENESIS: Final = "0" * 64
HASHED_FIELDS: Final = ("seq", "event_id", "kind", "at", "event", "outcome", "reason", "effects")


def row_hash(previous: str, row: dict[str, object]) -> str:
    """The SHA-256 (hex) of a journal row, chained to the previous row's hash.

    The body is the compact JSON array of the hashed fields, as
    ``json.dumps(fields, ensure_ascii=False, separators=(",", ":"))`` writes it; msgspec writes
    the same bytes, faster (``tests/journal/test_journal_chain.py`` proves it for any text).
    """
    body = msgspec.json.encode([row[name] for name in HASHED_FIELDS])
    return hashlib.sha256(previous.encode() + b"\n" + body).hexdigest()


def text_digest(text: str) -> str:
    """The SHA-256 (hex) of a stored text: a snapshot's, which a checkpoint signs.

    The same digest the domain gives of the state itself
    (:meth:`controller.journal.domain.Domain.state_digest`), so that a stored snapshot is held
    to a checkpoint without reading it back into a state.
    """
    return hashlib.sha256(text.encode()).hexdigest()
