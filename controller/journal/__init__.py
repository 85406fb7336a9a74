"""The durable, tamper-evident journal: one SQLite file, one transaction per event.

See docs/journal.md for the format. :mod:`.store` appends and restores, :mod:`.codec` turns
ledger state into rows and back, :mod:`.chain` computes the hash chain, :mod:`.verify` checks
the chain and replays the journal from empty.
"""

from controller.journal import sqlite_lean  # noqa: F401 - first: sqlite_utils without numpy
from controller.journal.errors import JournalError, SchemaError
from controller.journal.store import Journal

__all__ = ["Journal", "JournalError", "SchemaError"]
