"""How often the agent keeps a fault of one kind: a burst is one row, the rest counted.

The agent keeps its faults in its outbox file, each an ``fsync``. A sensor that keeps pressing
a refused wager while the table is closed, or a flood of forged acknowledgements, must not
turn into thousands of disk writes: a fault of a given reason is kept at most once per
``interval_s``, and the next one kept says how many were held back since (the log has every
one).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)
class FaultThrottle:
    """One kept row per reason per ``interval_s``; what it held back is counted."""

    interval_s: float = 10.0
    _kept_at: dict[str, float] = field(default_factory=dict)
    _held: Counter[str] = field(default_factory=Counter)

    def admit(self, reason: str, now: float) -> int | None:
        """None to hold this one back; else keep it, with how many were held back before it."""
        last = self._kept_at.get(reason)
        if last is not None and now - last < self.interval_s:
            self._held[reason] += 1
            return None
        self._kept_at[reason] = now
        return self._held.pop(reason, 0)
