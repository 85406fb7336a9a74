"""Capped exponential backoff with full jitter, for every driver that reconnects.

``async for attempt in Backoff(...)`` yields before each (re)connection attempt and sleeps
between attempts: 0.1 s, 0.2 s, 0.4 s, ... up to the cap, each randomised ("full jitter") so
that a hundred tables reconnecting after a broker restart do not stampede. A successful
connection calls :meth:`Backoff.reset`.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@dataclass(slots=True)
class Backoff:
    """Delays between connection attempts: exponential from ``initial`` up to ``cap`` seconds."""

    initial: float = 0.1
    cap: float = 10.0
    factor: float = 2.0
    jitter: bool = True
    rng: random.Random = field(default_factory=random.Random)
    failures: int = 0

    def next_delay(self) -> float:
        """The delay before the next attempt; grows with each failure."""
        ceiling = min(self.cap, self.initial * self.factor**self.failures)
        self.failures += 1
        return self.rng.uniform(0, ceiling) if self.jitter else ceiling

    def reset(self) -> None:
        """A connection succeeded: start again from the initial delay."""
        self.failures = 0

    async def attempts(self) -> AsyncIterator[int]:
        """Yield attempt numbers forever, sleeping the backoff delay between them."""
        attempt = 0
        while True:
            yield attempt
            attempt += 1
            await asyncio.sleep(self.next_delay())
