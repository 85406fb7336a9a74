"""The link proxy the failover tests cut and heal (tests/support/ha/tcp_proxy.py).

A partition (``stall``) must hold bytes without losing or reordering them, and deliver them
when the link heals; a ``reset`` must end every connection at both ends and refuse new ones
until healed. An echo server behind the proxy shows each.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from typing import TYPE_CHECKING

import pytest
from support.ha.tcp_proxy import HOST, LinkProxy

if TYPE_CHECKING:
    from collections.abc import Iterator

WAIT_S = 10.0
QUIET_S = 0.3
"""How long a test listens to show that nothing arrives (absence has no event to wait on)."""


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


@pytest.fixture
def echo() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer((HOST, 0), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def proxy(echo: int) -> Iterator[LinkProxy]:
    with LinkProxy(HOST, echo) as link:
        yield link


def connect(proxy: LinkProxy) -> socket.socket:
    client = socket.create_connection((HOST, proxy.port), timeout=WAIT_S)
    client.settimeout(WAIT_S)
    return client


def receive(client: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = client.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def test_it_forwards_both_ways(proxy: LinkProxy) -> None:
    with contextlib.closing(connect(proxy)) as client:
        client.sendall(b"meter 1234")
        assert receive(client, 10) == b"meter 1234"
    assert proxy.traffic.accepted == 1


def test_a_stall_holds_bytes_and_delivers_them_in_order_when_healed(proxy: LinkProxy) -> None:
    with contextlib.closing(connect(proxy)) as client:
        client.sendall(b"before")
        assert receive(client, 6) == b"before"
        proxy.cut("stall")
        client.sendall(b"during-1 ")
        client.sendall(b"during-2")
        client.settimeout(QUIET_S)
        with pytest.raises(TimeoutError):
            client.recv(1)
        client.settimeout(WAIT_S)
        proxy.heal()
        assert receive(client, 17) == b"during-1 during-2"


def test_a_connection_opened_in_a_stall_waits_and_then_works(proxy: LinkProxy) -> None:
    proxy.cut("stall")
    with contextlib.closing(connect(proxy)) as client:  # the kernel accepts; nothing answers
        client.sendall(b"hello")
        client.settimeout(QUIET_S)
        with pytest.raises(TimeoutError):
            client.recv(1)
        client.settimeout(WAIT_S)
        proxy.heal()
        assert receive(client, 5) == b"hello"


def test_a_reset_ends_open_connections_and_refuses_new_ones_until_healed(
    proxy: LinkProxy,
) -> None:
    with contextlib.closing(connect(proxy)) as client:
        client.sendall(b"up")
        assert receive(client, 2) == b"up"
        proxy.cut("reset")
        with contextlib.suppress(ConnectionResetError):
            assert client.recv(1) == b""  # the link is gone: EOF or a reset, never data
    with contextlib.closing(connect(proxy)) as refused, contextlib.suppress(ConnectionResetError):
        assert refused.recv(1) == b""
    assert proxy.traffic.refused == 1
    proxy.heal()
    with contextlib.closing(connect(proxy)) as client:
        client.sendall(b"again")
        assert receive(client, 5) == b"again"


def test_a_server_that_is_down_is_refused_through_the_proxy() -> None:
    with socket.socket() as placeholder:
        placeholder.bind((HOST, 0))
        port = placeholder.getsockname()[1]  # nothing listens on it once closed
    with (
        LinkProxy(HOST, port) as link,
        contextlib.closing(connect(link)) as client,
        contextlib.suppress(ConnectionResetError),
    ):
        assert client.recv(1) == b""
