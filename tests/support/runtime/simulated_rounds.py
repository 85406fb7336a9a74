"""What simulated tables send while they play rounds side by side, kept to be journaled later.

:func:`played_rounds` runs :class:`drivers.simulator.SimulatedTable` s (bets, lock, one card at
a time, deal complete) through a link that keeps each event in the order the tables sent them,
interleaved as on a floor, and acknowledges nothing: the test journals them as it wants.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING

from drivers.simulator import SimulatedTable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import DeviceInput
    from drivers.simulator import TablePlan


class CapturingLink:
    """A device link that keeps what a simulated table sends."""

    def __init__(self, sink: list[DeviceInput]) -> None:
        self.sink = sink

    async def send(self, event: DeviceInput) -> None:
        """Keep the event; let the other tables play."""
        self.sink.append(event)
        await asyncio.sleep(0)  # the other tables play in between: their events interleave

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Heartbeats are not journaled."""


def played_rounds(
    plans: Sequence[TablePlan], rounds: int, seed: int, *, hit_every: int = 0
) -> list[DeviceInput]:
    """The events of ``rounds`` rounds at each table, the tables playing side by side."""
    played: list[DeviceInput] = []
    rng = random.Random(seed)  # noqa: S311 - simulated players

    async def table(plan: TablePlan) -> None:
        players = random.Random(rng.random())  # noqa: S311 - simulated players
        simulated = SimulatedTable(plan, CapturingLink(played), players, "s", hit_every=hit_every)
        for _ in range(rounds):
            await simulated.play_round()

    async def floor() -> None:
        await asyncio.gather(*(table(plan) for plan in plans))

    asyncio.run(floor())
    return played
