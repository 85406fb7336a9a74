"""A serial source on a pty line with a device at its far end, for the serial driver tests."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty
from typing import TYPE_CHECKING

from drivers.serial.settings import SerialPortSettings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from drivers.serial.link import SerialSource
    from support.drivers.intake import JournalIntake

TABLE = "T1"
WAIT_S = 10.0


def port_settings(url: str) -> SerialPortSettings:
    # Short backoff so that a replug is noticed within the test's time budget.
    return SerialPortSettings(
        name="table-1", url=url, table_id=TABLE, backoff_initial_s=0.01, backoff_cap_s=0.05
    )


@contextlib.asynccontextmanager
async def running(source: SerialSource, intake: JournalIntake) -> AsyncIterator[None]:
    """Run the link for the block; a crash of the link surfaces when the block ends."""
    task = asyncio.create_task(source.run(intake))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class PtyDevicePort:
    """The device's end of a pty pair: the master fd, read through the event loop."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        # Raw from the start, so that bytes written before the link opens are not echoed back.
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.reader = asyncio.StreamReader()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.master, self._readable)
        self.open = True

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""  # EIO: the slave side is gone
        if data:
            self.reader.feed_data(data)
        else:
            self._loop.remove_reader(self.master)
            self.reader.feed_eof()

    def write(self, data: bytes) -> None:
        """Write to the line; bytes written to an unplugged line are lost."""
        if self.open:
            os.write(self.master, data)

    def unplug(self) -> None:
        """Close the master: the link's reads on the slave fail."""
        if self.open:
            self.open = False
            self._loop.remove_reader(self.master)
            os.close(self.master)
            os.close(self.slave)
            self.reader.feed_eof()
