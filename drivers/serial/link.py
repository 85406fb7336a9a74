"""The serial link to a table's devices: read frames, journal their events, acknowledge.

One :class:`SerialSource` per serial line (``[[serial]]`` in the configuration). It opens the
port, feeds what it reads to a :class:`~drivers.serial.framing.FrameReader`, decodes each frame
with :mod:`drivers.serial.protocol` and hands the event to the intake. It answers:

* ``ACK,<dev>,<seq>`` once ``intake.submit`` has returned (the event is durable, applied or
  refused: the frame was handled) and to a heartbeat. A resend of a frame already journaled
  is acknowledged again; the journal does not apply its id twice.
* ``NAK,<dev>,<seq>,<reason>`` to a frame with a good checksum and a bad payload (when the
  device and seq can be read); the fault is also handed to ``intake.reject``.
* nothing to a bad checksum or garbage: the device resends. Each skipped run is rejected once
  and counted in :attr:`SerialSource.errors`.
* nothing while the controller fails closed (``ControllerUnavailableError``): the device keeps
  resending and nothing is lost.
* nothing to a frame the controller fails on (:class:`EventNotRecordedError`, or any error from
  the intake: a fault of its own), so that the device resends it; the same frame failing
  :data:`~drivers.poison.DEAD_LETTER_AFTER` times is parked: journaled whole as a
  ``dead-letter`` fault and answered ``NAK,<dev>,<seq>,dead-letter``, so the device moves on
  (:mod:`drivers.poison`). Whatever the decoder raises is a rejection (``undecodable``).

Frames are handled one at a time, in order, so a table's events reach the sequencer in the
order the devices sent them. When the port fails (it cannot be opened, a read fails, or it
reaches end of file because a USB adapter was unplugged or a pty closed) the link closes it
and opens it again after a capped exponential backoff, until cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import TYPE_CHECKING, Final, Protocol, TypeAlias

from controller.backoff import Backoff, keep_connected
from controller.ports import ControllerUnavailableError
from drivers.poison import DEAD_LETTER, DEAD_LETTER_AFTER, PoisonCount, SourceHealth, digest
from drivers.serial.framing import FrameError, FrameReader, encode_frame
from drivers.serial.protocol import (
    Heartbeat,
    ProtocolError,
    ack,
    decode_message,
    nak,
    parse_header,
)
from drivers.serial.refusals import REFUSALS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

    from controller.ports import Intake
    from drivers.serial.settings import SerialPortSettings

log = logging.getLogger(__name__)

READ_SIZE: Final = 4096
CLOSE_TIMEOUT_S: Final = 2.0
"""How long closing a port may take before the link gives up on it and reopens."""


class ByteReader(Protocol):
    """The reading half of a port: :class:`asyncio.StreamReader` or a test double."""

    async def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes; ``b""`` at end of file."""
        ...


class ByteWriter(Protocol):
    """The writing half of a port: :class:`asyncio.StreamWriter` or a test double."""

    def write(self, data: bytes) -> None:
        """Queue bytes for sending."""
        ...

    async def drain(self) -> None:
        """Wait until the queue is below its high-water mark."""
        ...

    def close(self) -> None:
        """Close the port."""
        ...

    async def wait_closed(self) -> None:
        """Wait until the port is closed."""
        ...


Opener: TypeAlias = "Callable[[SerialPortSettings], Awaitable[tuple[ByteReader, ByteWriter]]]"
"""Opens a port from its settings: a stream reader and writer, or an OSError."""


async def open_port(settings: SerialPortSettings) -> tuple[ByteReader, ByteWriter]:
    """Open a serial device path or pyserial URL (``socket://``, ``rfc2217://``, ``loop://``)."""
    # Imported here so that the framing and protocol layers, and tests that use fake
    # transports, do not need pyserial installed.
    import serial_asyncio_fast  # noqa: PLC0415

    return await serial_asyncio_fast.open_serial_connection(
        url=settings.url,
        baudrate=settings.baudrate,
        bytesize=settings.bytesize,
        parity=settings.parity,
        stopbits=settings.stopbits,
    )


