"""The web port's door: a cap on its connections, and a deadline on each (docs/operations.md).

A client that opens connections and sends half a request on each (slowloris), or asks and
never reads the answer, would otherwise hold a file descriptor for as long as it likes; enough
of them and the journal and the broker have none left. Every connection to the port goes
through :class:`Gate`:

* **A cap.** At most :attr:`WebLimits.max_connections` are open (sized under the open-file
  limit, controller/web/limits.py). When a new one finds them all taken, the oldest that is
  not being answered (waiting for its first request, or kept alive between requests) is closed
  to make room: a flood displaces only itself, and ``/healthz`` still gets in. Only when every
  place is answering a request (the streams among them) is the new one refused.
* **Deadlines.** A connection's first request head must be complete within
  ``header_timeout_s`` of its accept; a kept-alive one is closed ``idle_timeout_s`` after its
  last answer unless a whole request head has come; one whose client stops reading (its
  answers waiting to be sent) is closed after ``send_timeout_s``. A sweep every
  :data:`SWEEP_S` enforces them.
* **Counted, not logged one by one.** Each close and refusal is counted in
  ``jackpotd_web_connections_dropped_total{reason}`` (docs/metrics.md) and logged through a
  :class:`~controller.web.throttle.LogThrottle`.

Closing is ``abort()``: the descriptor is released at once, whatever the client left unread.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, cast

from aiohttp import web
from prometheus_client.core import GaugeMetricFamily

from controller.metric_families import counter_family

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from prometheus_client.metrics_core import Metric

    from controller.web.limits import WebLimits
    from controller.web.throttle import LogThrottle

SWEEP_S: Final = 0.25
"""How often deadlines are checked: a connection is closed at most this late."""
CLOSING_ROOM: Final = 32
"""Descriptors beyond the cap the port may hold for connections it closed at this turn of
the loop (displaced ones): released at the next, within the headroom (controller/web/limits.py)."""
REASONS: Final = ("refused", "displaced", "header-timeout", "idle-timeout", "send-timeout")
"""Why a connection was refused or closed (the ``reason`` label); every series from the start."""


@dataclass(slots=True, eq=False)
class _Place:
    """One open connection: answering a request or waiting, and since when."""

    transport: asyncio.Transport
    since: float
    """When it was accepted, or when its last answer ended."""
    heard: bool = False
    """A whole request head has come and is being answered: not to be closed for waiting."""
    tail: bytes = b""
    """The last bytes of the head so far, to find its end across reads."""
    served: int = 0
    stalled_since: float | None = None

    def read(self, data: bytes) -> None:
        """Bytes of the client's: whether a request head has ended among them."""
        if not self.heard:
            seen = self.tail + data
            self.heard = b"\r\n\r\n" in seen
            self.tail = b"" if self.heard else seen[-3:]


@dataclass(slots=True)
class GateCounts:
    """What the metrics read: the cap, the places taken, and the drops by reason."""

    cap: int
    open: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))


