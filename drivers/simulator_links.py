r"""Device links that make simulated tables speak the real protocols: MQTT and serial.

:class:`drivers.simulator.SimulatedTable` hands each device event to a
:class:`~drivers.simulator.DeviceLink`. :class:`~drivers.simulator.InProcessLink` gives it to
the controller directly (the demo); the links here put it on the wire the way a real table's
devices do, so that the integration tests and the benchmarks exercise the daemon's real
drivers, framing and acknowledgements end to end:

* :class:`MqttTableLink`: one MQTT client per table (docs/mqtt.md, "a table"): fixed client id
  ``table-<tid>``, persistent session, last will ``offline`` (retained, QoS 1) on
  ``table/<tid>/status``, ``online`` published there (retained) at every connection. Each event
  is a JSON payload on ``table/<tid>/event/<type>`` at QoS 1, and :meth:`MqttTableLink.send`
  returns once the broker acknowledged it (``PUBACK``). If the broker goes away the link
  reconnects with capped backoff and publishes again, first and in order, whatever was not
  acknowledged (at least once: the controller applies an event id once). It also reads the
  controller's ``table/<tid>/cmd/state`` (open or CLOSED), as a table's sign would.
* :class:`SerialTableLink`: the devices of one table on a serial line (BRIEF §5, reference
  protocol "table peripheral serial v1"): ``BET``/``LOCK``/``CARD``/``DONE``/``HB`` frames
  (:func:`drivers.serial.framing.encode_frame`), each written again until the host answers
  ``ACK`` (or ``NAK``), so :meth:`SerialTableLink.send` returns once the event is *journaled*
  (serial acknowledges end to end). :class:`PtyPair` gives it a pseudo-terminal: the daemon
  opens the slave path through pyserial as it would ``/dev/ttyUSB0``.

The encoders (:func:`mqtt_event`, :func:`serial_payload` and the heartbeats) are the inverse
of the controller's decoders, :func:`drivers.mqtt.payloads.decode_table_event` and
:func:`drivers.serial.protocol.decode_payload`; the tests check the round trip.

Heartbeats are best effort on both links: one that cannot be delivered now is dropped, not
queued, since a late heartbeat says nothing. Their sequence numbers are taken from
:data:`HEARTBEAT_SEQ_BASE` upward, apart from the table's event numbers (which start at 1), so
that a device never uses one ``seq`` for two messages (the serial host's ``ACK,<dev>,<seq>``
must name one frame).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tty
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, Self

import aiomqtt
import msgspec

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete
from drivers.backoff import Backoff
from drivers.mqtt.payloads import (
    OFFLINE,
    ONLINE,
    SCHEMA_VERSION,
    BetPayload,
    CardPayload,
    DonePayload,
    HeartbeatPayload,
    LockPayload,
    PayloadError,
    TablePayload,
    TableStatePayload,
    decode_table_state,
)
from drivers.mqtt.source import (
    QOS,
    cancellations,
    guarded,
    make_client,
    raise_if_cancelled,
    say_status,
)
from drivers.mqtt.topics import Topics
from drivers.serial.framing import Frame, FrameReader, encode_frame

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from controller.events import DeviceInput
    from controller.settings import BrokerSettings
    from drivers.serial.link import ByteReader

log = logging.getLogger(__name__)

HEARTBEAT_SEQ_BASE: Final = 2**31
"""The first ``seq`` of a device's heartbeats; its events count from 1, far below."""
MQTT_TIMEOUT_S: Final = 2.0
"""How long the MQTT link waits for the broker (CONNACK, SUBACK, PUBACK) before reconnecting."""
RESEND_AFTER_S: Final = 0.25
"""How long a serial device waits for the host's answer before writing a frame again."""
READ_SIZE: Final = 4096

_JSON: Final = msgspec.json.Encoder()


class LinkClosedError(ConnectionError):
    """The link was closed before the event was acknowledged."""


