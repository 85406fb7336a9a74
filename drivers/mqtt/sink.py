"""The MQTT sink: meters, hits, table commands and the controller's status, to the broker.

:class:`MqttSink` receives the committed :mod:`controller.outputs` updates and publishes them,
all at QoS 1 (payloads in :mod:`drivers.mqtt.payloads`):

=====================  =================================  ========  ===========================
update                 topic                              retained  while the broker is away
=====================  =================================  ========  ===========================
``MeterUpdate``        ``meter/<pool>``                   yes       latest value per pool
``PoolUpdate``         ``meter/<pool>/status``            yes       latest value per pool
``HitAnnouncement``    ``meter/<pool>/hit``               no        outbox (journal database)
                       (``meter/_/hit`` with no pool)
``TableUpdate``        ``table/<tid>/cmd/state``          no        outbox (journal database)
``WagerRefusal``       ``table/<tid>/cmd/refused``        no        outbox (journal database)
``ControllerUpdate``   ``controller/<id>/status``         yes       latest value
``CheckpointUpdate``   ``controller/<id>/checkpoint``     yes       latest value
``HeadUpdate``         ``controller/<id>/head``           yes       latest value
=====================  =================================  ========  ===========================

**Signed meters.** The service hands the sink the controller key's signer
(:meth:`MqttSink.sign_meters`, :class:`controller.meter_signature.MeterSigning`): every meter,
pool status and hit is then published signed, schema version 2 (:mod:`drivers.mqtt.outgoing`;
a hit names this controller's id), so that a sign station believes only the controller's
(docs/mqtt.md, "Signed meters"). They are signed off the intake (:mod:`drivers.mqtt.signing`):
a signer process slow to answer holds up only what waits for its signature, never the event
loop nor the other updates. A hit is signed before it is written to the outbox: published
again after a crash, it carries the same signature.

**Nothing is lost while the broker is away.** The updates are consumed by one task that never
waits for the broker, and published by another, per connection:

* Hits and table commands are events, each of which must arrive: they go to the
  :class:`~controller.ports.Outbox` (kept by the journal, beside it) before they are
  published, and are deleted from it once the broker acknowledged them (``PUBACK``). After a
  reconnection, and after a restart of the controller, what is left is published first, oldest
  first. A hit the journal committed but the controller died before storing here is found
  in the journal's payouts at the next start and announced then (see
  :mod:`drivers.mqtt.outbox`).
* Meters, whether a pool is open, the controller's status and its last checkpoint are states:
  only the latest value matters, so the sink keeps the latest per topic in memory (a slow
  broker sees the updates coalesced, the latest value winning) and republishes every one of
  them, retained, after each reconnection. After a restart, the broadcast hands a new sink the
  latest states, and the sequencer's start the states the journal stands at.

The order within a connection is: outbox first, then the retained values; a hit is therefore
published before the meter reset that follows it.

**Connection.** Client id ``<client_id>-out``, persistent session (``clean_session=False``),
last will ``offline`` (retained) on ``controller/<id>/status``, like the source's (see
:mod:`drivers.mqtt.source` for why there are two connections). It logs in as ``[broker]
out_username`` when one is set (:meth:`~drivers.mqtt.settings.BrokerSettings.outbound`): a
broker that names each session after its user needs a user per connection. The sink publishes
``online`` there on each connection unless the last ``ControllerUpdate`` said the controller
is failing closed, and ``offline`` when it stops. It reconnects with capped exponential
backoff until cancelled. If the updates stop (the iterator ends), it gives the broker
``drain_timeout_s`` to take what is pending, then returns; the outbox keeps the rest for the
next start.

A hit published just before a crash may be published again after the restart: displays
recognise it by its payout id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import TYPE_CHECKING, Final

from controller.backoff import Backoff, keep_connected
from controller.clock import utc_now
from controller.outputs import (
    CheckpointUpdate,
    ControllerUpdate,
    HeadUpdate,
    HitAnnouncement,
    MeterUpdate,
    PoolUpdate,
    TableUpdate,
    WagerRefusal,
    hit_announcement,
)
from controller.ports import OutboxError, OutboxMessage
from drivers.mqtt.connection import (
    QOS,
    TIMEOUT_S,
    broker_failure,
    cancellations,
    guarded,
    make_client,
    raise_if_cancelled,
    say_status,
)
from drivers.mqtt.outgoing import (
    checkpoint_payload,
    controller_status_payload,
    head_payload,
    hit_payload,
    meter_payload,
    pool_status_payload,
    table_state_payload,
    wager_refused_payload,
)
from drivers.mqtt.payloads import OFFLINE, ONLINE
from drivers.mqtt.signing import Signing
from drivers.mqtt.topics import TopicError, Topics
from drivers.tasks import until_first_ends

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    import aiomqtt

    from controller.meter_signature import Signer
    from controller.outputs import AnyUpdate
    from controller.ports import Outbox
    from drivers.mqtt.outgoing import SignedUpdate
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)

STATE_COMMAND: Final = "state"
"""``table/<tid>/cmd/state``: the table's progressive is open or closed."""
REFUSED_COMMAND: Final = "refused"
"""``table/<tid>/cmd/refused``: a chip did not become a wager at lock (it is returned)."""


