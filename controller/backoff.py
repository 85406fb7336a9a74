"""Capped exponential backoff with full jitter, and the one reconnect loop that uses it.

``async for attempt in Backoff(...).attempts()`` yields before each (re)connection attempt and
sleeps between attempts: 0.1 s, 0.2 s, 0.4 s, ... up to the cap, each randomised ("full
jitter") so that a hundred tables reconnecting after a broker restart do not stampede. A
successful connection calls :meth:`Backoff.reset`. :func:`keep_connected` is the loop every
driver (MQTT in and out, serial lines, signs) and the service's supervision run;
:func:`retrying` is the same backoff around one operation that is retried until it succeeds
(a standby opening its journal, the demo's tables resubmitting to a controller that failed
closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

_S = TypeVar("_S")
_T = TypeVar("_T")


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


class Reconnecting(Protocol[_S]):
    """A connection :func:`keep_connected` keeps up: how to open and use it, what failures mean.

    ``connected`` and ``reconnects`` are what the metrics read (docs/metrics.md).
    """

    name: str
    connected: bool
    reconnects: int

    def open_session(self) -> AbstractAsyncContextManager[_S]:
        """Open the connection (a broker session, a serial port); closing it ends it."""
        ...

    async def use_session(self, session: _S) -> None:
        """Serve the open connection until it fails or ends."""
        ...

    def session_opened(self) -> None:
        """The connection is up: log it, tell the health, reset the backoff if it may."""
        ...

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:
        """What a failure was (``"cannot open"``, ``"port failed"``), or None.

        None: it is not a failure of the connection (a bug, a configuration error), and it ends
        the loop.
        """
        ...

    def failed(self, what: str, error: Exception) -> None:
        """Record a failure (its last error, the health, the log)."""
        ...


async def keep_connected(
    link: Reconnecting[_S], backoff: Backoff, *, before_attempt: Callable[[], None] | None = None
) -> None:
    """Open, serve and reopen ``link`` forever, with ``backoff`` between attempts.

    The one reconnect loop of every driver and of the service's supervision of its parts: each
    attempt opens a session and serves it; a failure the link names is recorded and retried
    after the backoff delay, anything else propagates. Returns only by cancellation.
    ``before_attempt`` runs first in each attempt (the MQTT drivers re-raise a cancellation
    Python 3.11 can lose there).
    """
    opened_before = False
    async for _attempt in backoff.attempts():
        if before_attempt is not None:
            before_attempt()
        opened = False
        try:
            async with link.open_session() as session:
                opened = True
                link.connected = True
                if opened_before:
                    link.reconnects += 1
                opened_before = True
                link.session_opened()
                await link.use_session(session)
        except Exception as error:
            what = link.failure_of(error, opened=opened)
            if what is None:
                raise
            link.failed(what, error)
        finally:
            link.connected = False


async def retrying(
    operation: Callable[[], Awaitable[_T]],
    backoff: Backoff,
    *,
    retry_on: type[Exception] | tuple[type[Exception], ...],
    failed: Callable[[Exception], None] | None = None,
    stop: asyncio.Event | None = None,
) -> _T | None:
    """Run ``operation`` until it succeeds, with ``backoff`` between the failures it retries.

    A failure of a type in ``retry_on`` is reported to ``failed`` and retried after the next
    delay; anything else propagates. The backoff is reset on success. With a ``stop`` event (a
    service's), the wait ends early when it is set, and no attempt is made once it is: then
    the result is None. Otherwise returns the operation's result.
    """
    while stop is None or not stop.is_set():
        try:
            result = await operation()
        except retry_on as error:
            if failed is not None:
                failed(error)
            delay = backoff.next_delay()
            if stop is None:
                await asyncio.sleep(delay)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
            continue
        backoff.reset()
        return result
    return None