class NakError(ValueError):
    """The serial host refused a frame (``NAK,<dev>,<seq>,<reason>``): it will never take it."""

    def __init__(self, answer: str) -> None:
        super().__init__(f"the host refused the frame: {answer}")
        self.answer = answer
        self.reason = answer.split(",", 3)[3] if answer.count(",") >= 3 else ""


# Encoders: the inverse of the controller's decoders.


def _payload(kind: type[TablePayload], fields: dict[str, Any]) -> bytes:
    # Converting through the decoder's own Struct checks every field on the way out exactly as
    # the controller will on the way in, so a simulator bug shows here, not as a rejection.
    try:
        struct = msgspec.convert({"v": SCHEMA_VERSION, **fields}, kind)
    except msgspec.ValidationError as error:
        raise ValueError(f"cannot encode {fields!r}: {error}") from None
    return _JSON.encode(struct)


def mqtt_event(event: DeviceInput) -> tuple[str, bytes]:
    """The ``<type>`` level of ``table/<tid>/event/<type>`` and the JSON payload of an event.

    Raises ValueError if a field is out of the payload's range (see docs/mqtt.md).
    """
    head: dict[str, Any] = {"device": event.device, "seq": event.seq}
    match event:
        case BetSensed():
            bet = {"seat": event.seat, "spot": event.spot, "present": event.present}
            return "bet", _payload(BetPayload, head | bet | {"amount_cents": event.amount_cents})
        case BetsLocked():
            return "lock", _payload(LockPayload, head | {"round": event.round_id})
        case CardDealt():
            card = {"round": event.round_id, "position": event.position, "card": event.card}
            return "card", _payload(CardPayload, head | card)
        case DealComplete():
            return "done", _payload(DonePayload, head | {"round": event.round_id})


def mqtt_heartbeat(device: str, seq: int) -> bytes:
    """The payload of ``table/<tid>/event/heartbeat``."""
    return _payload(HeartbeatPayload, {"device": device, "seq": seq})


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


def serial_heartbeat(device: str, seq: int) -> str:
    """The payload of a heartbeat frame."""
    return f"HB,{device},{seq}"


@dataclass(slots=True)
class _HeartbeatSeqs:
    """Heartbeat sequence numbers per device, from :data:`HEARTBEAT_SEQ_BASE`."""

    last: dict[str, int] = field(default_factory=dict)

    def next(self, device: str) -> int:
        seq = self.last.get(device, HEARTBEAT_SEQ_BASE - 1) + 1
        self.last[device] = seq
        return seq


# MQTT.


@dataclass(slots=True)
class _Outgoing:
    """An event published until the broker acknowledges it."""

    event_id: str
    topic: str
    payload: bytes
    acked: asyncio.Future[None]
    attempts: int = 0