class Gate:
    """Admits, times and closes the web port's connections (see the module docstring)."""

    def __init__(self, limits: WebLimits, throttle: LogThrottle) -> None:
        self.limits = limits
        self.throttle = throttle
        self.counts = GateCounts(limits.max_connections)
        self.resume: Callable[[], None] | None = None
        """The listener's: called when a closed connection's descriptor is released."""
        self._places: dict[asyncio.BaseTransport, _Place] = {}
        self._pending = 0
        """Connections accepted, their places reserved, their transports not made yet."""
        self._closing: set[asyncio.BaseTransport] = set()
        """Connections closed by the gate whose descriptors the loop has not released yet."""
        self._loop = asyncio.get_running_loop()

    def protocols(self, handler: Callable[[], asyncio.Protocol]) -> Callable[[], Connection]:
        """The protocol factory for accepted sockets: aiohttp's ``handler`` behind the gate."""
        return lambda: Connection(self, handler)

    def can_accept(self) -> bool:
        """Whether the listener may take another connection from the kernel now.

        Every descriptor the port holds counts: places, reservations, and connections closed
        but not yet released (the loop releases them at its next turn). So the port never
        holds more than the cap and :data:`CLOSING_ROOM`; the rest wait in the kernel's queue.
        """
        return self._held() < self.limits.max_connections + CLOSING_ROOM

    def reserve(self) -> bool:
        """Reserve a place for a connection just accepted; False if it is to be refused.

        At the cap the oldest waiting connection makes room; with every place answering a
        request, there is none to make.
        """
        places = self._places
        if len(places) + self._pending >= self.limits.max_connections:
            waiting = next((p for p in places.values() if not p.heard), None)
            if waiting is None:
                self._drop(
                    "refused",
                    f"web: a connection refused: all {len(places)} places ([web] "
                    "max_connections, under the open-file limit) are answering requests",
                )
                return False
            self._close(waiting, "displaced", "web: the port is full: the oldest waiting "
                        "connection was closed to make room for a new one")  # fmt: skip
        self._pending += 1
        self.counts.open = self._held()
        return True

    def unreserve(self) -> None:
        """A reserved connection failed before it was served."""
        self._pending -= 1
        self.counts.open = self._held()

    def admit(self, transport: asyncio.Transport) -> _Place:
        """A reserved connection's transport: its place."""
        self._pending = max(0, self._pending - 1)
        place = self._places[transport] = _Place(transport, self._loop.time())
        self.counts.open = self._held()
        return place

    def release(self, transport: asyncio.BaseTransport) -> None:
        """A connection is gone and its descriptor released: its place is free."""
        self._places.pop(transport, None)
        self._closing.discard(transport)
        self.counts.open = self._held()
        if self.resume is not None and self.can_accept():
            self.resume()

    def _held(self) -> int:
        return len(self._places) + self._pending + len(self._closing)

    def owns(self, protocol: object) -> bool:
        """Whether ``protocol`` is one of the port's connections (for the loop's reports)."""
        return isinstance(protocol, Connection)

    @web.middleware
    async def middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """A whole request head came: the connection is answering until its handler returns."""
        place = self._places.get(request.transport) if request.transport is not None else None
        if place is not None:
            place.heard = True  # a pipelined request's head came with the one before
            place.served += 1
        try:
            return await handler(request)
        finally:
            if place is not None:
                place.heard, place.tail = False, b""
                place.since = self._loop.time()

    async def sweep(self) -> None:
        """Enforce the deadlines every :data:`SWEEP_S` until cancelled."""
        while True:
            await asyncio.sleep(SWEEP_S)
            self.sweep_once()

    def sweep_once(self) -> None:
        """Close every connection past a deadline; say what the throttle held back."""
        now, limits = self._loop.time(), self.limits
        for place in list(self._places.values()):
            if place.transport.get_write_buffer_size():
                if place.stalled_since is None:
                    place.stalled_since = now
                elif now - place.stalled_since > limits.send_timeout_s:
                    self._close(place, "send-timeout", "web: closed a connection whose "
                                "client stopped reading ([web] send_timeout_s)")  # fmt: skip
                continue
            place.stalled_since = None
            if place.heard:
                continue
            if not place.served and now - place.since > limits.header_timeout_s:
                self._close(place, "header-timeout", "web: closed a connection that sent no "
                            "whole request head within [web] header_timeout_s")  # fmt: skip
            elif place.served and now - place.since > limits.idle_timeout_s:
                self._close(place, "idle-timeout", "web: closed a kept-alive connection idle "
                            "for [web] idle_timeout_s")  # fmt: skip
        self.throttle.flush()

    def close_all(self) -> None:
        """Close every connection (the server is stopping)."""
        self.resume = None
        for place in list(self._places.values()):
            place.transport.abort()

    def _close(self, place: _Place, reason: str, text: str) -> None:
        self._places.pop(place.transport, None)
        self._closing.add(place.transport)
        place.transport.abort()
        self._drop(reason, text)

    def _drop(self, reason: str, text: str) -> None:
        self.counts.dropped[reason] += 1
        if reason != "idle-timeout":  # a kept-alive connection's normal end: counted only
            self.throttle.warn(reason, text)


class Connection(asyncio.Protocol):
    """One connection: admitted by the gate, then served by aiohttp's handler behind it."""

    def __init__(self, gate: Gate, handler: Callable[[], asyncio.Protocol]) -> None:
        self._gate = gate
        self._handler = handler
        self._inner: asyncio.Protocol | None = None
        self._place: _Place | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Its place taken (reserved when it was accepted), handed to aiohttp."""
        stream = cast("asyncio.Transport", transport)  # a TCP server's transports are streams
        self._place = self._gate.admit(stream)
        self._inner = self._handler()
        self._inner.connection_made(stream)

    def data_received(self, data: bytes) -> None:
        """The client's bytes, to aiohttp; the gate notes a request head's end."""
        if self._inner is not None and self._place is not None:
            self._place.read(data)
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        """The client's end of its half, to aiohttp."""
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        """The send buffer is full: aiohttp waits before writing more."""
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        """The send buffer drained."""
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        """Its place is free; aiohttp ends its handler."""
        if self._place is not None:
            self._gate.release(self._place.transport)
        if self._inner is not None:
            self._inner.connection_lost(exc)
            self._inner = None


class GateMetrics:
    """The gate's counts as Prometheus metrics (registered beside the controller's)."""

    def __init__(self, counts: GateCounts) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        """Connections open, the cap, and those refused or closed by reason."""
        counts = self.counts
        for name, documentation, value in (
            ("jackpotd_web_connections", "Open connections to the web port.", counts.open),
            ("jackpotd_web_connections_max", "The cap on them (open-file limit).", counts.cap),
        ):
            gauge = GaugeMetricFamily(name, documentation)
            gauge.add_metric([], value)
            yield gauge
        yield counter_family(
            "jackpotd_web_connections_dropped",
            "Web connections refused at the cap or closed by the port, by reason.",
            ["reason"],
            known=[(reason,) for reason in REASONS],
            counts={(reason,): value for reason, value in counts.dropped.items()},
        )
