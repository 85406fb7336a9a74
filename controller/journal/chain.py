"""The hash chain: each journal row carries the SHA-256 of the row before it and of itself.

A row's hash covers the previous row's hash and the canonical JSON of every stored field of
the row, so that changing, removing, inserting or reordering any row breaks every hash after
it. The first row's previous hash is sixty-four zeros.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

GENESIS: Final = "0" * 64
HASHED_FIELDS: Final = ("seq", "event_id", "kind", "at", "event", "outcome", "reason", "effects")


def row_hash(previous: str, row: dict[str, object]) -> str:
    """The SHA-256 (hex) of a journal row, chained to the previous row's hash."""
    body = json.dumps(
        [row[name] for name in HASHED_FIELDS], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(f"{previous}\n{body}".encode()).hexdigest()
