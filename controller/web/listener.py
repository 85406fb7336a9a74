"""The web port's listening sockets, accepting only as fast as the gate has room.

asyncio's own server accepts up to its backlog of connections at every turn of the loop and
makes each one's transport a turn or two later, so under a flood several hundred descriptors
are open before the gate sees any of them, and an accept that finds none left is reported
with a traceback. This listener accepts at most :data:`ACCEPT_BATCH` connections a turn, and
only while the gate can take them (:meth:`Gate.can_accept`): a connection refused is closed
at once, before it has a transport, and while the port holds all it may, the listener stops
reading its sockets and the kernel's queue holds the rest (the gate resumes it as descriptors
are released). An accept that fails for want of a resource is one throttled line, and the
listener waits :data:`ACCEPT_RETRY_S` before it tries again. With ``[web] tls_cert`` each
connection is TLS (:attr:`WebLimits.tls`), its handshake bounded by the header timeout; one
that fails it is closed and its place given back, as a refused one.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import TYPE_CHECKING, Final

from controller.web.limits import ACCEPT_BACKLOG

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.web.gate import Gate
    from controller.web.throttle import LogThrottle

ACCEPT_BATCH: Final = 16
"""Connections accepted at one turn of the loop, at most."""
ACCEPT_RETRY_S: Final = 1.0
"""How long the listener rests after an accept failed for want of a descriptor or memory."""
_STARVED: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class Listener:
    """The port's listening sockets (one per address the host names), fed to the gate."""

    def __init__(
        self, gate: Gate, protocols: Callable[[], asyncio.Protocol], throttle: LogThrottle
    ) -> None:
        self.gate = gate
        self.protocols = protocols
        self.throttle = throttle
        self.sockets: list[socket.socket] = []
        self._loop = asyncio.get_running_loop()
        self._reading = False
        self._connecting: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> None:
        """Listen on every address of ``host`` (as asyncio's ``create_server`` does)."""
        found = await self._loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        try:
            for family, kind, proto, _, address in dict.fromkeys(found):
                listening = socket.socket(family, kind, proto)
                self.sockets.append(listening)
                listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                listening.bind(address)
                listening.listen(ACCEPT_BACKLOG)
                listening.setblocking(False)  # noqa: FBT003 - the socket API
        except OSError:
            self.close()
            raise
        self.gate.resume = self.resume
        self.resume()

    def resume(self) -> None:
        """Read the listening sockets again (if the gate has room)."""
        if not self._reading and self.sockets and self.gate.can_accept():
            self._reading = True
            for listening in self.sockets:
                self._loop.add_reader(listening.fileno(), self._accept, listening)

    def pause(self) -> None:
        """Leave new connections in the kernel's queue."""
        if self._reading:
            self._reading = False
            for listening in self.sockets:
                self._loop.remove_reader(listening.fileno())

    def close(self) -> None:
        """Stop listening; connections being set up are dropped."""
        self.gate.resume = None
        self.pause()
        for listening in self.sockets:
            listening.close()
        self.sockets = []
        for task in self._connecting:
            task.cancel()

    def _accept(self, listening: socket.socket) -> None:
        for _ in range(ACCEPT_BATCH):
            if not self.gate.can_accept():
                self.pause()
                return
            try:
                accepted, _ = listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                self.throttle.warn("accept", f"web: an accept failed: {error}")
                if error.errno in _STARVED:
                    self.pause()
                    self._loop.call_later(ACCEPT_RETRY_S, self.resume)
                return
            accepted.setblocking(False)  # noqa: FBT003 - the socket API
            if not self.gate.reserve():
                accepted.close()  # refused: closed now, before it costs a transport
                continue
            task = self._loop.create_task(self._connect(accepted))
            self._connecting.add(task)
            task.add_done_callback(self._connecting.discard)

    async def _connect(self, accepted: socket.socket) -> None:
        limits = self.gate.limits
        try:
            if limits.tls is None:
                await self._loop.connect_accepted_socket(self.protocols, accepted)
            else:
                # The handshake is bounded as a request head is: a client that opens a
                # connection and never says hello holds its reserved place no longer.
                await self._loop.connect_accepted_socket(
                    self.protocols,
                    accepted,
                    ssl=limits.tls,
                    ssl_handshake_timeout=limits.header_timeout_s,
                )
        except (OSError, asyncio.CancelledError):
            accepted.close()
            self.gate.unreserve()
