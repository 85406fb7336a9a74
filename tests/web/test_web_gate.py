"""The web port's door (controller/web/gate.py): its deadlines, its cap, and its log lines.

The real aiohttp server of the display, started by ``serve_display`` in this event loop, on
127.0.0.1, in front of a small application (``/healthz``, a body too large to buffer, an
answer held until the test releases it), with real TCP clients:

* a connection that sends half a request head, or nothing, is closed within
  ``header_timeout_s`` (plus one sweep), counted ``header-timeout``;
* a kept-alive connection survives the header deadline and is closed after
  ``idle_timeout_s``, counted ``idle-timeout``;
* a client that stops reading a large answer is closed after ``send_timeout_s``;
* at the cap the oldest waiting connection makes room (``displaced``) and ``/healthz`` gets in;
  with every place answering, a new one is refused (``refused``), logged once, not per refusal;
* junk requests and the loop's accept errors are logged once per interval with a count.

Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry
from support.runtime.floor import free_port, within

from controller.web.display import serve_display
from controller.web.gate import REASONS, SWEEP_S
from controller.web.limits import WebLimits
from controller.web.throttle import LogThrottle, QuietLoopErrors

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

SLACK_S = 1.0
"""What a close may take beyond its deadline and one sweep, on a loaded 2-core machine."""
BIG = b"x" * (64 << 20)
"""An answer far larger than the socket buffers: a client that does not read stalls it."""


class Floor:
    """A small application behind the gate: what a served page needs (``app``, ``registry``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.release = asyncio.Event()
        self.holding = 0

    def app(self) -> web.Application:
        """``/healthz``, ``/big`` and ``/hold``."""
        app = web.Application()
        routes = {"/healthz": self.health, "/big": self.big, "/hold": self.hold}
        app.add_routes([web.get(path, handler) for path, handler in routes.items()])
        return app

    async def health(self, _: web.Request) -> web.Response:
        """Always fine."""
        return web.json_response({"ok": True})

    async def big(self, _: web.Request) -> web.Response:
        """More than any socket buffer holds."""
        return web.Response(body=BIG)

    async def hold(self, _: web.Request) -> web.Response:
        """Answered only once the test releases it: the connection is busy until then."""
        self.holding += 1
        await self.release.wait()
        return web.Response(text="released")

    def dropped(self, reason: str) -> float:
        """``jackpotd_web_connections_dropped_total{reason}``."""
        value = self.registry.get_sample_value(
            "jackpotd_web_connections_dropped_total", {"reason": reason}
        )
        assert value is not None, reason
        return value

    def gauge(self, name: str) -> float:
        """A gauge without labels."""
        value = self.registry.get_sample_value(name)
        assert value is not None, name
        return value


def limits(port: int, **overrides: float) -> WebLimits:
    settings = {
        "max_connections": 64, "header_timeout_s": 5.0, "idle_timeout_s": 5.0,
        "send_timeout_s": 5.0,
    } | overrides  # fmt: skip
    return WebLimits(
        "127.0.0.1",
        port,
        int(settings["max_connections"]),
        settings["header_timeout_s"],
        settings["idle_timeout_s"],
        settings["send_timeout_s"],
    )


@contextlib.asynccontextmanager
async def serving(**overrides: float) -> AsyncIterator[tuple[Floor, int]]:
    floor, port = Floor(), free_port()
    started = asyncio.Event()
    task = asyncio.create_task(serve_display(floor, limits(port, **overrides), started))
    await within(started.wait(), "the web port to listen")
    try:
        yield floor, port
    finally:
        floor.release.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await within(task, "the web port to stop")


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def closed_after(reader: asyncio.StreamReader, started: float, bound: float) -> float:
    """Read until the server closes; the seconds since ``started`` (failing past ``bound``)."""
    with contextlib.suppress(ConnectionResetError):
        async with asyncio.timeout(bound):
            while await reader.read(65536):
                pass
    return time.monotonic() - started


async def until(condition: Callable[[], bool]) -> None:
    """Check ``condition`` every sweep until it holds (callers bound the wait)."""
    while not condition():
        await asyncio.sleep(SWEEP_S / 5)


async def get(port: int, path: str) -> bytes:
    """A whole GET on a fresh connection, closed after: the answer's bytes."""
    reader, writer = await connect(port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
    try:
        return await within(reader.read(), f"GET {path}", 5)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "sent", [b"", b"GET /healthz HTTP/1.1\r\nHost: t\r\n", b"GET /heal"], ids=repr
)
async def test_a_half_sent_request_is_closed_within_the_header_timeout(sent: bytes) -> None:
    async with serving(header_timeout_s=0.5) as (floor, port):
        started = time.monotonic()
        reader, writer = await connect(port)
        writer.write(sent)
        took = await closed_after(reader, started, 0.5 + SWEEP_S + SLACK_S)
        writer.close()
        assert took >= 0.5
        assert floor.dropped("header-timeout") == 1
        assert floor.gauge("jackpotd_web_connections") == 0


async def test_a_kept_alive_connection_outlives_the_header_deadline_and_ends_at_the_idle_one() -> (
    None
):
    async with serving(header_timeout_s=0.3, idle_timeout_s=1.5) as (floor, port):
        reader, writer = await connect(port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        head = await within(reader.readuntil(b"\r\n\r\n"), "the answer's head", 5)
        assert head.startswith(b"HTTP/1.1 200")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        await within(reader.readexactly(length), "the answer's body", 5)
        answered = time.monotonic()
        took = await closed_after(reader, answered, 1.5 + SWEEP_S + SLACK_S)
        writer.close()
        assert took >= 1.5  # not at the header deadline: it was answered
        assert floor.dropped("idle-timeout") == 1
        assert floor.dropped("header-timeout") == 0


async def test_a_client_that_stops_reading_is_closed_after_the_send_timeout() -> None:
    async with serving(send_timeout_s=0.5) as (floor, port):
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(client, ("127.0.0.1", port))
        await loop.sock_sendall(client, b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
        # The client reads nothing meanwhile.
        await within(until(lambda: floor.dropped("send-timeout") == 1), "the stalled close", 5)
        client.close()
        assert floor.gauge("jackpotd_web_connections") == 0


async def test_at_the_cap_the_oldest_waiting_connection_makes_room_for_healthz() -> None:
    async with serving(max_connections=5) as (floor, port):
        waiting = [await connect(port) for _ in range(5)]
        for _, writer in waiting:
            writer.write(b"GET /healthz HTTP/1.1\r\n")
        await asyncio.sleep(0)
        answer = await get(port, "/healthz")
        assert answer.startswith(b"HTTP/1.1 200"), answer
        oldest, _ = waiting[0]
        assert await within(oldest.read(), "the oldest to be closed", 5) == b""
        assert floor.dropped("displaced") == 1
        assert floor.gauge("jackpotd_web_connections_max") == 5
        for _, writer in waiting:
            writer.close()


async def test_with_every_place_answering_new_connections_are_refused_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    async with serving(max_connections=3) as (floor, port):
        held = [await connect(port) for _ in range(3)]
        for _, writer in held:
            writer.write(b"GET /hold HTTP/1.1\r\nHost: t\r\n\r\n")
        await within(until(lambda: floor.holding == 3), "the three answers to be held", 5)
        for _ in range(50):
            reader, writer = await connect(port)
            with contextlib.suppress(ConnectionResetError):
                assert await within(reader.read(), "a refusal", 5) == b""
            writer.close()
        assert floor.dropped("refused") == 50
        refusals = [r for r in caplog.records if "a connection refused" in r.getMessage()]
        assert len(refusals) == 1, refusals
        floor.release.set()
        for reader, _ in held:
            assert (await within(reader.read(1 << 16), "a held answer", 5)).startswith(b"HTTP")


async def test_every_reason_has_its_series_from_the_start() -> None:
    async with serving() as (floor, _):
        assert {reason: floor.dropped(reason) for reason in REASONS} == dict.fromkeys(REASONS, 0)
        assert floor.gauge("jackpotd_web_connections_max") == 64


async def test_junk_requests_are_logged_once_per_interval_not_with_a_traceback_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with serving() as (_, port):
        for _ in range(30):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nNo colon here\r\n\r\n")
            answer = await within(reader.read(), "the answer to junk", 5)
            assert answer.split(b" ", 2)[1] == b"400", answer
            writer.close()
    # The first at once; the other 29 in one line, said when the port stopped.
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 2, lines
    assert lines[0].startswith("web: Error handling request from 127.0.0.1: BadHttpMessage")
    assert lines[1] == f"{lines[0]} (and 29 more like it in 10 s, not logged one by one)"
    assert all("\n" not in line for line in lines)
    assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.WARNING)


async def test_the_loops_accept_errors_on_the_port_are_one_line_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    loop = asyncio.get_running_loop()
    others: list[str] = []
    loop.set_exception_handler(lambda _, context: others.append(context["message"]))
    throttle = LogThrottle(logging.getLogger("test.web"))
    quiet = QuietLoopErrors(throttle, [listener], lambda _: False)
    quiet.install()
    try:
        for _ in range(1000):
            loop.call_exception_handler(
                {
                    "message": "socket.accept() out of system resource",
                    "exception": OSError(24, "Too many open files"),
                    "socket": listener,
                }
            )
        loop.call_exception_handler({"message": "something else"})
    finally:
        quiet.remove()
        loop.set_exception_handler(None)
        listener.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "test.web"]
    error = "OSError: [Errno 24] Too many open files"
    assert lines == [f"web: socket.accept() out of system resource: {error}"]
    assert others == ["something else"]  # what is not the port's goes where it went


def test_a_flood_of_one_kind_is_one_line_per_interval_with_its_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    throttle = LogThrottle(logging.getLogger("test.throttle"), 10.0, clock=lambda: now[0])
    for step in range(1000):
        now[0] = step * 0.01  # 1,000 in 10 s
        throttle.warn("refused", "web: a connection refused")
    throttle.flush()  # within the interval: nothing yet
    now[0] = 10.5
    throttle.flush()
    throttle.flush()  # said once
    lines = [r.getMessage() for r in caplog.records if r.name == "test.throttle"]
    assert lines == [
        "web: a connection refused",
        "web: a connection refused (and 999 more like it in 10 s, not logged one by one)",
    ]