class MqttTableLink:
    """One table's devices on MQTT (see the module docstring).

    Use as ``async with MqttTableLink(settings, "t1") as link:``; entering starts the
    connection (in the background: events sent before it is up wait for it), leaving publishes
    ``offline`` (a clean DISCONNECT fires no last will) and disconnects.
    """

    def __init__(
        self,
        settings: BrokerSettings,
        table_id: str,
        *,
        backoff: Backoff | None = None,
        timeout_s: float = MQTT_TIMEOUT_S,
        offline_on_close: bool = True,
    ) -> None:
        self.settings = settings
        self.table_id = table_id
        self.topics = Topics(settings.site)
        self.status_topic = self.topics.table_status(table_id)
        self.command_topic = self.topics.table_command(table_id, "state")
        self.client_id = f"table-{table_id}"
        """Fixed, so that the broker keeps the table's session (docs/mqtt.md)."""
        self.timeout_s = timeout_s
        self.offline_on_close = offline_on_close
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self.connected = False
        """Whether the connection is up now."""
        self.connections = 0
        """Connections made (the first included)."""
        self.acknowledged: list[str] = []
        """Event ids in the order the broker acknowledged them (first acknowledgement only)."""
        self.republished = 0
        """Publications of an event again because its connection was lost before the PUBACK."""
        self.heartbeats_sent = 0
        self.heartbeats_dropped = 0
        """Heartbeats not delivered because the connection was down (best effort)."""
        self.states: list[TableStatePayload] = []
        """What the controller said on ``cmd/state`` (open or CLOSED), in order."""
        self.last_error: str | None = None
        self._pending: deque[_Outgoing] = deque()
        self._wake = asyncio.Event()
        self._up = asyncio.Event()
        self._states_changed = asyncio.Condition()
        self._client: aiomqtt.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._heartbeat_seqs = _HeartbeatSeqs()

    @property
    def pending(self) -> int:
        """Events waiting for the broker's acknowledgement."""
        return len(self._pending)

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run(), name=f"mqtt link {self.client_id}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def wait_connected(self) -> None:
        """Return once the connection is up (bound it with ``asyncio.timeout``)."""
        await self._up.wait()

    async def wait_state(self, *, is_open: bool) -> TableStatePayload:
        """Wait until the controller's latest ``cmd/state`` says open (or CLOSED); return it."""

        def said() -> bool:
            return bool(self.states) and self.states[-1].open is is_open

        async with self._states_changed:
            await self._states_changed.wait_for(said)
        return self.states[-1]

    async def close(self) -> None:
        """Say ``offline``, disconnect, and fail the events still waiting (LinkClosedError)."""
        self._closing = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while self._pending:
            _fail(self._pending.popleft().acked, LinkClosedError(f"{self.client_id} closed"))

    async def send(self, event: DeviceInput) -> None:
        """Publish one event at QoS 1; return once the broker acknowledged it."""
        if event.table_id != self.table_id:
            raise ValueError(f"event of table {event.table_id} on the link of {self.table_id}")
        if self._closing:
            raise LinkClosedError(f"{self.client_id} is closed")
        kind, payload = mqtt_event(event)
        acked = asyncio.get_running_loop().create_future()
        self._pending.append(
            _Outgoing(event.event_id, self.topics.table_event(self.table_id, kind), payload, acked)
        )
        self._wake.set()
        # Shielded: a caller that gives up does not withdraw the event, as a device that
        # has sent a message cannot; it is still delivered (and its id applied once).
        await asyncio.shield(acked)

    async def heartbeat(self, table_id: str, device: str) -> None:
        """Publish a heartbeat now if connected; drop it otherwise (never queued)."""
        if table_id != self.table_id:
            raise ValueError(f"heartbeat of table {table_id} on the link of {self.table_id}")
        client = self._client
        if client is None:
            self.heartbeats_dropped += 1
            return
        payload = mqtt_heartbeat(device, self._heartbeat_seqs.next(device))
        topic = self.topics.table_event(self.table_id, "heartbeat")
        try:
            await guarded(client.publish(topic, payload, qos=QOS, timeout=self.timeout_s))
        except aiomqtt.MqttError:
            self.heartbeats_dropped += 1
        else:
            self.heartbeats_sent += 1

    async def publish_raw(self, event_type: str, payload: bytes) -> None:
        """Publish bytes as they are on ``event/<event_type>`` once (to inject bad input).

        Raises LinkClosedError when not connected, aiomqtt.MqttError if the broker does not
        acknowledge it.
        """
        client = self._client
        if client is None:
            raise LinkClosedError(f"{self.client_id} is not connected")
        topic = f"{self.topics.prefix}table/{self.table_id}/event/{event_type}"
        await guarded(client.publish(topic, payload, qos=QOS, timeout=self.timeout_s))

    async def _run(self) -> None:
        baseline = cancellations()
        async for _attempt in self._backoff.attempts():
            raise_if_cancelled(baseline)  # lost in a disconnection's wait (see guarded)
            try:
                client = make_client(
                    self.settings,
                    identifier=self.client_id,
                    will_topic=self.status_topic,
                    manual_ack=False,
                    timeout_s=self.timeout_s,
                )
                async with client:
                    self._backoff.reset()
                    await self._serve(client, baseline)
            except aiomqtt.MqttError as error:
                self.last_error = f"connection failed: {error}"
                log.info("%s: %s", self.client_id, self.last_error)
            except OSError as error:  # the password or TLS files
                self.last_error = f"cannot set up the connection: {error}"
                log.warning("%s: %s", self.client_id, self.last_error)
            finally:
                self._client = None
                self.connected = False
                self._up.clear()

    async def _serve(self, client: aiomqtt.Client, baseline: int) -> None:
        raise_if_cancelled(baseline)  # lost in the wait for CONNACK (see guarded)
        # Renewed at every connection: a broker that crashed may have lost the session.
        await guarded(client.subscribe(self.command_topic, qos=QOS))
        await guarded(client.publish(self.status_topic, ONLINE, qos=QOS, retain=True))
        self._client = client
        self.connected = True
        self.connections += 1
        self._up.set()
        try:
            await _until_first_ends(self._watch(client), self._publish(client))
        except asyncio.CancelledError:
            if self._closing and self.offline_on_close:
                await say_status(client, self.status_topic, OFFLINE)
            raise

    async def _publish(self, client: aiomqtt.Client) -> None:
        """Publish the waiting events in order, each once acknowledged; until the link fails."""
        while True:
            if not self._pending:
                self._wake.clear()
                await self._wake.wait()
                continue
            message = self._pending[0]
            message.attempts += 1
            if message.attempts > 1:
                self.republished += 1
            # aiomqtt waits for the PUBACK; no PUBACK within the timeout raises MqttError and
            # the link reconnects, the message still first in line.
            await guarded(client.publish(message.topic, message.payload, qos=QOS))
            self._pending.popleft()
            self.acknowledged.append(message.event_id)
            if not message.acked.done():
                message.acked.set_result(None)

    async def _watch(self, client: aiomqtt.Client) -> None:
        """Read the controller's commands; raises MqttError when the connection drops.

        aiomqtt does not fail a pending publish when the connection drops (it waits for its
        timeout); the message iterator notices at once, and the publisher is then cancelled.
        """
        async for message in client.messages:
            try:
                state = decode_table_state(message.payload)
            except PayloadError as error:
                log.warning("%s: bad command on %s: %s", self.client_id, message.topic, error)
                continue
            self.states.append(state)
            async with self._states_changed:
                self._states_changed.notify_all()

    def __repr__(self) -> str:
        return f"MqttTableLink({self.table_id!r}, {self.client_id!r} at {self.settings.host})"


