"""Fan-out of updates to every sink, each at its own pace, with meters coalesced.

A slow sink (a sign on a 9600-baud line, a display whose broker is away) must neither block
the sequencer nor fall ever further behind. Each subscriber has its own ordered queue; a new
meter update for a pool replaces one still waiting for the same pool (the sign only needs the
latest value), while hits and table and controller updates are always delivered, in order.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

from controller.outputs import (
    CheckpointUpdate,
    ControllerUpdate,
    MeterUpdate,
    PoolUpdate,
    TableUpdate,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from controller.outputs import AnyUpdate


class Subscription:
    """One sink's view of the updates: an async iterator that never blocks the publisher."""

    def __init__(self, broadcast: Broadcast) -> None:
        self._broadcast = broadcast
        self._queue: deque[AnyUpdate] = deque()
        self._ready = asyncio.Event()
        self.coalesced = 0

    def put(self, update: AnyUpdate) -> None:
        """Queue an update, replacing a waiting meter update of the same pool."""
        if isinstance(update, MeterUpdate):
            for index, waiting in enumerate(self._queue):
                if isinstance(waiting, MeterUpdate) and waiting.pool_id == update.pool_id:
                    del self._queue[index]
                    self.coalesced += 1
                    break
        self._queue.append(update)
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[AnyUpdate]:
        return self

    async def __anext__(self) -> AnyUpdate:
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        return self._queue.popleft()

    def close(self) -> None:
        """Stop receiving updates."""
        self._broadcast.unsubscribe(self)


class Broadcast:
    """Publishes updates to every current subscription; remembers the latest of each meter."""

    def __init__(self) -> None:
        self._subscriptions: list[Subscription] = []
        self.latest: dict[str, AnyUpdate] = {}

    def subscribe(self, *, replay: bool = True) -> Subscription:
        """A new subscription, primed with the latest states (meters, tables, checkpoint...)."""
        subscription = Subscription(self)
        if replay:
            for update in self.latest.values():
                subscription.put(update)
        self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Drop a subscription."""
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def publish(self, updates: Iterable[AnyUpdate]) -> None:
        """Deliver updates to every subscriber (never blocks)."""
        for update in updates:
            key = _state_key(update)
            if key is not None:
                self.latest[key] = update
            for subscription in self._subscriptions:
                subscription.put(update)


def _state_key(update: AnyUpdate) -> str | None:
    """Updates that describe a current state (kept for new subscribers); hits are events."""
    match update:
        case MeterUpdate():
            return f"meter/{update.pool_id}"
        case TableUpdate():
            return f"table/{update.table_id}"
        case ControllerUpdate():
            return "controller"
        case CheckpointUpdate():
            return "checkpoint"
        case PoolUpdate():
            return f"pool/{update.pool_id}"
        case _:
            return None
