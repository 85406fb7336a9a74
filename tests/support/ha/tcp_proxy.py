"""A TCP proxy on loopback that a test can cut and heal: the links of a failover test.

Put between a client and its server (a controller and its database, an agent and its broker),
it forwards bytes both ways until the test cuts the link, in one of two ways:

* ``stall``, a partition: nothing passes either way, and nothing is lost. The proxy stops
  reading, so the kernel's buffers fill and the sender blocks, as it would behind a switch
  that drops every packet; when the link heals, what was held flows again, in order, as TCP
  retransmission would deliver it. Connections opened during the cut wait unanswered.
* ``reset``: every open connection is closed at both ends, and new ones are closed as soon as
  they are accepted (a peer restarted, a firewall that resets), until the link heals.

The proxy runs its own event loop in a thread of the test process: the failover tests are
synchronous and drive real processes, and the proxy must keep forwarding while a test blocks
on one of them. Every call from the test waits a bounded time for the loop to act.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, Self

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

HOST: Final = "127.0.0.1"
CALL_S: Final = 10.0
"""How long a call from the test waits for the proxy's loop."""
CHUNK: Final = 65536

Cut = Literal["stall", "reset"]


@dataclass
class Traffic:
    """What the proxy has seen, for a test's assertions."""

    accepted: int = 0
    refused: int = 0
    """Connections closed at once because the link was cut with ``reset``."""
    upstream_bytes: int = 0
    downstream_bytes: int = 0


@dataclass(eq=False)
class _Pair:
    """One proxied connection: the client's streams and the server's."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def close(self) -> None:
        for writer in (self.client, self.server):
            with contextlib.suppress(OSError, RuntimeError):
                writer.transport.abort()  # an RST, not a polite FIN: the link is gone
        for task in self.tasks:
            task.cancel()


class LinkProxy:
    """Listens on a free loopback port and forwards to ``target_host:target_port``."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.traffic = Traffic()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._flowing: asyncio.Event | None = None
        self._cut: Cut | None = None
        self._pairs: set[_Pair] = set()

    @property
    def cut_as(self) -> Cut | None:
        """How the link is cut now; None while it forwards."""
        return self._cut

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def start(self) -> None:
        """Listen, and forward from now on."""
        self._thread.start()
        self._call(self._listen())

    def cut(self, how: Cut = "stall") -> None:
        """Cut the link (see the module's docstring for ``stall`` and ``reset``)."""
        self._call(self._set_cut(how))

    def heal(self) -> None:
        """Let bytes and connections through again."""
        self._call(self._set_cut(None))

    def close(self) -> None:
        """Close every connection and the listener, and stop the thread."""
        if not self._thread.is_alive():
            return
        with contextlib.suppress(TimeoutError, RuntimeError):
            self._call(self._shut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CALL_S)
        if not self._loop.is_running():
            self._loop.close()

    def _call(self, work: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(work, self._loop).result(CALL_S)

    async def _listen(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._accept, HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _set_cut(self, how: Cut | None) -> None:
        assert self._flowing is not None
        self._cut = how
        if how is None:
            self._flowing.set()
            return
        self._flowing.clear()
        if how == "reset":
            for pair in list(self._pairs):
                pair.close()
            self._pairs.clear()

    async def _shut(self) -> None:
        for pair in list(self._pairs):
            pair.close()
        self._pairs.clear()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _reset(self) -> bool:
        """Whether the link is cut by resets now (read afresh: a cut changes across an await)."""
        return self._cut == "reset"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        if self._cut == "reset":
            self.traffic.refused += 1
            writer.transport.abort()
            return
        self.traffic.accepted += 1
        await self._flowing.wait()  # a connection opened in a partition waits unanswered
        if self._reset():  # it was reset while it waited
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()  # the server is down: the client sees its refusal
            return
        pair = _Pair(writer, upstream_writer)
        self._pairs.add(pair)
        pair.tasks = [
            asyncio.create_task(self._pump(reader, upstream_writer, pair, upstream=True)),
            asyncio.create_task(self._pump(upstream_reader, writer, pair, upstream=False)),
        ]

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        pair: _Pair,
        *,
        upstream: bool,
    ) -> None:
        assert self._flowing is not None
        try:
            while True:
                # Stalled, it reads nothing more: the sender's window fills, as in a partition.
                await self._flowing.wait()
                data = await source.read(CHUNK)
                if not data:
                    break
                await self._flowing.wait()  # held across a cut, delivered on healing
                sink.write(data)
                await sink.drain()
                if upstream:
                    self.traffic.upstream_bytes += len(data)
                else:
                    self.traffic.downstream_bytes += len(data)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                sink.close()  # one side ended: end the other, as the real peer would see
            self._pairs.discard(pair)
