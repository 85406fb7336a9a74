"""The serial link of a simulated table: frames written again until the host ACKs them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tty
from typing import TYPE_CHECKING, Protocol, Self

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete
from drivers.serial.framing import Frame, FrameReader, encode_frame
from drivers.simulator_links.common import (
    READ_SIZE,
    RESEND_AFTER_S,
    HeartbeatSeqs,
    LinkClosedError,
    NakError,
    fail_future,
)

if TYPE_CHECKING:
    from controller.events import DeviceInput
    from drivers.serial.link import ByteReader

log = logging.getLogger(__name__)


def serial_payload(event: DeviceInput) -> str:
    """The reference serial protocol's payload of an event (the text between ``$`` and ``*``)."""
    head = f"{event.device},{event.seq}"
    match event:
        case BetSensed():
            present = "1" if event.present else "0"
            return f"BET,{head},{event.seat},{event.spot},{present},{event.amount_cents}"
        case BetsLocked():
            return f"LOCK,{head},{event.round_id}"
        case CardDealt():
            return f"CARD,{head},{event.round_id},{event.position},{event.card}"
        case DealComplete():
            return f"DONE,{head},{event.round_id}"


def serial_heartbeat(device: str, seq: int, last: int | None = None) -> str:
    """The payload of a heartbeat frame, with the last event's ``seq`` if any."""
    return f"HB,{device},{seq}" if last is None else f"HB,{device},{seq},{last}"


class FrameWriter(Protocol):
    """The writing half of a line: :class:`asyncio.StreamWriter` or a test double."""

    def write(self, data: bytes) -> None:
        """Queue bytes for sending."""
        ...

    async def drain(self) -> None:
        """Wait until the queue is below its high-water mark."""
        ...


class SerialTableLink:
    """One table's devices on a serial line (see the module docstring).

    ``reader`` and ``writer`` are the device end of the line (a :class:`PtyPair` master, a
    socket, a fake). Use as ``async with SerialTableLink("t2", reader, writer) as link:``;
    entering starts reading the host's answers.
    """

    def __init__(
        self,
        table_id: str,
        reader: ByteReader,
        writer: FrameWriter,
        *,
        resend_after_s: float = RESEND_AFTER_S,
    ) -> None:
        self.table_id = table_id
        self.resend_after_s = resend_after_s
        self._reader = reader
        self._writer = writer
        self.writes = 0
        """Frames written, resends included."""
        self.resends = 0
        """Frames written again because no answer came within ``resend_after_s``."""
        self.answers: list[str] = []
        """Every answer from the host (ACK or NAK payloads), in order, late ones included."""
        self.acknowledged: list[str] = []
        """Event ids the host acknowledged, in order (first acknowledgement only)."""
        self.heartbeats_sent = 0
        self.heartbeats_unanswered = 0
        self._pending: dict[tuple[str, int], asyncio.Future[str]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._heartbeat_seqs = HeartbeatSeqs()

    async def __aenter__(self) -> Self:
        self._listener = asyncio.create_task(self._listen(), name=f"serial link {self.table_id}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop reading answers and fail the frames still waiting (LinkClosedError)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        for future in self._pending.values():
            fail_future(future, LinkClosedError(f"serial link of {self.table_id} closed"))
        self._pending.clear()

    async def send(self, event: DeviceInput) -> None:
        """Write the event's frame until the host acknowledges it; NakError if it refuses it."""
        if event.table_id != self.table_id:
            raise ValueError(f"event of table {event.table_id} on the link of {self.table_id}")
        answer = await self.exchange(serial_payload(event))
        if answer is None or not answer.startswith("ACK,"):
            raise NakError(answer or "")
        self.acknowledged.append(event.event_id)

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Write a heartbeat once and wait a moment for its ACK (a late one is just dropped)."""
        if table_id != self.table_id:
            raise ValueError(f"heartbeat of table {table_id} on the link of {self.table_id}")
        seq = self._heartbeat_seqs.next(device)
        answer = await self.exchange(serial_heartbeat(device, seq, last), resend=False)
        if answer is None:
            self.heartbeats_unanswered += 1
        else:
            self.heartbeats_sent += 1

    async def exchange(self, payload: str, *, resend: bool = True) -> str | None:
        """Write a payload's frame and return the host's answer (``ACK,...`` or ``NAK,...``).

        With ``resend`` the frame is written again every ``resend_after_s`` until answered, as
        the reference device does; without, it is written once and None is returned if no
        answer came within ``resend_after_s``.
        """
        if self._listener is None:
            raise LinkClosedError(f"serial link of {self.table_id} is not open")
        _kind, device, seq, *_ = payload.split(",")
        key = (device, int(seq))
        answer = self._pending.get(key)
        if answer is None or answer.done():
            answer = self._pending[key] = asyncio.get_running_loop().create_future()
        frame = encode_frame(payload)
        try:
            while True:
                await self.write_raw(frame)
                # The resend timer: silence for resend_after_s means "send it again".
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.resend_after_s):
                        return await asyncio.shield(answer)
                if not resend:
                    return None
                self.resends += 1
        finally:
            if self._pending.get(key) is answer:
                del self._pending[key]

    async def write_raw(self, data: bytes) -> None:
        """Write bytes as they are, once (frames, or noise to inject faults)."""
        self.writes += 1
        self._writer.write(data)
        await self._writer.drain()

    async def _listen(self) -> None:
        frames = FrameReader()
        while chunk := await self._reader.read(READ_SIZE):
            for item in frames.feed(chunk):
                if isinstance(item, Frame):
                    self._answer(item.payload)

    def _answer(self, payload: str) -> None:
        self.answers.append(payload)
        kind, device, seq, *_ = [*payload.split(","), "", ""]
        if kind not in {"ACK", "NAK"} or not seq.isdigit():
            log.warning("serial link %s: unexpected answer %r", self.table_id, payload)
            return
        pending = self._pending.get((device, int(seq)))
        if pending is not None and not pending.done():
            pending.set_result(payload)

    def __repr__(self) -> str:
        return f"SerialTableLink({self.table_id!r})"


class PtyPair:
    """A pseudo-terminal: the daemon opens :attr:`path` (the slave) like any serial device.

    :meth:`open` gives asyncio streams on the master, the devices' end of the line. The slave
    stays open here too, so that the daemon closing and reopening its port (a reconnect) does
    not end the master's stream.
    """

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        # Raw before anyone writes: a cooked slave would echo the devices' frames back.
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._transports: list[asyncio.BaseTransport] = []

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A reader and a writer on the master (each on its own duplicate of the fd)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        read_pipe = os.fdopen(os.dup(self.master), "rb", buffering=0)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), read_pipe
        )
        write_pipe = os.fdopen(os.dup(self.master), "wb", buffering=0)
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), write_pipe
        )
        self._transports += [read_transport, write_transport]
        return reader, asyncio.StreamWriter(write_transport, protocol, None, loop)

    def close(self) -> None:
        """Close both ends (the daemon's reads then fail, as an unplugged adapter's do)."""
        for transport in self._transports:
            transport.close()
        self._transports.clear()
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
