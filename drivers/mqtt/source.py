"""The MQTT source: table events and statuses from the broker, acknowledged once journaled.

:class:`MqttSource` subscribes at QoS 1 to ``table/+/event/+`` and ``table/+/status`` under the
site's prefix (:mod:`drivers.mqtt.topics`), decodes each message (:mod:`drivers.mqtt.payloads`)
and hands it to the :class:`~controller.ports.Intake`. The delivery guarantee is the journal's:

* **Acknowledged after commit.** Messages are acknowledged by hand (paho's manual ``PUBACK``):
  only once the receipt ``intake.enqueue`` promised is in (the event is durable, applied or
  refused), or once ``intake.reject`` has recorded bad input, so that a malformed message is
  not redelivered forever.
* **Pipelined, in order.** Each message is handed to the intake as soon as it arrives, without
  waiting for the commits of those before it, so that the sequencer's group commit can take
  them together (one fsync for many events, instead of one each). Every message is put in the
  intake's queue (``enqueue``, which returns a future of the receipt: no task or coroutine per
  message) before the next one is looked at, so a table's events reach the sequencer in the
  order it published them; the ``PUBACK`` of each goes out once it and every message before it
  are handled, so the acknowledgements leave in the order the messages arrived, as MQTT 3.1.1
  requires. How many messages are in flight at once is the broker's to say (mosquitto's
  ``max_inflight_messages``: 20 by default, 1000 as deploy/mosquitto ships it).
* **Failing closed.** If the receipt is :class:`~controller.ports.ControllerUnavailableError`
  the message is *not* acknowledged, and neither is any message after it: the source stops
  reading at once (nothing more is submitted), acknowledges the messages before it once they
  are handled, publishes ``offline`` on its status topic, disconnects, and connects again after
  the backoff. The broker keeps the unacknowledged messages in the persistent session and
  delivers them again, first and in order; they are journaled once the controller is back (and
  ``online`` is published again then). One that had been journaled already is acknowledged
  with its original outcome (below).
* **Persistent session.** The client id is fixed (``<client_id>-in``) and connects with
  ``clean_session=False`` (MQTT 3.1.1), so that the broker queues what tables publish while the
  controller is away or restarting and keeps the subscriptions (they are renewed at each
  connection anyway, in case the broker lost them).
* **Resends are harmless.** A device event's id is ``<table>/<device>/<seq>``; the journal
  applies an id once, so a redelivery or a table's resend is acknowledged with the original
  outcome (``Receipt.duplicate``).
* **Each message judged apart** (:mod:`drivers.mqtt.message_taker`): what it is (an event, a
  status, a property's message, bad input) and what is queued, rejected or answered for it.
* **Table status.** A *change* of a table's ``status`` topic becomes a ``TableStatusChanged``
  event (:mod:`drivers.mqtt.table_status`).
* **Table agents.** An event with a ``boot`` and an ``agent_seq`` comes from a table agent:
  it is de-duplicated on (table, boot, seq) and acknowledged cumulatively on
  ``table/<tid>/cmd/ack`` once journaled (:mod:`drivers.mqtt.agent_answers`). Events without
  them are handled as before.
* **Bad input** (a topic with a bad table id, an unknown table when ``known_tables`` is given,
  malformed JSON, another schema version, an invalid field, anything the decoder raises) goes
  to ``intake.reject`` with a short reason, is counted in :attr:`MqttSource.rejected`,
  acknowledged, and never stops the source.
* **Poison messages.** A message the controller fails on stays unacknowledged like one
  refused while failing closed, and the connection starts again; one that keeps failing is
  parked (:mod:`drivers.mqtt.parking`), so that the tables' messages behind it flow again.
  A source that keeps failing (connections, or a message) reports it to ``/healthz``.

**Controller status.** The connection's last will is ``offline``, retained, on
``controller/<id>/status``; the source publishes ``online`` there (retained) when it connects,
``offline`` when it fails closed or stops.

**Two connections.** The source and :class:`drivers.mqtt.sink.MqttSink` use two client ids,
``<client_id>-in`` and ``<client_id>-out``, each with its own persistent session and its own
last will on the controller's status topic. They are separate drivers, configured and started
independently (a controller may drive MQTT signs with serial tables, or the reverse). Failing
closed makes the source drop its connection to get its unacknowledged messages redelivered,
which must not interrupt the meters; and two connections under one client id would take each
other's session over.

**aiomqtt and manual acknowledgement.** aiomqtt 2.5 has no ``manual_ack`` option, but the
paho-mqtt client under it has: :class:`drivers.mqtt.connection.AckingClient` switches it on
before connecting and sends ``PUBACK`` for one message. Each connection gets a new client, so
a message id is only ever acknowledged on the connection that delivered it.

Reconnection is a plain loop with capped exponential backoff (:class:`controller.backoff.Backoff`),
reset once a connection is up (or, after failing closed, once the controller takes an event
again), until cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

from controller.backoff import Backoff, keep_connected
from controller.clock import utc_now
from controller.ports import ControllerUnavailableError, EventNotRecordedError
from drivers.mqtt.agent_answers import AgentAnswers
from drivers.mqtt.connection import (
    QOS,
    TIMEOUT_S,
    AckingClient,
    broker_failure,
    cancellations,
    check_granted,
    guarded,
    make_client,
    raise_if_cancelled,
    say_status,
)
from drivers.mqtt.message_taker import MessageTaker
from drivers.mqtt.parking import Parking
from drivers.mqtt.payloads import OFFLINE, ONLINE
from drivers.mqtt.pipeline import (
    FailingClosedError,
    Pipeline,
)
from drivers.mqtt.site_answers import SiteAnswers
from drivers.mqtt.topics import Topics
from drivers.poison import SourceHealth
from drivers.tasks import until_first_ends

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Collection

    import aiomqtt

    from controller.ports import Intake, SiteLinks
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)

GATHER_IDLE_TURNS: Final = 2
"""Turns of the event loop without a new message that end the gathering of a burst."""
GATHER_MAX: Final = 256
"""The most messages gathered into one hand-over to the intake."""


class MqttSource:
    """A :class:`controller.ports.Source` reading the tables' topics (see the module docstring)."""

    def __init__(  # noqa: PLR0913 - the keyword settings are each optional
        self,
        settings: BrokerSettings,
        *,
        name: str = "mqtt",
        known_tables: Collection[str] | None = None,
        backoff: Backoff | None = None,
        timeout_s: float = TIMEOUT_S,
        sites: SiteLinks | None = None,
    ) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self.name = name
        self.topics = Topics(settings.site)
        self.client_id = f"{settings.client_id}-in"
        controller_id = settings.controller_id or settings.client_id
        self.status_topic = self.topics.controller_status(controller_id)
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self._intake: Intake | None = None
        self._baseline = 0
        self.connected = False
        """Whether the connection to the broker is up now."""
        self.reconnects = 0
        """How many times the connection came up again after it was lost."""
        self.submitted = 0
        """Events handed to the intake and journaled (duplicates included)."""
        self.duplicates = 0
        """Of those, events the journal had already seen (resends, redeliveries)."""
        self.last_error: str | None = None
        """Why the connection last failed, for the status display."""
        self.health = SourceHealth()
        """Whether the source keeps failing (``/healthz``), and the messages it parked."""
        self._parking = Parking(name, self.health)
        """A message could not be recorded and was not parked yet."""
        self._failing = False
        self.agents = AgentAnswers(self.topics)
        """Table agents' boots: what is journaled of each, and the acknowledgements owed."""
        self.sites = None if sites is None else SiteAnswers(self.topics, sites)
        """At central: its linked properties' messages and acknowledgements (docs/wide-area.md)."""
        self.taker = MessageTaker(
            name=name,
            client_id=self.client_id,
            topics=self.topics,
            known_tables=None if known_tables is None else frozenset(known_tables),
            agents=self.agents,
            sites=self.sites,
            recovered=self._recovered,
        )
        """What each message is, and what to do with it (:mod:`drivers.mqtt.message_taker`)."""

    async def run(self, intake: Intake) -> None:
        """Stay connected and feed the intake until cancelled."""
        self._intake = intake
        self._baseline = baseline = cancellations()
        # A cancellation lost in a disconnection's wait is raised again (see guarded).
        await keep_connected(
            self, self._backoff, before_attempt=lambda: raise_if_cancelled(baseline)
        )

    @property
    def known_tables(self) -> frozenset[str] | None:
        """Tables whose input is accepted; None leaves unknown tables to the ledger."""
        return self.taker.known_tables

    @property
    def rejected(self) -> Counter[str]:
        """Rejected input by reason (``bad-json``, ``bad-version``, ``unknown-table``...)."""
        return self.taker.rejected

    @property
    def heartbeats(self) -> int:
        """Heartbeats read."""
        return self.taker.heartbeats

    @property
    def unacknowledged(self) -> int:
        """Messages left unacknowledged because the controller was failing closed."""
        return self.taker.unacknowledged

    @property
    def agent_gaps(self) -> int:
        """Agent events left for the resend because an earlier one had not arrived."""
        return self.agents.gaps

    @property
    def agent_acks(self) -> int:
        """Cumulative acknowledgements published to table agents."""
        return self.agents.answered

    @property
    def agent_refused(self) -> int:
        """Table events refused for their table agent's signature (docs/ha.md)."""
        return self.agents.refused

    def open_session(self) -> AckingClient:
        """A session with the broker that acknowledges each message once it is journaled."""
        return make_client(
            self.settings,
            identifier=self.client_id,
            will_topic=self.status_topic,
            manual_ack=True,
            timeout_s=self.timeout_s,
        )

    async def use_session(self, session: AckingClient) -> None:
        """Feed the intake from the connection until it fails."""
        if self._intake is None:  # pragma: no cover - run() sets it before connecting
            raise RuntimeError("the MQTT source runs without an intake")
        await self._serve(session, self._intake, self._baseline)

    def session_opened(self) -> None:
        """Connected: healthy again, and the backoff restarts.

        Not healthy while a message still fails; the backoff goes on while the controller is
        failing closed (reconnecting fast would only spin).
        """
        if not self._parking.failing:
            self.health.worked()
        if not self._failing:
            self._backoff.reset()
        log.info("%s: connected to %s:%s", self.name, *self._address())

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:  # noqa: ARG002
        """Broker failures, and the controller failing closed, are retried; others end."""
        if isinstance(error, FailingClosedError):
            self._failing = True
            return "failing closed, reconnecting later"
        return broker_failure(error)

    def _address(self) -> tuple[str, int]:
        return self.settings.host, self.settings.port

    def failed(self, what: str, error: Exception) -> None:
        """Record the failure: the last error, the health, the log."""
        self.last_error = f"{what}: {error}"
        self.health.failed(self.last_error)
        log.warning("%s: %s: %s", self.name, what, error)

    async def _serve(self, client: AckingClient, intake: Intake, baseline: int) -> None:
        filters = [self.topics.table_event_filter, self.topics.table_status_filter]
        answering = [self.agents.serve]
        if self.sites is not None:
            filters.append(self.topics.site_up_filter)
            self.sites.restart()
            answering.append(self.sites.serve)
        # What was not journaled is delivered again: tell its status changes apart again.
        self.taker.restart()
        self.agents.restart()
        pipeline = Pipeline()
        try:
            raise_if_cancelled(baseline)  # lost in the wait for CONNACK (see guarded)
            granted = await guarded(client.subscribe([(f, QOS) for f in filters]))
            check_granted(granted, filters)
            if not self._failing:
                await guarded(client.publish(self.status_topic, ONLINE, qos=QOS, retain=True))
            await until_first_ends(
                self._read(client, intake, pipeline),
                self._acknowledge(client, intake, pipeline),
                *(serve(client) for serve in answering),
            )
        except FailingClosedError:
            await say_status(client, self.status_topic, OFFLINE)
            raise
        except asyncio.CancelledError:
            # Stopping: a clean DISCONNECT does not fire the last will, so say it ourselves.
            await say_status(client, self.status_topic, OFFLINE)
            raise
        finally:
            await pipeline.abandon()

    async def _read(self, client: AckingClient, intake: Intake, pipeline: Pipeline) -> None:
        """Hand each message to the intake as it arrives; stop reading if one is refused."""
        async for first in client.messages:
            if pipeline.stalled:
                break
            # The rest of a burst goes with it. The client reads one packet per turn of the
            # event loop, so the burst is gathered while it keeps coming (a turn or two
            # more at most when it does not: microseconds).
            arrived = [first, *client.received()]
            idle = 0
            while idle < GATHER_IDLE_TURNS and len(arrived) < GATHER_MAX:
                await asyncio.sleep(0)
                more = client.received()
                idle = 0 if more else idle + 1
                arrived += more
            # Queued in the order of arrival, each before the next is looked at, so that
            # the sequencer takes them in that order (and into one commit). One clock
            # reading dates the burst: it arrived within a few microseconds.
            at = utc_now()
            handling = pipeline.handling
            for message in arrived:
                try:
                    item = self.taker.take(client, message, intake, at)
                except Exception as error:  # noqa: BLE001 - no input may stop the source
                    detail = f"{type(error).__name__}: {error}"
                    item = self.taker.reject_later(client, message, intake, "undecodable", detail)
                handling.append(item)
                outcome = item.outcome
                if (
                    outcome is not None
                    and outcome.done()
                    and isinstance(outcome.exception(), ControllerUnavailableError)
                ):
                    # Refused at once (failing closed): what follows is not even tried (it
                    # would be journaled ahead of this one); the broker delivers it again.
                    # (One event the controller failed on is the acknowledger's to park or
                    # not; what follows it is journaled meanwhile, and once only.)
                    pipeline.stalled = True
                    break
            pipeline.more.set()
            if pipeline.stalled:
                break
        # Stalled: nothing more is read or submitted on this connection. The acknowledger
        # acknowledges what came before the refused message and then ends the connection.
        await asyncio.Future()

    async def _acknowledge(self, client: AckingClient, intake: Intake, pipeline: Pipeline) -> None:
        """Acknowledge the messages in the order they arrived, each once it is handled."""
        handling = pipeline.handling
        while True:
            while not handling:
                pipeline.more.clear()
                await pipeline.more.wait()
            message, outcome, then = handling[0]
            if outcome is not None:
                try:
                    receipt = await outcome
                except Exception as error:
                    if not await self._parking.park(intake, message, error):
                        # It and every message after it stay unacknowledged.
                        pipeline.stalled = True
                        raise self._not_recorded(message, error) from error
                    receipt = None
                else:
                    self._parking.handled(message)
                if receipt is not None:
                    self.submitted += 1
                    if receipt.duplicate:
                        self.duplicates += 1
                    if then is not None:
                        then(receipt)
                    if self._failing:
                        await self._recovered(client)
            handling.popleft()
            # Handled: journaled, rejected (and the fault journaled) or a heartbeat.
            client.ack(message)

    def _not_recorded(self, message: aiomqtt.Message, error: Exception) -> FailingClosedError:
        """Why a message stays unacknowledged, counted once."""
        if isinstance(error, FailingClosedError):
            return error  # a rejection not recorded: counted already
        self.taker.unacknowledged += 1
        topic = message.topic.value
        if isinstance(error, ControllerUnavailableError | EventNotRecordedError):
            return FailingClosedError(f"{topic} not acknowledged: {error}")
        # Not in the intake's contract: a bug. Keep the message (unacknowledged) rather than
        # lose it, and say so loudly; the backoff keeps the retries slow.
        log.error("%s: the intake failed on %s", self.name, topic, exc_info=error)
        return FailingClosedError(f"{topic}: intake error {error!r}")

    async def _recovered(self, client: AckingClient) -> None:
        if self._failing:
            self._failing = False
            self._backoff.reset()
            log.info("%s: the controller takes events again", self.name)
            await guarded(client.publish(self.status_topic, ONLINE, qos=QOS, retain=True))

    def __repr__(self) -> str:
        return f"MqttSource({self.name!r}, {self.client_id!r} at {self.settings.host})"
