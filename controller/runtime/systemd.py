"""systemd notification: READY, WATCHDOG keep-alives and STOPPING, in the few lines it takes.

With ``Type=notify`` systemd waits for ``READY=1`` before it considers the service started, and
with ``WatchdogSec`` it restarts the service when the keep-alives stop. The keep-alive is sent
from a task on the event loop, so a loop that is stuck (or a sequencer that has died and taken
the loop down) stops them, which is the point. Without ``$NOTIFY_SOCKET`` every call is a
no-op, so the daemon runs the same outside systemd.
"""

from __future__ import annotations

import asyncio
import os
import socket
from dataclasses import dataclass


@dataclass(slots=True)
class Notifier:
    """Sends ``sd_notify`` datagrams to ``$NOTIFY_SOCKET`` (abstract ``@`` names included)."""

    address: str | None
    watchdog_s: float | None
    sent: list[str] | None = None

    @classmethod
    def from_environment(cls) -> Notifier:
        """The notifier systemd asked for, if any."""
        address = os.environ.get("NOTIFY_SOCKET") or None
        usec = os.environ.get("WATCHDOG_USEC")
        watchdog = int(usec) / 1_000_000 if usec and usec.isdigit() and int(usec) > 0 else None
        return cls(address, watchdog)

    def notify(self, message: str) -> None:
        """Send one notification (best effort: systemd may be gone during shutdown)."""
        if self.sent is not None:
            self.sent.append(message)
        if not self.address:
            return
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            try:
                sock.connect(target)
                sock.sendall(message.encode())
            except OSError:
                return

    def ready(self, status: str) -> None:
        """The service is up."""
        self.notify(f"READY=1\nSTATUS={status}")

    def stopping(self) -> None:
        """The service is draining."""
        self.notify("STOPPING=1\nSTATUS=draining")

    async def watchdog(self) -> None:
        """Keep-alives at half the watchdog interval, until cancelled."""
        if self.watchdog_s is None:
            return
        while True:
            self.notify("WATCHDOG=1")
            await asyncio.sleep(self.watchdog_s / 2)
