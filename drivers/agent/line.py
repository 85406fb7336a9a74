"""One serial line of the table's devices, served by the agent: stored first, then ACKed.

The devices speak the reference serial protocol to the agent exactly as they would to the
controller (docs/architecture.md, "The reference serial protocol"; the framing and payloads
of :mod:`drivers.serial`). The agent answers each frame:

* a valid event is stored in the outbox (WAL, ``synchronous=FULL``) and then ``ACK``ed: from
  then on the agent, not the device, is responsible for it reaching the journal. A resend
  (a device ``seq`` already stored) is ``ACK``ed again without storing it twice, whatever the
  table's state meanwhile;
* a chip arriving on a progressive spot while the table is CLOSED (the controller has gone
  quiet, :mod:`controller.agent.gate`) is ``NAK``ed ``table-closed`` and not stored, and so is
  a lock while progressive chips that arrived before are still on their spots: no
  progressive wager is taken while the table is closed;
* a heartbeat is ``ACK``ed (the agent's own heartbeat tells the controller the table lives);
* a payload that is no valid message is ``NAK``ed with its reason when the device and seq
  could be read, and skipped bytes are counted, as the controller's serial link does;
* if the outbox cannot be written, nothing is answered: the device resends.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING

from controller.agent.gate import chips_after, lock_refusal, wager_refusal
from controller.backoff import Backoff, keep_connected
from controller.clock import utc_now
from controller.events import BetSensed, BetsLocked
from controller.ports import OutboxError
from drivers.serial.framing import FrameError, FrameReader, encode_frame
from drivers.serial.link import READ_SIZE, open_port, port_session
from drivers.serial.protocol import (
    Header,
    Heartbeat,
    ProtocolError,
    ack,
    decode_message,
    nak,
    parse_header,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager

    from controller.agent.store import AgentOutbox
    from controller.events import AnyEvent
    from drivers.agent.state import FaultLog
    from drivers.serial.link import ByteReader, ByteWriter, Opener
    from drivers.serial.settings import SerialPortSettings

log = logging.getLogger(__name__)


class AgentLine:
    """A serial line of the agent's table (see the module docstring)."""

    def __init__(
        self,
        settings: SerialPortSettings,
        outbox: AgentOutbox,
        faults: FaultLog,
        table_open: Callable[[], bool],
        stored: Callable[[], None],
    ) -> None:
        self.settings = settings
        self.name = f"serial:{settings.name}"
        self._outbox = outbox
        self._faults = faults
        self._table_open = table_open
        self._stored = stored
        self._open: Opener = open_port
        self._backoff = Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self.connected = False
        self.reconnects = 0
        self.refused: Counter[str] = Counter()
        """Frames refused, by reason (bad input, ``table-closed``)."""
        self.unanswered = 0
        """Frames left unanswered because the outbox could not be written."""

    async def run(self) -> None:
        """Keep the port open and serve it until cancelled."""
        await keep_connected(self, self._backoff)

    def open_session(self) -> AbstractAsyncContextManager[tuple[ByteReader, ByteWriter]]:
        """Open the port; closing the session closes it."""
        return port_session(self._open(self.settings))

    async def use_session(self, session: tuple[ByteReader, ByteWriter]) -> None:
        """Serve the open port until it fails."""
        reader, writer = session
        frames = FrameReader()
        while True:
            chunk = await reader.read(READ_SIZE)
            if not chunk:
                raise EOFError("end of file (device unplugged?)")
            for item in frames.feed(chunk):
                if isinstance(item, FrameError):
                    self._refuse(item.reason, item.describe())
                    continue
                answer = self.answer(item.payload)
                if answer is not None:
                    writer.write(encode_frame(answer))
                    await writer.drain()

    def session_opened(self) -> None:
        """The port is open."""
        self._backoff.reset()
        log.info("%s: %s open", self.name, self.settings.url)

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:
        """Port errors are retried; anything else ends the agent."""
        if not opened:
            return "cannot open" if isinstance(error, OSError) else None
        return "port failed" if isinstance(error, (OSError, EOFError)) else None

    def failed(self, what: str, error: Exception) -> None:
        """Log the failure and keep it as a fault."""
        log.warning("%s: %s %s: %s", self.name, what, self.settings.url, error)
        self._faults.keep("serial-failed", f"{self.name}: {what}: {error}")

    def answer(self, payload: str) -> str | None:
        """The answer to one frame's payload, once what it says is durable; None: silence."""
        try:
            header = parse_header(payload)
            message = decode_message(header, self.settings.table_id)
        except ProtocolError as error:
            self._refuse(error.reason, payload)
            if error.device is None or error.seq is None:
                return None
            return nak(error.device, error.seq, error.reason)
        except Exception:  # noqa: BLE001 - no input may stop the line
            self._refuse("undecodable", payload)
            return None
        if isinstance(message, Heartbeat):
            return ack(header.device, header.seq)
        try:
            return self._take(header, message, payload)
        except OutboxError:
            self.unanswered += 1
            log.exception("%s: not acknowledging %s/%s", self.name, header.device, header.seq)
            return None

    def _take(self, header: Header, message: AnyEvent, payload: str) -> str:
        """Store an event and ``ACK`` it, or ``NAK`` it while the table is closed."""
        outbox = self._outbox
        if header.seq <= outbox.stored_from(header.device):
            # Stored already (its ACK was lost): the same answer, whatever the table's state
            # now, or the device would drop what the agent will still forward.
            return ack(header.device, header.seq)
        chips = outbox.progressive_chips
        refusal = None
        if isinstance(message, BetSensed):
            refusal = wager_refusal(message, table_open=self._table_open())
        elif isinstance(message, BetsLocked):
            refusal = lock_refusal(chips, table_open=self._table_open())
        if refusal is not None:
            self._refuse(refusal, payload)
            self._faults.keep(f"refused-{refusal}", f"{self.name}: {payload}")
            return nak(header.device, header.seq, refusal)
        after = chips_after(chips, message)
        changed = None if after == chips else after
        if outbox.store(header.device, header.seq, payload, utc_now(), changed) is not None:
            self._stored()
        return ack(header.device, header.seq)

    def _refuse(self, reason: str, detail: str) -> None:
        self.refused[reason] += 1
        log.info("%s: refused (%s) %s", self.name, reason, detail)
