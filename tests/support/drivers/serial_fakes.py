"""Fault-injecting fake serial lines and a fake table device, for the serial link tests.

As in zigpy/bellows, the link is driven through fake transports that misbehave the way real
lines do: bytes delivered one at a time, bytes lost or flipped, deliveries delayed, the cable
pulled. The :class:`FakeDevice` behaves like the reference device: it frames its messages,
resends each until the host answers it (ACK or NAK), and can move to a new line after a
replug. Everything runs on the event loop; randomness comes from seeded generators so a
failure replays.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drivers.serial.framing import Frame, FrameReader, encode_frame

if TYPE_CHECKING:
    from collections.abc import Callable

    from drivers.serial.link import ByteReader
    from drivers.serial.settings import SerialPortSettings


def seeded(seed: int) -> random.Random:
    """A generator for fault injection (not cryptography), seeded so that failures replay."""
    return random.Random(seed)  # noqa: S311


@dataclass
class Faults:
    """What one direction of a line does to the bytes written into it."""

    chunk: int = 4096
    """At most this many bytes per read at the far end (1: one byte at a time)."""
    loss: float = 0.0
    """Probability that each byte is dropped."""
    corrupt: float = 0.0
    """Probability that each byte gets one bit flipped."""
    max_delay: float = 0.0
    """Each write arrives up to this many seconds late (random; order kept)."""
    rng: random.Random = field(default_factory=lambda: seeded(0))

    def damage(self, data: bytes) -> bytes:
        """The bytes that survive the line."""
        if not self.loss and not self.corrupt:
            return data
        out = bytearray()
        for byte in data:
            if self.rng.random() < self.loss:
                continue
            flip = 1 << self.rng.randrange(8) if self.rng.random() < self.corrupt else 0
            out.append(byte ^ flip)
        return bytes(out)


class Wire:
    """One direction of a line: writes are damaged, delayed in order, then delivered."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.reader = asyncio.StreamReader()
        """What the far end reads from."""
        self.delivered = bytearray()
        """Every byte delivered, for assertions."""
        self._queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        self._due = 0.0
        self._pump = asyncio.create_task(self._deliver()) if faults.max_delay else None
        self.closed = False

    def write(self, data: bytes) -> None:
        """Put bytes on the wire (silently lost once the wire is cut)."""
        if self.closed:
            return
        data = self.faults.damage(data)
        if self._pump is None:
            self._feed(data)
        else:
            # Latency with jitter, order kept: a write is due a random delay after it was
            # made, and never before the write ahead of it.
            loop = asyncio.get_running_loop()
            due = loop.time() + self.faults.rng.uniform(0, self.faults.max_delay)
            self._due = max(due, self._due)
            self._queue.put_nowait((self._due, data))

    def cut(self, error: Exception | None = None) -> None:
        """The cable is pulled: bytes in flight are lost; the far end sees EOF or ``error``."""
        if self.closed:
            return
        self.closed = True
        if self._pump is not None:
            self._pump.cancel()
        if error is None:
            self.reader.feed_eof()
        else:
            self.reader.set_exception(error)

    def _feed(self, data: bytes) -> None:
        if data:
            self.delivered += data
            self.reader.feed_data(data)

    async def _deliver(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due, data = await self._queue.get()
            # A simulated transmission delay, not a poll: the pump waits on the queue.
            await asyncio.sleep(max(0.0, due - loop.time()))
            self._feed(data)


class ChunkedReader:
    """A reader that hands out at most ``size`` bytes per read, whatever is buffered."""

    def __init__(self, inner: asyncio.StreamReader, size: int) -> None:
        self.inner = inner
        self.size = size
        self.reads = 0

    async def read(self, n: int = -1) -> bytes:
        """Up to ``min(n, size)`` bytes; ``b""`` at EOF."""
        self.reads += 1
        return await self.inner.read(self.size if n < 0 else min(n, self.size))


class WireWriter:
    """The host's writer onto a wire, shaped like :class:`asyncio.StreamWriter`."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.closed = False

    def write(self, data: bytes) -> None:
        """Send bytes (ignored once closed, as a closed serial transport does)."""
        if not self.closed:
            self.wire.write(data)

    async def drain(self) -> None:
        """Nothing is ever buffered here."""

    def close(self) -> None:
        """Close the port."""
        self.closed = True

    async def wait_closed(self) -> None:
        """Closing is immediate."""


class FakeLine:
    """One connection: a wire each way, the host's ends and the device's ends."""

    def __init__(self, to_host: Faults, to_device: Faults) -> None:
        self.up = Wire(to_host)
        self.down = Wire(to_device)
        self.host_reader = ChunkedReader(self.up.reader, to_host.chunk)
        self.host_writer = WireWriter(self.down)
        self.device_reader = ChunkedReader(self.down.reader, to_device.chunk)
        """What the device reads (the host's answers)."""

    def device_write(self, data: bytes) -> None:
        """What the device writes."""
        self.up.write(data)

    def unplug(self, error: Exception | None = None) -> None:
        """Pull the cable: the host sees EOF (or ``error``) and so does the device."""
        self.up.cut(error)
        self.down.cut()


class FakePorts:
    """An opener for :class:`drivers.serial.link.SerialSource`: each open plugs a new line."""

    def __init__(self, to_host: Faults | None = None, to_device: Faults | None = None) -> None:
        self.to_host = to_host or Faults()
        self.to_device = to_device or Faults()
        self.lines: list[FakeLine] = []
        self.failures = 0
        """Fail this many of the next opens (the adapter is not plugged in)."""
        self.attempts = 0
        self._opened = asyncio.Event()

    async def __call__(self, settings: SerialPortSettings) -> tuple[ChunkedReader, WireWriter]:
        """Open the port named by ``settings``."""
        self.attempts += 1
        if self.failures:
            self.failures -= 1
            raise FileNotFoundError(f"{settings.url}: no such device (fake)")
        line = FakeLine(self.to_host, self.to_device)
        self.lines.append(line)
        self._opened.set()
        return line.host_reader, line.host_writer

    def close(self) -> None:
        """Unplug every line (stops their delivery tasks)."""
        for line in self.lines:
            line.unplug()

    async def line(self, index: int) -> FakeLine:
        """The ``index``-th line opened, once it is."""
        while len(self.lines) <= index:
            self._opened.clear()
            await self._opened.wait()
        return self.lines[index]


class FakeDevice:
    """A reference-protocol device: frames its messages and resends each until answered."""

    def __init__(self, *, resend_after: float = 0.1) -> None:
        self.resend_after = resend_after
        self.answers: list[str] = []
        """Every answer received from the host, in order (resends answered again included)."""
        self.writes = 0
        """Frames written, resends included."""
        self._write: Callable[[bytes], None] = lambda _data: None
        self._pending: dict[tuple[str, int], asyncio.Future[str]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._answered = asyncio.Event()

    def attach(self, reader: ByteReader, write: Callable[[bytes], None]) -> None:
        """Plug into a line (again): read the host's answers from it and write to it."""
        self.detach()
        self._write = write
        self._listener = asyncio.create_task(self._listen(reader))

    def detach(self) -> None:
        """Unplug: stop listening; writes go nowhere until the next attach."""
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None
        self._write = lambda _data: None

    async def close(self) -> None:
        """Stop the listener and wait for it."""
        listener = self._listener
        self.detach()
        if listener is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are, once (no framing, no resend)."""
        self._write(data)

    async def send(self, payload: str) -> str:
        """Send a message until the host answers it; the answer's payload (ACK or NAK)."""
        _kind, device, seq, *_ = payload.split(",")
        key = (device, int(seq))
        answer = self._pending.get(key)
        if answer is None or answer.done():
            answer = self._pending[key] = asyncio.get_running_loop().create_future()
        frame = encode_frame(payload)
        while True:
            self.writes += 1
            self._write(frame)
            # The device's resend timer: silence for resend_after means "send it again".
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.resend_after):
                    return await asyncio.shield(answer)

    async def next_answer(self) -> str:
        """The next answer to arrive from the host."""
        count = len(self.answers)
        while len(self.answers) == count:
            self._answered.clear()
            await self._answered.wait()
        return self.answers[count]

    async def _listen(self, reader: ByteReader) -> None:
        frames = FrameReader()
        while chunk := await reader.read(4096):
            for item in frames.feed(chunk):
                if isinstance(item, Frame):
                    self._answer(item.payload)

    def _answer(self, payload: str) -> None:
        self.answers.append(payload)
        self._answered.set()
        _kind, device, seq, *_ = payload.split(",")
        pending = self._pending.get((device, int(seq)))
        if pending is not None and not pending.done():
            pending.set_result(payload)