def _fail(future: asyncio.Future[Any], error: Exception) -> None:
    if future.done():
        return
    future.set_exception(error)
    # Marked as retrieved: a send() still waiting raises it; if none is, nothing is logged.
    future.exception()


async def _until_first_ends(*coroutines: Coroutine[Any, Any, None]) -> None:
    """Run the coroutines together until one ends; cancel the others; raise what it raised.

    Not a TaskGroup: in Python 3.11 a task group whose child fails while the parent waits in
    its exit leaves the parent's cancellation count raised (fixed in 3.12), which
    :func:`drivers.mqtt.source.raise_if_cancelled` would take for a cancellation.
    """
    tasks = [asyncio.create_task(coroutine) for coroutine in coroutines]
    try:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
    for task in done:
        task.result()


# Serial.


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
        self._heartbeat_seqs = _HeartbeatSeqs()

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
            _fail(future, LinkClosedError(f"serial link of {self.table_id} closed"))
        self._pending.clear()

    async def send(self, event: DeviceInput) -> None:
        """Write the event's frame until the host acknowledges it; NakError if it refuses it."""
        if event.table_id != self.table_id:
            raise ValueError(f"event of table {event.table_id} on the link of {self.table_id}")
        answer = await self.exchange(serial_payload(event))
        if answer is None or not answer.startswith("ACK,"):
            raise NakError(answer or "")
        self.acknowledged.append(event.event_id)

    async def heartbeat(self, table_id: str, device: str) -> None:
        """Write a heartbeat once and wait a moment for its ACK (a late one is just dropped)."""
        if table_id != self.table_id:
            raise ValueError(f"heartbeat of table {table_id} on the link of {self.table_id}")
        seq = self._heartbeat_seqs.next(device)
        answer = await self.exchange(serial_heartbeat(device, seq), resend=False)
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
