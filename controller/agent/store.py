"""What the agent needs of its outbox store: the port the SQLite file implements.

The drivers reach the store only through :class:`AgentOutbox` (the import contracts keep SQL
in the journal package; ``controller/journal/sqlite/agent_outbox.py`` is the store). Every
method raises :class:`controller.ports.OutboxError` when the file cannot be read or written:
the agent then leaves the device unacknowledged, and the device resends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One device message in the outbox: the agent's ``seq`` and what the device sent."""

    seq: int
    device: str
    device_seq: int
    payload: str
    """The device's payload as it came over the serial line (``BET,bs-1,17,3,progressive,1``)."""
    stored: str = ""
    """When the agent stored it (UTC, ISO 8601): the time its signature names."""


class AgentOutbox(Protocol):
    """A table agent's durable outbox (docs/ha.md, "Table agents")."""

    @property
    def table_id(self) -> str:
        """The table the outbox was created for."""
        ...

    @property
    def boot(self) -> str:
        """The boot id: made when the file was, kept across restarts of the agent."""
        ...

    @property
    def stored_high(self) -> int:
        """The highest ``seq`` stored in this boot (0 if none)."""
        ...

    @property
    def acked(self) -> int:
        """The highest ``seq`` the controller has acknowledged (0 if none)."""
        ...

    @property
    def epoch(self) -> int:
        """The newest sequencer epoch an accepted acknowledgement carried."""
        ...

    def stored_from(self, device: str) -> int:
        """The highest ``seq`` stored from ``device`` (0 if none): at or below it is a resend."""
        ...

    @property
    def progressive_chips(self) -> frozenset[int]:
        """The seats with a progressive chip present since the last lock stored."""
        ...

    def store(
        self,
        device: str,
        device_seq: int,
        payload: str,
        at: str,
        chips: frozenset[int] | None = None,
    ) -> int | None:
        """Store a device's message durably; its ``seq``, or None if the device sent it before.

        ``chips``, if given, are the seats with a progressive chip present once it is stored
        (:func:`controller.agent.gate.chips_after`), kept in the same transaction.
        """
        ...

    def pending(self, after: int, limit: int) -> list[StoredEvent]:
        """The oldest unacknowledged messages after ``seq`` ``after``, oldest first."""
        ...

    def trim(self, through: int, epoch: int) -> int:
        """Forget everything through ``through`` (acknowledged); how many rows went."""
        ...

    def fault(self, reason: str, detail: str, at: str) -> None:
        """Keep one of the agent's own faults (a refused acknowledgement, a closed table...)."""
        ...

    def close(self) -> None:
        """Close the file (its rows stay)."""
        ...
