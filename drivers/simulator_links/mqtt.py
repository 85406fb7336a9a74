"""The MQTT link of a simulated table: one client per table, QoS 1, resend until PUBACK."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import aiomqtt
import msgspec

from controller.backoff import Backoff, keep_connected
from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete
from drivers.mqtt.connection import (
    QOS,
    cancellations,
    guarded,
    make_client,
    raise_if_cancelled,
    say_status,
)
from drivers.mqtt.json_objects import SCHEMA_VERSION, PayloadError
from drivers.mqtt.outgoing import TableStatePayload, decode_table_state
from drivers.mqtt.payloads import (
    OFFLINE,
    ONLINE,
    BetPayload,
    CardPayload,
    DonePayload,
    HeartbeatPayload,
    LockPayload,
    TablePayload,
)
from drivers.mqtt.topics import Topics
from drivers.simulator_links.common import (
    JSON_ENCODER,
    MQTT_TIMEOUT_S,
    HeartbeatSeqs,
    LinkClosedError,
    fail_future,
)
from drivers.tasks import until_first_ends

if TYPE_CHECKING:
    from controller.events import DeviceInput
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)


# Encoders: the inverse of the controller's decoders.


def _payload(kind: type[TablePayload], fields: dict[str, Any]) -> bytes:
    # Converting through the decoder's own Struct checks every field on the way out exactly as
    # the controller will on the way in, so a simulator bug shows here, not as a rejection.
    try:
        struct = msgspec.convert({"v": SCHEMA_VERSION, **fields}, kind)
    except msgspec.ValidationError as error:
        raise ValueError(f"cannot encode {fields!r}: {error}") from error
    return JSON_ENCODER.encode(struct)


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


def mqtt_heartbeat(device: str, seq: int, last: int | None = None) -> bytes:
    """The payload of ``table/<tid>/event/heartbeat``, with the last event's ``seq`` if any."""
    fields: dict[str, object] = {"device": device, "seq": seq}
    if last is not None:
        fields["last"] = last
    return _payload(HeartbeatPayload, fields)


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
        self.name = self.client_id
        self.timeout_s = timeout_s
        self.offline_on_close = offline_on_close
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self.connected = False
        """Whether the connection is up now."""
        self.reconnects = 0
        """Connections made again after the first (keep_connected counts them)."""
        self._baseline = 0
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
        self._heartbeat_seqs = HeartbeatSeqs()

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
            fail_future(self._pending.popleft().acked, LinkClosedError(f"{self.client_id} closed"))

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

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Publish a heartbeat now if connected; drop it otherwise (never queued)."""
        if table_id != self.table_id:
            raise ValueError(f"heartbeat of table {table_id} on the link of {self.table_id}")
        client = self._client
        if client is None:
            self.heartbeats_dropped += 1
            return
        payload = mqtt_heartbeat(device, self._heartbeat_seqs.next(device), last)
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
        """The one reconnect loop (:func:`controller.backoff.keep_connected`), capped backoff."""
        self._baseline = baseline = cancellations()
        # A cancellation lost in a disconnection's wait is raised again (see guarded).
        await keep_connected(
            self, self._backoff, before_attempt=lambda: raise_if_cancelled(baseline)
        )

    # What keep_connected asks of a connection (controller.backoff.Reconnecting).

    def open_session(self) -> aiomqtt.Client:
        """A session with the broker, under the table's fixed client id and last will."""
        return make_client(
            self.settings,
            identifier=self.client_id,
            will_topic=self.status_topic,
            manual_ack=False,
            timeout_s=self.timeout_s,
        )

    def session_opened(self) -> None:
        """Connected: the next failure waits from the initial delay again."""
        self._backoff.reset()

    async def use_session(self, session: aiomqtt.Client) -> None:
        """Serve the connection until it fails; then it is no client of ours."""
        try:
            await self._serve(session, self._baseline)
        finally:
            self._client = None
            self._up.clear()

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:  # noqa: ARG002
        """A broker's failure, or the password or TLS files; anything else is a bug."""
        if isinstance(error, aiomqtt.MqttError):
            return "connection failed"
        if isinstance(error, OSError):
            return "cannot set up the connection"
        return None

    def failed(self, what: str, error: Exception) -> None:
        """Keep the last error and log it (the files' trouble louder: no retry fixes it)."""
        self.last_error = f"{what}: {error}"
        level = logging.INFO if isinstance(error, aiomqtt.MqttError) else logging.WARNING
        log.log(level, "%s: %s", self.client_id, self.last_error)

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
            await until_first_ends(self._watch(client), self._publish(client))
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
