"""When the agent sends again what the controller has not acknowledged.

Everything in the outbox after the last acknowledgement is sent again, oldest first, after
``initial_s`` without progress, then after twice that, up to ``cap_s``: a controller that is
away is not flooded, and one that comes back is answered within ``cap_s``. An
acknowledgement that moves the outbox on starts the delay again from ``initial_s``. No jitter
is needed: each agent resends only to its own controller, through its own session.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class ResendDelay:
    """The delay before the next resend of what is unacknowledged."""

    initial_s: float
    cap_s: float
    current_s: float = 0.0

    def __post_init__(self) -> None:
        self.current_s = self.initial_s

    def progressed(self) -> None:
        """An acknowledgement trimmed the outbox: resend soon again if it stalls."""
        self.current_s = self.initial_s

    def resent(self) -> float:
        """Everything unacknowledged was sent again: the delay before the next time."""
        delay = self.current_s
        self.current_s = min(self.cap_s, self.current_s * 2)
        return delay
