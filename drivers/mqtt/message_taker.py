"""What the MQTT source makes of one message: an event queued, a rejection begun, or nothing.

:class:`MessageTaker` is the source's judgement of each message it reads
(:class:`drivers.mqtt.source.MqttSource` keeps the connection, the order and the
acknowledgements). A message's topic says what it is (:mod:`drivers.mqtt.topics`):

* **a table's event** is decoded (:mod:`drivers.mqtt.payloads`) and queued in the intake with
  its provenance (the client and topic: docs/journal.md, "Provenance"); a heartbeat is told to
  the intake and journaled by nobody; a table agent's event (a ``boot`` and an ``agent_seq``)
  is admitted once per (table, boot, seq) and answered once journaled
  (:mod:`drivers.mqtt.agent_answers`);
* **a table's status** becomes a ``TableStatusChanged`` event only when it changes
  (:mod:`drivers.mqtt.table_status`); an empty retained one is an operator clearing a retired
  table's status;
* **a linked property's message** (central only) goes to :mod:`drivers.mqtt.site_answers`;
* **bad input** (a topic with a bad table id, an unknown table when ``known_tables`` is given,
  malformed JSON, another schema version, an invalid field) is rejected: the rejection is
  journaled by the intake in a task of its own (it is rare), counted in :attr:`rejected` by
  reason, and the message acknowledged after it. A rejection the controller could not record
  leaves the message unacknowledged (:attr:`unacknowledged`), to be rejected again later.

A handled message is a :class:`~drivers.mqtt.pipeline.Handling`: what the source acknowledges it
after.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import TYPE_CHECKING

from controller.agent.acks import Admission
from controller.ports import ControllerUnavailableError
from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.payloads import Heartbeat, decode_status, decode_table_message
from drivers.mqtt.pipeline import FailingClosedError, Handling, enqueue, message_payload
from drivers.mqtt.site_answers import SiteRefusal
from drivers.mqtt.table_status import StatusChanges
from drivers.mqtt.topics import SiteUpTopic, TableStatusTopic, TopicError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import aiomqtt

    from controller.ports import Intake
    from drivers.mqtt.agent_answers import AgentAnswers
    from drivers.mqtt.connection import AckingClient
    from drivers.mqtt.site_answers import SiteAnswers
    from drivers.mqtt.topics import Topics

log = logging.getLogger(__name__)


class MessageTaker:
    """One source's judgement of the messages it reads (see the module docstring)."""

    def __init__(  # noqa: PLR0913 - the source's names, topics, tables and answerers
        self,
        *,
        name: str,
        client_id: str,
        topics: Topics,
        known_tables: frozenset[str] | None,
        agents: AgentAnswers,
        sites: SiteAnswers | None,
        recovered: Callable[[AckingClient], Awaitable[None]],
    ) -> None:
        self.name = name
        self.client_id = client_id
        self.topics = topics
        self.known_tables = known_tables
        """Tables whose input is accepted; None leaves unknown tables to the ledger."""
        self.agents = agents
        self.sites = sites
        self._recovered = recovered
        """The source's: a rejection journaled says that the controller takes input again."""
        self.rejected: Counter[str] = Counter()
        """Rejected input by reason (``bad-json``, ``bad-version``, ``unknown-table``...)."""
        self.heartbeats = 0
        self.unacknowledged = 0
        """Messages left unacknowledged because the controller was failing closed."""
        self._statuses = StatusChanges(name)
        self._unknown_status_tables: set[str] = set()

    def restart(self) -> None:
        """A new connection: what was not journaled is delivered again, status changes too."""
        self._statuses.restart()

    def take(
        self, client: AckingClient, message: aiomqtt.Message, intake: Intake, at: str
    ) -> Handling:
        """Start handling one message: queue its event, start its rejection, or neither."""
        topic = message.topic.value
        try:
            target = self.topics.parse(topic)
        except TopicError as error:
            return self.reject_later(client, message, intake, error.reason, error.detail)
        if target is None:
            return self.reject_later(client, message, intake, "unknown-topic", "not a table")
        if isinstance(target, SiteUpTopic):
            return self._site(client, message, intake, target.site, at)
        known = self.known_tables
        if known is not None and target.table_id not in known:
            if isinstance(target, TableStatusTopic):
                # A retained status of a retired table comes back at every subscription:
                # report it once per run, not once per reconnection.
                if target.table_id in self._unknown_status_tables:
                    return Handling(message, None)
                self._unknown_status_tables.add(target.table_id)
            detail = f"table {target.table_id!r} is not configured"
            return self.reject_later(client, message, intake, "unknown-table", detail)
        if isinstance(target, TableStatusTopic):
            return self._status(client, message, intake, target.table_id, at)
        table_id, payload = target.table_id, message_payload(message)
        try:
            decoded, stamp = decode_table_message(table_id, target.event_type, payload, at=at)
        except PayloadError as error:
            return self.reject_later(client, message, intake, error.reason, error.detail)
        if isinstance(decoded, Heartbeat):
            intake.heartbeat(decoded.table_id, decoded.device, decoded.last)
            self.heartbeats += 1
            if stamp is not None:
                self.agents.beat(table_id, stamp)  # an agent's: answered with what is journaled
            return Handling(message, None)
        if stamp is None:
            queued = enqueue(intake, decoded, self._provenance(topic))
            return Handling(message, queued, self.agents.refusal_counted)
        if self.agents.admit(table_id, stamp) is not Admission.SUBMIT:
            return Handling(message, None)  # journaled already (answered again), or after a gap
        origin = f"agent table={table_id} boot={stamp.boot} {self._provenance(topic)}"
        return Handling(
            message, enqueue(intake, decoded, origin), self.agents.journaled(table_id, stamp)
        )

    def _site(
        self, client: AckingClient, message: aiomqtt.Message, intake: Intake, site: str, at: str
    ) -> Handling:
        """A linked property's message or totals (central only; drivers.mqtt.site_answers)."""
        if self.sites is None:
            return self.reject_later(client, message, intake, "unknown-topic", "not central")
        taken = self.sites.take(site, message_payload(message), at)
        if taken is None:
            return Handling(message, None)  # applied already (answered again), in flight, a gap
        if isinstance(taken, SiteRefusal):
            return self.reject_later(client, message, intake, taken.reason, taken.detail)
        origin = self._provenance(message.topic.value)
        return Handling(message, enqueue(intake, taken, origin), self.sites.journaled(site))

    def _status(
        self,
        client: AckingClient,
        message: aiomqtt.Message,
        intake: Intake,
        table_id: str,
        at: str,
    ) -> Handling:
        payload = message.payload
        if not payload:
            # An empty retained message is how an operator clears a retired table's status.
            log.info("%s: %s cleared", self.name, message.topic.value)
            return Handling(message, None)
        try:
            online = decode_status(payload)
        except PayloadError as error:
            return self.reject_later(client, message, intake, error.reason, error.detail)
        change = self._statuses.change(table_id, online=online, at=at)
        if change is None:
            return Handling(message, None)  # the retained copy again, or a redelivery
        event, journaled = change
        return Handling(
            message, enqueue(intake, event, self._provenance(message.topic.value)), journaled
        )

    def _provenance(self, topic: str) -> str:
        """Where a message's event came from (docs/journal.md, "Provenance")."""
        return f"mqtt client={self.client_id} topic={topic}"

    def reject_later(
        self,
        client: AckingClient,
        message: aiomqtt.Message,
        intake: Intake,
        reason: str,
        detail: str,
    ) -> Handling:
        """Bad input: its rejection is journaled in a task of its own (it is rare)."""
        topic = message.topic.value
        return Handling(
            message, asyncio.create_task(self._reject(client, intake, topic, reason, detail))
        )

    async def _reject(
        self, client: AckingClient, intake: Intake, topic: str, reason: str, detail: str
    ) -> None:
        log.info("%s: rejected %s (%s): %s", self.name, topic, reason, detail)
        try:
            await intake.reject(f"{self.name}:{topic}", reason, detail)
        except ControllerUnavailableError as error:
            # Not recorded: leave it unacknowledged, so that it is rejected (and counted) later.
            self.unacknowledged += 1
            raise FailingClosedError(f"rejection of {topic} not recorded: {error}") from error
        self.rejected[reason] += 1
        await self._recovered(client)  # the fault was journaled: the journal is back
