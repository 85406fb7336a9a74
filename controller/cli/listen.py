"""Whether the display can listen where it is told to, checked before the service starts.

A port taken by another program, or a host name that does not resolve, would otherwise surface
from deep inside the service's task group once the journal is open and the tables are
connecting. Checked first, it is one line that says which setting to change. The check binds
the address as the display will (``SO_REUSEADDR``, as asyncio's servers do) and lets it go at
once; should another program take the port in between, the service still fails closed.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass

from controller.cli.common import CommandError


@dataclass(frozen=True, slots=True)
class Address:
    """Where the display listens, and how the user changes it."""

    host: str
    port: int
    host_setting: str
    """What changes the host: ``--host``, or ``[web] host in FILE``."""
    port_setting: str


def check_listen(address: Address) -> None:
    """Raise :class:`CommandError` unless ``address`` can be listened on now."""
    where = f"the display cannot listen on {address.host}:{address.port}"
    try:
        found = socket.getaddrinfo(
            address.host or None, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as error:
        raise CommandError(
            f"{where}: unknown host ({error.strerror}); choose another with {address.host_setting}"
        ) from error
    for family, kind, protocol, _, socket_address in found:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(socket_address)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    reason = (
                        "the port is in use (another jackpotd, or another program; choose "
                        f"another with {address.port_setting})"
                    )
                elif error.errno == errno.EADDRNOTAVAIL:
                    reason = (
                        f"not an address of this host; choose another with {address.host_setting}"
                    )
                else:
                    reason = error.strerror or str(error)
                raise CommandError(f"{where}: {reason}") from error
