"""The journal's identity, and every signed event it applied: the state bound signatures read.

:attr:`controller.ledger.state.LedgerState.binding`; :mod:`controller.ledger.binding` checks
each signature against it and records the events applied. Kept apart from those checks, which
import the state, so that the state can name it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JournalBinding:
    """The journal's identity and the id of every signed event it ever applied."""

    journal: str
    applied: frozenset[str] = frozenset()
    accepted: frozenset[tuple[int, str]] = frozenset()
    """High-water marks (row, hash) managers accepted to lose in a restore (HistoryRestored)."""
