"""An Alpha LED meter sign on a serial line: the sink that writes what a sign shows.

One :class:`AlphaSign` per sign (``[[alpha_sign]]`` in the configuration, settings
:class:`AlphaSignSettings`). It is a :class:`controller.ports.Sink`: it consumes the committed
updates, feeds them to the sign's :class:`~drivers.signs.behaviour.SignBehaviour` with the
event loop's clock, and writes the texts that state machine asks for as Alpha frames
(:mod:`drivers.signs.alpha`).

**Port.** The port is opened with pyserial-asyncio-fast (a device path, or a pyserial URL such
as ``socket://`` for a sign behind a terminal server). After each (re)connection the sink
configures the sign's memory (``E$``: a TEXT file and a STRING file), writes the TEXT file
that calls the STRING file, then writes the current text into the STRING file; from then on
every change is one STRING write and the sign does not redraw. The sign answers nothing (its
ACK/NAK answers stay off), so a pulled cable or a closed pty is noticed by the read side
reaching end of file or failing; a write that does not drain within ``write_timeout_s`` also
counts as a failure. The port is then closed and reopened after a capped exponential backoff
until the sink is cancelled; memory is configured again on the new connection, as the sign
may have been power-cycled meanwhile.

**Timing.** No task sleeps to poll. The state machine's wake-ups (the end of a JACKPOT
hold, the next turn, a change held back by the rate limit) are one ``loop.call_at`` timer.
Frames are written at most every ``min_interval_s``, including the set-up frames, and the
frame after the memory configuration waits at least ``configure_pause_s`` (the sign
reorganises its memory). While the port is down only the newest text is kept; it is
written right after the next configuration.

**Counters** for the metrics module: ``frames_sent``, ``errors``, ``reconnects``,
``configurations``, ``truncated``, ``stale_dropped``, ``connected``, ``last_error``, and the
latency of each STRING write (from the arrival at this sink of the oldest update it is the
first to show, to the frame being handed to the port): ``last_latency_s``, the recent
``latencies`` and the ``on_latency`` callback (for ``jackpotd_event_to_sign_seconds``).
Texts changed by a timer (the meter coming back after a JACKPOT hold, the next turn) have no
update behind them and record no latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import TYPE_CHECKING, Final, TypeAlias

import msgspec

from controller.backoff import Backoff, keep_connected
from drivers.serial.link import port_session
from drivers.signs.alpha import Mode, Position, SignLayout
from drivers.signs.behaviour import SignBehaviour
from drivers.signs.rules import ClosedMode, SignRules
from drivers.tasks import until_first_ends

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

    from controller.outputs import AnyUpdate
    from drivers.serial.link import ByteReader, ByteWriter
    from drivers.signs.behaviour import Show, Step

log = logging.getLogger(__name__)

READ_SIZE: Final = 256
LATENCY_WINDOW: Final = 256
"""How many recent latencies :attr:`AlphaSign.latencies` keeps."""


class AlphaSignSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One Alpha sign on a serial line, bound to a pool (and to the tables it hangs over)."""

    name: str
    url: str
    """A device path (``/dev/ttyUSB0``) or any pyserial URL (``socket://host:port``)."""
    pool_id: str
    tables: list[str] = []
    """Tables whose closing makes this sign show CLOSED (the controller's always does)."""
    address: str = "00"
    """Two hex digits; ``00`` is every sign on the line."""
    type_code: str = "Z"
    """``Z``: all sign types."""
    baudrate: int = 9600
    bytesize: int = 7
    parity: str = "E"
    stopbits: float = 1
    """The Alpha default character format is 7E1; many signs also take 8N1."""
    min_interval_s: float = 0.25
    jackpot_hold_s: float = 10.0
    closed_mode: ClosedMode = "closed"
    alternate_s: float = 2.0
    closed_text: str = "CLOSED"
    jackpot_format: str = "JACKPOT {table} SEAT {seat} {amount}"
    text_label: str = "A"
    string_label: str = "1"
    string_size: int = 64
    """Bytes allocated to the STRING file (at most 125); longer texts are cut."""
    position: Position = "fill"
    mode: Mode = "hold"
    configure_pause_s: float = 0.5
    write_timeout_s: float = 5.0
    backoff_initial_s: float = 0.1
    backoff_cap_s: float = 5.0

    def __post_init__(self) -> None:
        for key in ("name", "url", "pool_id"):
            if not getattr(self, key).strip():
                raise ValueError(f"{key} must not be empty")
        if self.baudrate <= 0:
            raise ValueError("baudrate must be positive")
        if self.bytesize not in (7, 8):
            raise ValueError("bytesize must be 7 or 8")
        if self.parity not in ("N", "E", "O"):
            raise ValueError("parity must be N, E or O")
        if self.stopbits not in (1, 1.5, 2):
            raise ValueError("stopbits must be 1, 1.5 or 2")
        if self.configure_pause_s < 0 or self.write_timeout_s <= 0:
            raise ValueError("configure_pause_s must be >= 0 and write_timeout_s > 0")
        if not 0 < self.backoff_initial_s <= self.backoff_cap_s:
            raise ValueError("backoff_initial_s must be above 0 and at most backoff_cap_s")
        self.rules()
        self.layout()

    def rules(self) -> SignRules:
        """What the sign shows, and when."""
        return SignRules(
            pool_id=self.pool_id,
            tables=frozenset(self.tables),
            min_interval_s=self.min_interval_s,
            jackpot_hold_s=self.jackpot_hold_s,
            closed_mode=self.closed_mode,
            alternate_s=self.alternate_s,
            closed_text=self.closed_text,
            jackpot_format=self.jackpot_format,
            width=self.string_size,
        )

    def layout(self) -> SignLayout:
        """How the sign is addressed and what its memory holds."""
        return SignLayout(
            type_code=self.type_code,
            address=self.address,
            text_label=self.text_label,
            string_label=self.string_label,
            string_size=self.string_size,
            position=self.position,
            mode=self.mode,
        )