class MqttSink:
    """A :class:`controller.ports.Sink` publishing to the broker (see the module docstring)."""

    drain_timeout_s: float = 5.0
    """When the updates end, how long the broker may take the rest before the sink returns."""

    def __init__(
        self,
        settings: BrokerSettings,
        outbox: Callable[[str], Outbox],
        *,
        name: str = "mqtt-display",
        backoff: Backoff | None = None,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self.open_outbox = outbox
        """Opens this sink's outbox by the sink's name (the journal keeps it)."""
        self.name = name
        self.topics = Topics(settings.site)
        self.client_id = f"{settings.client_id}-out"
        self.controller_id = controller_id = settings.controller_id or settings.client_id
        self.status_topic = self.topics.controller_status(controller_id)
        self.checkpoint_topic = self.topics.controller_checkpoint(controller_id)
        self.head_topic = self.topics.controller_head(controller_id)
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self._baseline = 0
        self.connected = False
        """Whether the connection to the broker is up now."""
        self.reconnects = 0
        """How many times the connection came up again after it was lost."""
        self.published = 0
        """Messages the broker acknowledged."""
        self.coalesced = 0
        """Retained updates replaced by a newer one before they could be published."""
        self.skipped = 0
        """Updates that name no valid topic (a pool id that cannot be a topic level)."""
        self.outbox_errors = 0
        """Outbox writes that failed (the message was then kept in memory only)."""
        self.last_error: str | None = None
        """Why the connection last failed, for the status display."""
        # The latest retained payload per topic, and the topics not yet published on this
        # connection (a dict as an ordered set).
        self._retained: dict[str, bytes] = {self.status_topic: ONLINE}
        self._dirty: dict[str, None] = {}
        # Non-retained messages not yet acknowledged by the broker, oldest first: the outbox's
        # rows, mirrored in memory so that the publisher never reads the database.
        self._queue: deque[OutboxMessage] = deque()
        self._outbox: Outbox | None = None
        # Payout ids announced by the catch-up at start-up: not announced again if the
        # broadcast brings them too.
        self._caught_up: set[str] = set()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self.signer: Signer | None = None
        """The controller key's signer of the meters, pool statuses and hits (none: unsigned)."""
        self.signing: Signing | None = None
        """What waits for its signature while the sink runs with a signer."""

    def sign_meters(self, signer: Signer) -> None:
        """Sign the meters, pool statuses and hits from now on (:class:`MeterSigning`)."""
        self.signer = signer

    @property
    def pending(self) -> int:
        """Hits and table commands waiting for the broker (stored in the outbox)."""
        return len(self._queue)

    async def run(self, updates: AsyncIterator[AnyUpdate]) -> None:
        """Publish the updates until cancelled (or until they end and are flushed)."""
        outbox = self.open_outbox(self.client_id)
        self._outbox = outbox
        try:
            # The outbox is the truth: what a previous run left, oldest first.
            self._queue = deque(outbox.pending())
            if self._queue:
                log.info("%s: %d messages left in the outbox", self.name, len(self._queue))
            if self.signer is not None:
                self.signing = Signing(self.name, self.controller_id, self.signed)
            self._catch_up(outbox)
            async with asyncio.TaskGroup() as tasks:
                connection = tasks.create_task(self._connect_loop())
                if self.signing is not None and self.signer is not None:
                    # Cancelled below, with the connection, once the rest is flushed.
                    signing = tasks.create_task(self.signing.run(self.signer))
                async for update in updates:
                    self._take(update)
                # The updates ended (shutdown): give the broker a moment to take what is left.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.drain_timeout_s):
                        await self._idle.wait()
                connection.cancel()
                if self.signing is not None:
                    signing.cancel()
        finally:
            self._outbox = None
            outbox.close()

    def _catch_up(self, outbox: Outbox) -> None:
        """Announce the hits a crash kept from the outbox (see drivers.mqtt.outbox)."""
        try:
            missed = outbox.missed_payouts(outbox.hits_stored_through())
        except OutboxError:
            self.outbox_errors += 1
            log.exception("%s: cannot look for hits left unannounced", self.name)
            return
        for seq, at, payout in missed:
            announcement = hit_announcement(payout, at, seq)
            if announcement is None:
                continue
            log.warning("%s: announcing hit %s, journaled but never announced", self.name, seq)
            self._take(announcement)
            self._caught_up.add(announcement.payout_id)

    def _take(self, update: AnyUpdate) -> None:
        """Take one update in without waiting for the broker, nor for the signer."""
        if isinstance(update, HitAnnouncement) and update.payout_id in self._caught_up:
            self._caught_up.discard(update.payout_id)  # committed while catching up
            return
        if self.signing is not None and isinstance(
            update, MeterUpdate | PoolUpdate | HitAnnouncement
        ):
            self._idle.clear()
            self.signing.put(update)  # given back signed, to :meth:`signed`
            return
        self._accept(update)

    def signed(self, update: SignedUpdate, payload: bytes) -> None:
        """``update`` signed (by :attr:`signing`): publish its ``payload``."""
        self._accept(update, payload)

    def _accept(self, update: AnyUpdate, signed: bytes | None = None) -> None:
        """Publish ``update`` (its ``signed`` payload if it was signed) when the broker can."""
        try:
            match update:
                case MeterUpdate():
                    payload = signed or meter_payload(update, self.signer)
                    self._retain(self.topics.meter(update.pool_id), payload)
                case PoolUpdate():
                    topic = self.topics.pool_status(update.pool_id)
                    self._retain(topic, signed or pool_status_payload(update, self.signer))
                case ControllerUpdate():
                    self._retain(self.status_topic, controller_status_payload(update))
                case CheckpointUpdate():
                    self._retain(self.checkpoint_topic, checkpoint_payload(update))
                case HeadUpdate():
                    self._retain(self.head_topic, head_payload(update))
                case HitAnnouncement():
                    topic = self.topics.hit(update.pool_id)
                    payload = signed or hit_payload(update, self.signer, self.controller_id)
                    self._enqueue(topic, payload, hit_seq=update.seq)
                case TableUpdate():
                    topic = self.topics.table_command(update.table_id, STATE_COMMAND)
                    self._enqueue(topic, table_state_payload(update))
                case WagerRefusal():
                    topic = self.topics.table_command(update.table_id, REFUSED_COMMAND)
                    self._enqueue(topic, wager_refused_payload(update))
        except TopicError as error:
            # A configuration the controller accepted but MQTT cannot name: say so, go on.
            self.skipped += 1
            log.error("%s: cannot publish %r: %s", self.name, update, error)  # noqa: TRY400
            return
        self._idle.clear()
        self._wake.set()

    def _retain(self, topic: str, payload: bytes) -> None:
        if topic in self._dirty:
            self.coalesced += 1
        self._retained[topic] = payload
        self._dirty[topic] = None

    def _enqueue(self, topic: str, payload: bytes, hit_seq: int | None = None) -> None:
        row_id: int | None = None
        if self._outbox is not None:
            created = utc_now()
            try:
                if hit_seq is None:
                    row_id = self._outbox.add(
                        topic, payload, qos=QOS, retain=False, created=created
                    )
                else:
                    row_id = self._outbox.add_hit(
                        topic, payload, qos=QOS, created=created, seq=hit_seq
                    )
            except OutboxError:
                # Still publish it (from memory) rather than drop it; it is only not durable.
                self.outbox_errors += 1
                log.exception("%s: cannot store a message for %s", self.name, topic)
        self._queue.append(OutboxMessage(row_id, topic, payload, QOS, retain=False))

    async def _connect_loop(self) -> None:
        self._baseline = baseline = cancellations()
        # A cancellation lost in a disconnection's wait is raised again (see guarded).
        await keep_connected(
            self, self._backoff, before_attempt=lambda: raise_if_cancelled(baseline)
        )

    def open_session(self) -> aiomqtt.Client:
        """A session with the broker, logged in as the outbound user."""
        return make_client(
            self.settings.outbound(),
            identifier=self.client_id,
            will_topic=self.status_topic,
            manual_ack=False,
            timeout_s=self.timeout_s,
        )

    async def use_session(self, session: aiomqtt.Client) -> None:
        """Publish on the connection until it fails."""
        await self._serve(session, self._baseline)

    def session_opened(self) -> None:
        """Connected."""
        self._backoff.reset()
        log.info("%s: connected to %s:%s", self.name, *self._address())

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:  # noqa: ARG002
        """Broker and network failures are retried; others end the loop."""
        return broker_failure(error)

    def _address(self) -> tuple[str, int]:
        return self.settings.addresses()[0]

    def failed(self, what: str, error: Exception) -> None:
        """Record the failure."""
        self.last_error = f"{what}: {error}"
        log.warning("%s: %s: %s", self.name, what, error)

    async def _serve(self, client: aiomqtt.Client, baseline: int) -> None:
        # A new connection: the broker may have lost the retained values (no persistence) or
        # shown our last will since, so every one of them is published again.
        for topic in self._retained:
            self._dirty[topic] = None
        try:
            raise_if_cancelled(baseline)  # lost in the wait for CONNACK (see guarded)
            await until_first_ends(_watch(client), self._publish(client))
        except asyncio.CancelledError:
            # Stopping: a clean DISCONNECT does not fire the last will, so say it ourselves.
            await say_status(client, self.status_topic, OFFLINE)
            raise

    async def _publish(self, client: aiomqtt.Client) -> None:
        """Publish what is pending, then wait for more; forever (until the connection fails)."""
        while True:
            if self._queue:
                message = self._queue[0]
                await guarded(
                    client.publish(
                        message.topic, message.payload, qos=message.qos, retain=message.retain
                    )
                )
                # Acknowledged by the broker: only now may it leave the outbox.
                self._queue.popleft()
                self.published += 1
                self._forget(message)
            elif self._dirty:
                topic = next(iter(self._dirty))
                # Taken off before publishing: a newer value arriving meanwhile marks it again.
                # If publishing fails, the next connection republishes every retained topic.
                del self._dirty[topic]
                await guarded(client.publish(topic, self._retained[topic], qos=QOS, retain=True))
                self.published += 1
            else:
                if not (self.signing and self.signing.pending):  # more to come once signed
                    self._idle.set()
                self._wake.clear()
                await self._wake.wait()

    def _forget(self, message: OutboxMessage) -> None:
        if message.row_id is None or self._outbox is None:
            return
        try:
            self._outbox.remove(message.row_id)
        except OutboxError:
            # Published already; the row is published once more at the next start. Harmless.
            self.outbox_errors += 1
            log.exception("%s: cannot delete a published message", self.name)

    def __repr__(self) -> str:
        return f"MqttSink({self.name!r}, {self.client_id!r} at {self._address()[0]})"


async def _watch(client: aiomqtt.Client) -> None:
    """Raise MqttError when the connection drops (the sink subscribes to nothing).

    aiomqtt does not fail a pending publish when the connection drops (it waits for its
    timeout); this notices at once, and the publisher is then cancelled.
    """
    async for _message in client.messages:
        pass