class SerialSource:
    """A :class:`controller.ports.Source` reading one serial line (see the module docstring)."""

    def __init__(
        self,
        settings: SerialPortSettings,
        opener: Opener | None = None,
        *,
        backoff: Backoff | None = None,
    ) -> None:
        self.settings = settings
        self.name = f"serial:{settings.name}"
        self.provenance = f"serial port={settings.url} line={settings.name}"
        """What its rows say of where they came from (docs/journal.md, "Provenance")."""
        """How logs, rejected input and the configuration (``transport``) name this link."""
        self._open = opener or open_port
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self._intake: Intake | None = None
        self.connected = False
        """Whether the port is open now."""
        self.reconnects = 0
        """How many times the port was opened again after it failed."""
        self.errors: Counter[str] = Counter()
        """Rejected input by reason (``bad-crc``, ``garbage``, ``oversize``, payload reasons)."""
        self.refusals = REFUSALS
        """Every reason ``errors`` can count (:mod:`drivers.serial.refusals`)."""
        self.unacknowledged = 0
        """Frames left unanswered because the controller was failing closed."""
        self.last_error: str | None = None
        """Why the port last failed or could not be opened, for the status display."""
        self.health = SourceHealth()
        """Whether the link keeps failing (``/healthz``), and the frames it parked."""
        self._poison = PoisonCount()

    async def run(self, intake: Intake) -> None:
        """Keep the port open and serve it until cancelled.

        Port errors are retried forever; any other exception (from the intake, or settings
        pyserial refuses) is a bug or a configuration error and ends the run.
        """
        self._intake = intake
        await keep_connected(self, self._backoff)

    def open_session(self) -> AbstractAsyncContextManager[tuple[ByteReader, ByteWriter]]:
        """Open the port; closing the session closes it."""
        return port_session(self._open(self.settings))

    async def use_session(self, session: tuple[ByteReader, ByteWriter]) -> None:
        """Serve the open port until it fails."""
        if self._intake is None:  # pragma: no cover - run() sets it before opening
            raise RuntimeError("the serial link runs without an intake")
        await self._serve(*session, self._intake)

    def session_opened(self) -> None:
        """The port is open."""
        self._backoff.reset()
        self.health.worked()
        log.info("%s: %s open", self.name, self.settings.url)

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:
        """Port errors (pyserial's SerialException is an OSError) are retried; others end."""
        if not opened:
            return "cannot open" if isinstance(error, OSError) else None
        return "port failed" if isinstance(error, (OSError, EOFError)) else None

    def failed(self, what: str, error: Exception) -> None:
        """Record the failure: the last error, the health, the log."""
        self.last_error = f"{what}: {error}"
        self.health.failed(self.last_error)
        log.warning("%s: %s %s: %s", self.name, what, self.settings.url, error)

    async def _serve(self, reader: ByteReader, writer: ByteWriter, intake: Intake) -> None:
        frames = FrameReader()
        while True:
            try:
                chunk = await reader.read(READ_SIZE)
            except OSError:
                await self._flush(frames, intake)
                raise
            if not chunk:
                await self._flush(frames, intake)
                raise EOFError("end of file (device unplugged?)")
            for item in frames.feed(chunk):
                if isinstance(item, FrameError):
                    await self._skipped(item, intake)
                    continue
                answer = await self._handle(item.payload, intake)
                if answer is not None:
                    writer.write(encode_frame(answer))
                    await writer.drain()

    async def _handle(self, payload: str, intake: Intake) -> str | None:
        """Journal one frame's message; the payload to answer with, or None for silence."""
        try:
            header = parse_header(payload)
            message = decode_message(header, self.settings.table_id)
        except ProtocolError as error:
            return await self._refused(intake, error, payload)
        except Exception:  # noqa: BLE001 - no input may stop the link
            return await self._refused(intake, ProtocolError("undecodable"), payload)
        if isinstance(message, Heartbeat):
            intake.heartbeat(message.table_id, message.device, message.last)
        else:
            try:
                await intake.submit(message, provenance=self.provenance)
            except ControllerUnavailableError as error:
                # Failing closed: stay silent, the device resends until the journal is back.
                self.unacknowledged += 1
                log.warning("%s: not acknowledging %s: %s", self.name, message.event_id, error)
                return None
            except Exception as error:  # noqa: BLE001 - a fault of the controller's own
                return await self._not_recorded(intake, header.device, header.seq, payload, error)
            self._poison.forget(digest(payload.encode()))
            self.health.worked()
        return ack(header.device, header.seq)

    async def _refused(self, intake: Intake, error: ProtocolError, payload: str) -> str | None:
        """A payload that is no valid message: rejected, and NAKed if it can be."""
        if not await self._reject(intake, error.reason, payload):
            return None
        if error.device is None or error.seq is None:
            return None
        return nak(error.device, error.seq, error.reason)

    async def _not_recorded(
        self, intake: Intake, device: str, seq: int, payload: str, error: Exception
    ) -> str | None:
        """A frame the controller failed on: silence (it is resent), or parked if it keeps on."""
        key = digest(payload.encode())
        failures = self._poison.failed(key)
        self.health.failed(f"{device}/{seq}: {error}")
        if failures < DEAD_LETTER_AFTER:
            self.unacknowledged += 1
            log.error("%s: cannot record %s/%s (%s): %s", self.name, device, seq, failures, error)
            return None
        detail = f"parked after {failures} failures ({type(error).__name__}: {error}): {payload}"
        log.error("ALARM %s: dead-lettered %s/%s: %s", self.name, device, seq, error)
        if not await self._reject(intake, DEAD_LETTER, detail):
            return None
        self._poison.forget(key)
        self.health.dead_letters += 1
        self.health.worked()
        return nak(device, seq, DEAD_LETTER)

    async def _flush(self, frames: FrameReader, intake: Intake) -> None:
        # A frame cut off by the failure is resent by the device; report what was held.
        for notice in frames.flush():
            await self._skipped(notice, intake)

    async def _skipped(self, notice: FrameError, intake: Intake) -> None:
        await self._reject(intake, notice.reason, notice.describe())

    async def _reject(self, intake: Intake, reason: str, detail: str) -> bool:
        """Count and report bad input; False if the controller could not record it."""
        self.errors[reason] += 1
        log.info("%s: rejected (%s) %s", self.name, reason, detail)
        try:
            await intake.reject(self.name, reason, detail)
        except ControllerUnavailableError as error:
            # Not recorded: leave the device unanswered so that it tries again later.
            log.warning("%s: could not record a rejected frame: %s", self.name, error)
            return False
        return True


@contextlib.asynccontextmanager
async def port_session(
    opening: Awaitable[tuple[ByteReader, ByteWriter]],
) -> AsyncIterator[tuple[ByteReader, ByteWriter]]:
    """A port opened for one session of the reconnect loop (serial links, signs), then closed."""
    reader, writer = await opening
    try:
        yield reader, writer
    finally:
        await _close(writer)


async def _close(writer: ByteWriter) -> None:
    """Close a port, tolerating one that already failed, without hanging the reconnect."""
    writer.close()
    with contextlib.suppress(OSError, EOFError, TimeoutError):
        async with asyncio.timeout(CLOSE_TIMEOUT_S):
            await writer.wait_closed()