Opener: TypeAlias = "Callable[[AlphaSignSettings], Awaitable[tuple[ByteReader, ByteWriter]]]"
"""Opens a sign's port from its settings: a stream reader and writer, or an OSError."""


async def open_port(settings: AlphaSignSettings) -> tuple[ByteReader, ByteWriter]:
    """Open a serial device path or pyserial URL with the sign's line settings."""
    # Imported here so that the protocol, the behaviour and their tests need no pyserial.
    import termios  # noqa: PLC0415

    import serial_asyncio_fast  # noqa: PLC0415

    try:
        return await serial_asyncio_fast.open_serial_connection(
            url=settings.url,
            baudrate=settings.baudrate,
            bytesize=settings.bytesize,
            parity=settings.parity,
            stopbits=settings.stopbits,
        )
    except termios.error as error:
        # A line setting the port refuses (a Linux pty takes 8N1 only): a port failure like
        # any other, retried and counted, not a crash of the sink.
        raise OSError(*error.args) from error


class AlphaSign:
    """A :class:`controller.ports.Sink` driving one Alpha sign (see the module docstring)."""

    drain_timeout_s: float = 2.0
    """When the updates end, how long the last text may take to reach the sign."""

    def __init__(
        self,
        settings: AlphaSignSettings,
        opener: Opener | None = None,
        *,
        backoff: Backoff | None = None,
        on_latency: Callable[[float], None] | None = None,
    ) -> None:
        self.settings = settings
        self.name = f"alpha-sign:{settings.name}"
        self.layout = settings.layout()
        self.behaviour = SignBehaviour(settings.rules(), self.name)
        self.on_latency = on_latency
        """Called with each latency in seconds (the metrics module's histogram)."""
        self._open = opener or open_port
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self._port_open = False
        self._configured = False
        self.reconnects = 0
        """How many times the port was opened again after it failed."""
        self.configurations = 0
        """How many times the sign's memory was configured (once per connection)."""
        self.frames_sent = 0
        """Frames handed to the port (memory configuration, TEXT and STRING writes)."""
        self.errors = 0
        """Port failures: opens that failed, reads at end of file or failing, write timeouts."""
        self.truncated = 0
        """Texts longer than the STRING file, cut to fit."""
        self.last_error: str | None = None
        self.latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        """The most recent update-to-frame latencies, in seconds, oldest first."""
        self.last_latency_s: float | None = None
        self.displayed: str | None = None
        """The text last written to the sign."""
        self._text: str | None = None
        self._since: float | None = None
        self._unwritten = False
        self._changed = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._timer: asyncio.TimerHandle | None = None
        self._last_write: float | None = None

    @property
    def stale_dropped(self) -> int:
        """Updates older, by ``(epoch, seq)``, than one already shown: dropped."""
        return self.behaviour.order.stale

    @property
    def connected(self) -> bool:
        """Whether the port is open and the sign configured now."""
        return self._port_open and self._configured

    @connected.setter
    def connected(self, value: bool) -> None:
        # Set by the reconnect loop as the port opens and closes; configured once open.
        self._port_open = value
        self._configured = self._configured and value

    async def run(self, updates: AsyncIterator[AnyUpdate]) -> None:
        """Show the updates until cancelled (or until they end and the last text is written)."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.TaskGroup() as tasks:
                connection = tasks.create_task(self._connect_loop())
                async for update in updates:
                    self._apply(self.behaviour.update(update, loop.time()))
                # The updates ended (shutdown): let the last text reach the sign.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.drain_timeout_s):
                        await self._idle.wait()
                connection.cancel()
        finally:
            self._schedule(None)

    # --- the state machine and its timer ----------------------------------------------------

    def _apply(self, step: Step) -> None:
        for show in step.shows:
            self._offer(show)
        if self.behaviour.waiting:
            self._idle.clear()
        self._schedule(step.wake_at)

    def _schedule(self, wake_at: float | None) -> None:
        if self._timer is not None:
            if wake_at is not None and self._timer.when() == wake_at:
                return
            self._timer.cancel()
            self._timer = None
        if wake_at is not None:
            self._timer = asyncio.get_running_loop().call_at(wake_at, self._wake)

    def _wake(self) -> None:
        self._timer = None
        self._apply(self.behaviour.wake(asyncio.get_running_loop().time()))

    def _offer(self, show: Show) -> None:
        """A text to show: the newest replaces one not yet written (its latency start kept)."""
        if len(show.text) > self.layout.string_size:
            self.truncated += 1
        self._text = show.text
        self._since = _earliest(self._since, show.since)
        self._unwritten = True
        self._idle.clear()
        self._changed.set()

    # --- the port ---------------------------------------------------------------------------

    async def _connect_loop(self) -> None:
        await keep_connected(self, self._backoff)

    def open_session(self) -> AbstractAsyncContextManager[tuple[ByteReader, ByteWriter]]:
        """Open the sign's line; closing the session closes it."""
        return port_session(self._open(self.settings))

    async def use_session(self, session: tuple[ByteReader, ByteWriter]) -> None:
        """Configure the sign and write to it; watch the line for its end."""
        reader, writer = session
        await until_first_ends(_watch(reader), self._serve(writer))

    def session_opened(self) -> None:
        """The line is open."""
        self._backoff.reset()
        log.info("%s: %s open", self.name, self.settings.url)

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:
        """Line errors (pyserial's SerialException is an OSError) are retried; others end."""
        if not opened:
            return "cannot open" if isinstance(error, OSError) else None
        return "port failed" if isinstance(error, (OSError, EOFError, TimeoutError)) else None

    def failed(self, what: str, error: Exception) -> None:
        """Count and record the failure."""
        self.errors += 1
        self.last_error = f"{what}: {str(error) or type(error).__name__}"
        log.warning("%s: %s (%s)", self.name, self.last_error, self.settings.url)

    async def _serve(self, writer: ByteWriter) -> None:
        """Configure the sign, then write each new text into its STRING file, forever."""
        settings = self.settings
        memory, text_file = self.layout.setup_frames()
        await self._write(writer, memory, settings.min_interval_s)
        await self._write(
            writer, text_file, max(settings.min_interval_s, settings.configure_pause_s)
        )
        self.configurations += 1
        self._configured = True
        # The configuration emptied the STRING file: show the current text again.
        self._unwritten = self._text is not None
        while True:
            if not self._unwritten or self._text is None:
                if not self.behaviour.waiting:
                    self._idle.set()
                self._changed.clear()
                await self._changed.wait()
                continue
            text, since = self._text, self._since
            self._unwritten, self._since = False, None
            try:
                await self._write(writer, self.layout.write_string(text), settings.min_interval_s)
            except BaseException:
                self._unwritten = True
                self._since = _earliest(self._since, since)
                raise
            self.displayed = text
            if since is not None:
                self._record(asyncio.get_running_loop().time() - since)

    async def _write(self, writer: ByteWriter, frame: bytes, gap_s: float) -> None:
        """Hand one frame to the port, at least ``gap_s`` after the previous one."""
        loop = asyncio.get_running_loop()
        if self._last_write is not None:
            wait = self._last_write + gap_s - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
        self._last_write = loop.time()
        writer.write(frame)
        async with asyncio.timeout(self.settings.write_timeout_s):
            await writer.drain()
        self.frames_sent += 1

    def _record(self, seconds: float) -> None:
        self.last_latency_s = seconds
        self.latencies.append(seconds)
        if self.on_latency is not None:
            try:
                self.on_latency(seconds)
            except Exception:
                log.exception("%s: the latency callback failed", self.name)

    def __repr__(self) -> str:
        return f"AlphaSign({self.name!r}, {self.settings.url!r}, pool {self.settings.pool_id!r})"


def _earliest(first: float | None, second: float | None) -> float | None:
    if first is None:
        return second
    if second is None:
        return first
    return min(first, second)


async def _watch(reader: ByteReader) -> None:
    """Raise when the port fails or ends; the sign sends nothing we need to read."""
    while True:
        if not await reader.read(READ_SIZE):
            raise EOFError("end of file (sign unplugged?)")
