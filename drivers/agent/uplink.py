"""The agent's MQTT connection to the controller: events out until acknowledged, acks in.

The agent is its table's MQTT client (docs/mqtt.md): a fixed client id and a persistent
session, ``online`` retained on ``table/<tid>/status`` with the last will ``offline``, and it
reads ``table/<tid>/cmd/ack``; with ``[broker] hosts`` it tries the brokers in turn, the next
after each failure (docs/ha.md, "Brokers and followers"). On each connection it publishes, at
QoS 1 and oldest first, everything its outbox holds past the last acknowledgement, then each
new message as the serial lines store it; without progress it sends everything
unacknowledged again after the resend delay (:mod:`controller.agent.resend`). It publishes a
heartbeat every ``heartbeat_s``, which the controller answers with what it has journaled.

Each acknowledgement is judged (:func:`controller.agent.acks.judge_ack`): one for another
table, another boot, a ``seq`` never stored or an older epoch is refused, logged and kept as a
fault, and trims nothing. A valid one is proof the controller hears the table (the table's
gate, :mod:`controller.agent.gate`), and trims the outbox through its ``seq``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Final

from controller.agent.acks import AckAccepted, OutboxPosition, judge_ack
from controller.backoff import Backoff, keep_connected
from controller.ports import OutboxError
from drivers.agent.state import Changes
from drivers.agent.wire import forwarded, heartbeat
from drivers.mqtt.agent_wire import ACK_COMMAND, decode_ack
from drivers.mqtt.connection import (
    QOS,
    broker_failure,
    check_granted,
    guarded,
    make_client,
    say_status,
)
from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.payloads import OFFLINE, ONLINE
from drivers.mqtt.pipeline import message_payload
from drivers.mqtt.topics import Topics
from drivers.serial.protocol import ProtocolError
from drivers.tasks import until_first_ends

if TYPE_CHECKING:
    import aiomqtt

    from controller.agent.acks import Ack
    from controller.agent.gate import TableGate
    from controller.agent.resend import ResendDelay
    from controller.agent.store import AgentOutbox
    from controller.agent_signature import AgentSigner
    from drivers.agent.state import FaultLog
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)

BATCH: Final = 256
"""Outbox rows read at once."""


class AgentUplink:
    """The MQTT side of the agent (see the module docstring)."""

    def __init__(  # noqa: PLR0913 - the agent's parts, each from its own section
        self,
        broker: BrokerSettings,
        table_id: str,
        *,
        outbox: AgentOutbox,
        faults: FaultLog,
        gate: TableGate,
        resend: ResendDelay,
        heartbeat_s: float,
        signer: AgentSigner | None = None,
    ) -> None:
        self.name = "mqtt"
        self.signer = signer
        """Signs each event forwarded (``[agent] key_file``); None: forwarded unsigned."""
        self._broker = broker
        self.table_id = table_id
        self._outbox = outbox
        self._faults = faults
        self._gate = gate
        self._resend = resend
        self._heartbeat_s = heartbeat_s
        self.topics = Topics(broker.site)
        self.status_topic = self.topics.table_status(table_id)
        self.ack_topic = self.topics.table_command(table_id, ACK_COMMAND)
        self._backoff = Backoff(broker.backoff_initial_s, broker.backoff_cap_s)
        self.addresses = broker.addresses()
        """The brokers tried in turn (``[broker] hosts``, docs/ha.md "Brokers and followers")."""
        self._index = 0
        self._stored = asyncio.Event()
        self._heard = asyncio.Event()
        self.connected = False
        self.reconnects = 0
        self.published = 0
        """Event messages published (resends included)."""
        self.resends = 0
        """Times everything unacknowledged was sent again."""
        self.refused_acks = 0
        self.acks = 0
        """Acknowledgements taken."""
        self.changes = Changes()
        """Told at each acknowledgement (taken or refused) and each publish."""
        self._beats = 0

    def stored(self) -> None:
        """A serial line stored a new message: send it."""
        self._stored.set()

    def heard(self) -> asyncio.Event:
        """Set at each valid acknowledgement (the gate watcher waits on it)."""
        return self._heard

    async def run(self) -> None:
        """Stay connected until cancelled."""
        await keep_connected(self, self._backoff)

    def open_session(self) -> aiomqtt.Client:
        """A session as the table: persistent, last will ``offline`` on its status."""
        return make_client(
            self._broker.at(self.addresses[self._index]),
            identifier=self._broker.client_id,
            will_topic=self.status_topic,
            manual_ack=False,
        )

    async def use_session(self, client: aiomqtt.Client) -> None:
        """Send, resend, beat and take acknowledgements until the connection fails."""
        try:
            granted = await guarded(client.subscribe([(self.ack_topic, QOS)]))
            check_granted(granted, [self.ack_topic])
            await guarded(client.publish(self.status_topic, ONLINE, qos=QOS, retain=True))
            await until_first_ends(self._send(client), self._receive(client), self._beat(client))
        except asyncio.CancelledError:
            await say_status(client, self.status_topic, OFFLINE)
            raise

    def session_opened(self) -> None:
        """Connected."""
        self._backoff.reset()
        log.info("agent %s: connected to %s:%s", self.table_id, *self.addresses[self._index])

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:  # noqa: ARG002
        """Broker failures and an outbox that cannot be read are retried; others end."""
        if isinstance(error, OutboxError):
            return "outbox unreadable"
        return broker_failure(error)

    def failed(self, what: str, error: Exception) -> None:
        """Log the failure, keep it as a fault, and move on to the next broker of the list."""
        host, port = self.addresses[self._index]
        self._index = (self._index + 1) % len(self.addresses)
        log.warning("agent %s: %s:%s: %s: %s", self.table_id, host, port, what, error)
        self._faults.keep("uplink-failed", f"{host}:{port}: {what}: {error}")

    async def _send(self, client: aiomqtt.Client) -> None:
        """Publish what is unacknowledged, then what is stored; resend after the delay.

        The delay runs from the last progress (an acknowledgement that trimmed the outbox, a
        resend, or the first message after none was waiting), whatever else is stored
        meanwhile: a table that keeps playing does not put the resend off.
        """
        outbox = self._outbox
        loop = asyncio.get_running_loop()
        sent = outbox.acked  # everything past the acknowledgement goes again
        self._resend.progressed()
        acked, since, waiting = outbox.acked, loop.time(), False
        while True:
            self._stored.clear()
            sent = await self._publish_after(client, sent)
            now = loop.time()
            unacknowledged = outbox.stored_high > outbox.acked
            if outbox.acked != acked or (unacknowledged and not waiting):
                acked, since = outbox.acked, now
            waiting = unacknowledged
            due = since + self._resend.current_s
            if unacknowledged and now >= due:
                self._resend.resent()
                self.resends += 1
                log.info("agent %s: resending from seq %s", self.table_id, outbox.acked + 1)
                sent, since = outbox.acked, now
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(due - now if unacknowledged else None):
                    await self._stored.wait()

    async def _publish_after(self, client: aiomqtt.Client, sent: int) -> int:
        """Publish every stored message after ``sent``; the last one published."""
        while True:
            rows = self._outbox.pending(sent, BATCH)
            if not rows:
                return sent
            boot = self._outbox.boot
            for row in rows:
                acked = self._outbox.acked
                try:
                    kind, payload = forwarded(
                        row.payload,
                        self.table_id,
                        boot,
                        row.seq,
                        acked,
                        signer=self.signer,
                        stored=row.stored,
                    )
                except ProtocolError as error:  # only a changed outbox file gets here
                    self._faults.keep("unreadable-row", f"seq {row.seq}: {error.reason}")
                    raise OutboxError(f"outbox row {row.seq} unreadable") from error
                topic = self.topics.table_event(self.table_id, kind)
                await guarded(client.publish(topic, payload, qos=QOS))
                self.published += 1
                self.changes.tell()
                sent = row.seq
            if len(rows) < BATCH:
                return sent

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            if message.topic.value != self.ack_topic:
                continue
            self.take_ack(message_payload(message))

    def take_ack(self, data: bytes) -> None:
        """Judge one acknowledgement; trim the outbox and tell the gate if it is good."""
        try:
            ack = decode_ack(data)
        except PayloadError as error:
            self._refused(error.reason, error.detail)
            return
        try:
            self._judge(ack)
        finally:
            self.changes.tell()

    def _judge(self, ack: Ack) -> None:
        outbox = self._outbox
        position = OutboxPosition(
            self.table_id, outbox.boot, outbox.stored_high, outbox.acked, outbox.epoch
        )
        verdict = judge_ack(ack, position)
        if not isinstance(verdict, AckAccepted):
            self._refused(verdict.reason, verdict.detail)
            return
        if verdict.through > outbox.acked or verdict.epoch > outbox.epoch:
            before = outbox.acked
            outbox.trim(verdict.through, verdict.epoch)
            if outbox.acked > before:
                self._resend.progressed()
        self.acks += 1
        self._gate.heard(asyncio.get_running_loop().time())
        self._heard.set()

    def _refused(self, reason: str, detail: str) -> None:
        self.refused_acks += 1
        self.changes.tell()
        log.warning("agent %s: refused an acknowledgement (%s): %s", self.table_id, reason, detail)
        self._faults.keep(f"ack-{reason}", detail)

    async def _beat(self, client: aiomqtt.Client) -> None:
        topic = self.topics.table_event(self.table_id, "heartbeat")
        while True:
            self._beats += 1
            outbox = self._outbox
            payload = heartbeat(self._beats, outbox.boot, outbox.stored_high, outbox.acked)
            await guarded(client.publish(topic, payload, qos=QOS))
            await asyncio.sleep(self._heartbeat_s)
