"""A virtual Alpha LED sign on a pty: what the demo (and a lab without hardware) shows.

The controller's real sign driver (:mod:`drivers.signs.serial_sign`) writes real Alpha
frames to the pty's slave side, exactly as to a sign on a serial line; this emulator reads the
master side, checks every checksum, keeps the sign's memory (the STRING file a TEXT file
calls) and shows what a sign would: the current text, with when it changed. The demo's
display page shows it beside the meters.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime

from drivers.signs.alpha import decode

WRITE_TEXT, WRITE_STRING, SPECIAL = "A", "G", "E"


@dataclass(slots=True)
class VirtualAlphaSign:
    """One emulated sign: open it, give its :attr:`url` to the driver, run :meth:`run`."""

    name: str
    strings: dict[str, str] = field(default_factory=dict)
    text: str = ""
    changed_at: str = ""
    frames: int = 0
    bad_frames: int = 0
    _master: int = -1
    _slave: int = -1
    url: str = ""

    def open(self) -> None:
        """Create the pty pair; the slave's path is the url the sign driver opens."""
        self._master, self._slave = os.openpty()
        os.set_blocking(self._master, False)
        self.url = os.ttyname(self._slave)

    def close(self) -> None:
        """Close both ends."""
        for descriptor in (self._master, self._slave):
            if descriptor >= 0:
                os.close(descriptor)
        self._master = self._slave = -1

    def _apply(self, command: str, data: bytes) -> None:
        if command == WRITE_STRING and data:
            label, text = chr(data[0]), data[1:].decode("ascii", errors="replace")
            self.strings[label] = text
            self._show(text)
        elif command == WRITE_TEXT and data:
            called = data.split(b"\x10")  # 10H calls a STRING file by its label
            if len(called) > 1 and called[1]:
                self._show(self.strings.get(chr(called[1][0]), ""))

    def _show(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.changed_at = datetime.now(UTC).isoformat(timespec="milliseconds")

    def feed(self, buffer: bytearray) -> None:
        """Decode every whole frame at the front of ``buffer`` and apply it."""
        while buffer:
            used, packet = decode(buffer)
            if used == 0:
                return
            del buffer[:used]
            if packet is None:
                continue
            if packet.checksum_ok is False:
                self.bad_frames += 1
                continue
            self.frames += 1
            self._apply(packet.command, packet.data)

    async def run(self) -> None:
        """Read the master side until cancelled."""
        loop = asyncio.get_running_loop()
        readable = asyncio.Event()
        loop.add_reader(self._master, readable.set)
        buffer = bytearray()
        try:
            while True:
                await readable.wait()
                readable.clear()
                try:
                    buffer += os.read(self._master, 4096)
                except BlockingIOError:
                    continue
                self.feed(buffer)
        finally:
            loop.remove_reader(self._master)
