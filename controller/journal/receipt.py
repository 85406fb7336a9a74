"""What became of an appended event: its receipt, and the outcomes a journal row records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from controller.effects import AnyEffect

APPLIED: Final = "applied"
REJECTED: Final = "rejected"
INTERNAL_ERROR: Final = "internal error"
"""How the reason of an event the ledger failed on (a bug, not a refusal) begins."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What became of an appended event, once it is durable."""

    seq: int
    event_id: str
    outcome: str
    reason: str
    effects: tuple[AnyEffect, ...]
    duplicate: bool = False
    conflict: bool = False
    """The event reused an id the journal holds for other content: this is the fault recorded
    instead (:mod:`controller.journal.identity`), and the event was not applied."""

    @property
    def applied(self) -> bool:
        """Whether the ledger accepted the event (a refusal is journaled too)."""
        return self.outcome == APPLIED
