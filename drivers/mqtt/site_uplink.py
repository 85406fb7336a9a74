"""A property's link to central: its chain out until acknowledged, acks and awards in.

docs/wide-area.md, "The link's runtime". The property's controller is an MQTT
client of central's brokers (TLS; ``hosts`` tried in turn, the next after each failure). On
each connection it says hello (:class:`SiteHello`, a new random nonce), takes its totals as its
journal stands (through ``site_seq`` M), publishes on ``wide/<site>/up``, at QoS 1 and oldest
first, every message after the last acknowledged one up to M, then the totals, then each new
message as the sequencer journals it; without progress
it publishes everything unacknowledged again after the resend delay
(:mod:`controller.agent.resend`). Central judges the totals right after message M, in order.
Once central has been silent past the grace period (the gate closed), the totals are reported
again, so that reopening always follows a reconciliation of what came meanwhile; and every
``report_s`` while the link stays up, so that central reconciles and hears an idle property.
After each hello, and after each head the controller signs, it sends its latest signed head
(:class:`~controller.widearea.messages.SiteHead`), which central keeps as the property's
high-water mark and answers to its next start (docs/security.md, "History never goes back").

It reads ``wide/<site>/ack``, ``wide/<site>/award`` and central's ``meter/<pool>`` of each
wide-area pool the property plays:

* an acknowledgement is central's only if central's key signed it; it is taken only if it
  names this connection's nonce and a counter beyond the last taken (:class:`AckFreshness`:
  one published again keeps nothing open and reopens nothing; one naming another nonce or
  none, or a third of the grace silent, and the property says hello again, a new nonce, at
  most every ``HELLO_AGAIN_S``: central restarted, or heard an old hello); then judged
  (:func:`controller.widearea.property_link.judge_central_ack`): its site, nothing beyond the
  chain, no older epoch, central's head equal to the property's own digest of the message.
  An accepted one trims nothing here (the journal is the outbox; the next connection resends
  after it) and is proof central hears the property (:class:`WideAreaGate`);
* an award signed by central is journaled (:class:`WideAreaAwarded`, once by its id) once an
  acknowledgement of this connection was taken and central holds this property's history; the
  ledger checks the signature again and pays the held seat. One for a claim no longer held
  (central sends each again with every acknowledgement until the property's totals no longer
  list it) is counted and left: journaled again it would be a conflicting reuse of its id;
* central's meter is shown on the property's own signs and displays, newer ``(epoch, seq)``
  only, and how long after central's commit it arrived is kept (``worst_meter_lag_s``,
  :mod:`drivers.mqtt.central_meters`).

The gate's opening and closing are journaled (``WideAreaStatusChanged``,
:mod:`drivers.mqtt.gate_journal`), so that the ledger refuses wide-area wagers while it is
closed whatever path they take; a timer closes it ``grace_s`` after central was last heard
(Michigan R 432.1841).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import TYPE_CHECKING, Final

import msgspec

from controller.agent.resend import ResendDelay
from controller.backoff import Backoff, keep_connected
from controller.clock import utc_now
from controller.errors import InputError
from controller.ports import OutboxError
from controller.wide_events import WideAreaAwarded, award_event_id
from controller.widearea.freshness import REPLAYED, AckFreshness
from controller.widearea.messages import (
    SiteHello,
    canonical,
    decode_ack,
    decode_award,
    signed_bytes,
)
from controller.widearea.property_link import (
    CentralAckRefused,
    SitePosition,
    WideAreaGate,
    judge_central_ack,
)
from drivers.mqtt.central_meters import CentralMeters
from drivers.mqtt.connection import (
    QOS,
    broker_failure,
    cancellations,
    check_granted,
    guarded,
    make_client,
    raise_if_cancelled,
)
from drivers.mqtt.gate_journal import GateJournal
from drivers.mqtt.pipeline import message_payload
from drivers.mqtt.topics import Topics
from drivers.mqtt.uplink_refusals import AWARD_UNBOUND, REFUSALS, RefusalLog
from drivers.tasks import until_first_ends

if TYPE_CHECKING:
    import aiomqtt

    from controller.ports import Intake, SiteChainView
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)

BATCH: Final = 256
"""Messages read from the journal at once."""
REPORT_S: Final = 300.0
"""The totals are reported again this often on a connection that stays up: central reconciles
what came since (a day-long link is not a day unreconciled), and hears an idle property."""
OUTBOX_UNREADABLE: Final = "outbox-unreadable"
"""The fault journaled when the outbox to central cannot be read (edited, or the disk)."""
HELLO_AGAIN_S: Final = 1.0
"""At most this often a hello is said again on one connection (a flood of replayed
acknowledgements makes no flood of hellos)."""


class SiteUplink:
    """A :class:`controller.ports.Source`: the property's side of the link (module docstring).

    A :class:`drivers.mqtt.metrics.UplinkCounts`: the ``jackpotd_wide_area_*`` metrics.
    """

    refusals: tuple[str, ...] = REFUSALS

    def __init__(
        self, settings: BrokerSettings, view: SiteChainView, resend: ResendDelay | None = None
    ) -> None:
        self.name = "wide-area"
        self.settings = settings
        self.view = view
        self.topics = Topics(settings.site)
        self.addresses = settings.addresses()
        self.gate = WideAreaGate(view.grace_s)
        self.position = SitePosition(view.site, view.sent_high(), 0, 0)
        self.connected = False
        self.reconnects = 0
        self.published = 0
        self.report_s = REPORT_S
        """How often the totals are reported while the link stays up."""
        self.meters = CentralMeters(view)
        """Central's meters shown on the property's signs (:mod:`.central_meters`)."""
        self.gate_journal = GateJournal(self.name, self.gate, view)
        """Each opening and closing journaled (:mod:`.gate_journal`)."""
        self._refusals = RefusalLog(self.name, log)
        self.refused: dict[str, int] = self._refusals.counts
        """Acknowledgements and awards not acted on, by why."""
        self.awards_again = 0
        """Awards received again for a claim already paid (central resends until told)."""
        self.freshness = AckFreshness("")
        """This connection's nonce, and the counter of the last acknowledgement taken on it."""
        self._hello_due = asyncio.Event()
        self._hello_at = self._taken_at = float("-inf")
        self._head_sent = 0
        """The row of the last signed head sent on this connection (0: none since its hello)."""
        self.heard_at = time.time()
        """When central was last heard (Unix time): an accepted acknowledgement; the start."""
        self._resend = resend or ResendDelay(2.0, 30.0)
        self._index = 0
        self._intake: Intake | None = None
        self._baseline = 0
        self._backoff = Backoff(settings.backoff_initial_s, settings.backoff_cap_s)

    @property
    def worst_meter_lag_s(self) -> float:
        """The longest central's meter took to reach this property, from its commit (seconds)."""
        return self.meters.worst_lag_s

    async def run(self, intake: Intake) -> None:
        """Stay connected and keep the gate until cancelled."""
        self._intake = intake
        self._baseline = baseline = cancellations()
        # A cancellation Python 3.11 can lose in a connection's wait is raised again (guarded).
        connected = keep_connected(
            self, self._backoff, before_attempt=lambda: raise_if_cancelled(baseline)
        )
        await until_first_ends(connected, self.gate_journal.keep(intake))

    # -- the connection (controller.backoff.Reconnecting) ---------------------------------------

    def open_session(self) -> aiomqtt.Client:
        """A session with the current broker of the list."""
        return make_client(
            self.settings.at(self.addresses[self._index]),
            identifier=f"site-{self.view.site}",
            will_topic=self.topics.site_status(self.view.site),
            manual_ack=False,
        )

    async def use_session(self, client: aiomqtt.Client) -> None:
        """Send, resend and hear central until the connection fails.

        An outbox that cannot be read (its table edited) sends nothing more: the fault is
        journaled, the connection ends, and the next attempt reads it again after the backoff.
        """
        raise_if_cancelled(self._baseline)  # lost in the wait for CONNACK (see guarded)
        filters = [self.topics.site_ack(self.view.site), self.topics.site_award(self.view.site)]
        filters += [self.topics.meter(pool) for pool in self.view.pools()]
        granted = await guarded(client.subscribe([(f, QOS) for f in filters]))
        check_granted(granted, filters)
        try:
            await until_first_ends(self._send(client), self._receive(client))
        except OutboxError as error:
            if self._intake is not None:
                await self._intake.reject(self.name, OUTBOX_UNREADABLE, str(error))
            raise

    def session_opened(self) -> None:
        """Connected."""
        self._backoff.reset()
        log.info("%s: connected to %s:%s", self.name, *self.addresses[self._index])

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:  # noqa: ARG002
        """Broker failures, and an outbox that cannot be read, are retried; others end it."""
        if isinstance(error, OutboxError):
            return OUTBOX_UNREADABLE
        return broker_failure(error)

    def failed(self, what: str, error: Exception) -> None:
        """Log it and move on to the next broker of the list."""
        host, port = self.addresses[self._index]
        self._index = (self._index + 1) % len(self.addresses)
        log.warning("%s: %s:%s: %s: %s", self.name, host, port, what, error)

    # -- out ---------------------------------------------------------------------------------

    async def _send(self, client: aiomqtt.Client) -> None:
        up, loop = self.topics.site_up(self.view.site), asyncio.get_running_loop()
        sent = self.position.acked
        await self._hello(client, up)
        self._head_sent = 0
        while True:  # a report, then messages until central has been silent past the grace
            self.gate_journal.reconcile.clear()
            sent = await self._report(client, up, sent)
            self._resend.progressed()
            acked, since = self.position.acked, loop.time()
            reported = since
            while not self.gate_journal.reconcile.is_set():
                await self._more_or_reconcile(sent)
                if self._hello_due.is_set() or loop.time() >= self._hello_again_at():
                    await self._hello(client, up)
                await self._send_head(client, up)
                sent = await self._publish(client, up, sent, self.view.sent_high())
                now = loop.time()
                if now - reported >= self.report_s:
                    # Reconciled while the link stays up, and heard while the tables are idle.
                    sent, reported = await self._report(client, up, sent, reopening=False), now
                if self.position.acked != acked:
                    acked, since = self.position.acked, now
                    self._resend.progressed()
                elif sent > acked and now - since >= self._resend.current_s:
                    self._resend.resent()
                    log.info("%s: resending after %s", self.name, acked)
                    sent, since = await self._publish(client, up, acked, sent), now

    async def _report(
        self, client: aiomqtt.Client, up: str, sent: int, *, reopening: bool = True
    ) -> int:
        """The totals as journaled now (through M), after every message up to M: in order.

        Reopening (a connection, a silent central), the gate waits for their reconciliation
        from now on: an acknowledgement heard while they are sent (one central sent before,
        held by the broker or the link) names an older reconciliation, and must not reopen the
        gate. The periodic report (``report_s``) leaves the gate as it is.
        """
        totals = self.view.totals()
        if reopening:
            self.gate.connected(totals.through)
        sent = await self._publish(client, up, sent, totals.through)
        await guarded(client.publish(up, canonical(totals), qos=QOS))
        return sent

    async def _hello(self, client: aiomqtt.Client, up: str) -> None:
        """A new nonce, said to central before anything else it is to answer."""
        self._hello_due.clear()
        self._hello_at = asyncio.get_running_loop().time()
        self.freshness = AckFreshness(secrets.token_hex(16))
        hello = SiteHello(self.view.site, self.freshness.nonce)
        hello = self.view.signed_hello(hello)
        await guarded(client.publish(up, canonical(hello), qos=QOS))
        self._head_sent = 0  # central answers its next start with the head it keeps: send it
        await self._send_head(client, up)

    async def _send_head(self, client: aiomqtt.Client, up: str) -> None:
        """The latest signed head, if this connection has not sent it since its hello."""
        said = self.view.signed_head()
        if said is not None and said.head.seq > self._head_sent:
            await guarded(client.publish(up, canonical(said), qos=QOS))
            self._head_sent = said.head.seq

    def _hello_again_at(self) -> float:
        """When to say hello again if central takes no notice: it may have lost this one."""
        since = max(self._hello_at, self._taken_at)
        return since + max(HELLO_AGAIN_S, self.view.grace_s / 3)

    async def _more_or_reconcile(self, sent: int) -> None:
        """Until a message after ``sent`` is journaled, a report is due, or the resend delay."""
        waits = [
            asyncio.ensure_future(self.view.beyond(sent)),
            asyncio.ensure_future(self.gate_journal.reconcile.wait()),
            asyncio.ensure_future(self._hello_due.wait()),
            asyncio.ensure_future(self.view.head_beyond(self._head_sent)),
        ]
        hello_in = self._hello_again_at() - asyncio.get_running_loop().time()
        try:
            await asyncio.wait(
                waits,
                timeout=max(0.0, min(self._resend.current_s, hello_in)),
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            for wait in waits:
                wait.cancel()

    async def _publish(self, client: aiomqtt.Client, up: str, after: int, through: int) -> int:
        """Publish the journal's messages after ``after`` up to ``through``; the last sent."""
        while after < through:
            batch = self.view.messages_after(after, min(BATCH, through - after))
            if not batch:
                return after
            for message in batch:
                await guarded(client.publish(up, canonical(message), qos=QOS))
                self.published += 1
                after = message.site_seq
        return after

    # -- in ----------------------------------------------------------------------------------

    async def _receive(self, client: aiomqtt.Client) -> None:
        ack_topic = self.topics.site_ack(self.view.site)
        award_topic = self.topics.site_award(self.view.site)
        async for message in client.messages:
            payload = message_payload(message)
            try:
                if message.topic.value == ack_topic:
                    self._take_ack(payload)
                elif message.topic.value == award_topic:
                    await self._take_award(payload)
                elif payload:  # a meter; an empty retained one was cleared by an operator
                    self.meters.take(payload)
            except (msgspec.MsgspecError, InputError) as error:
                self._refuse("undecodable", str(error))

    def _take_ack(self, payload: bytes) -> None:
        ack = decode_ack(payload)
        if not self.view.central_signed(signed_bytes(ack), ack.signature):
            self._refuse("not-central", f"an acknowledgement through {ack.through}")
            return
        stale = self.freshness.judge(ack)
        if stale is not None:
            # Never heard, never a fault of central's: it extends no grace and reopens nothing.
            # Not this connection's: central may have lost it (a restart), so say hello again.
            now = asyncio.get_running_loop().time()
            if stale.reason != REPLAYED and now - self._hello_at >= HELLO_AGAIN_S:
                self._hello_due.set()
            self._refuse(stale.reason, stale.detail)
            return
        self.freshness = self.freshness.after(ack)
        self._taken_at = asyncio.get_running_loop().time()
        position = SitePosition(
            self.view.site, self.view.sent_high(), self.position.acked, self.position.epoch
        )
        verdict = judge_central_ack(ack, position, self.view.digest_of(ack.through))
        if isinstance(verdict, CentralAckRefused):
            self.gate.refused(verdict)
            self._refuse(verdict.reason, verdict.detail)
        else:
            self.position = position.after(verdict)
            self.gate.heard(asyncio.get_running_loop().time(), verdict)
            self.heard_at = time.time()
        self.gate_journal.heard.set()

    async def _take_award(self, payload: bytes) -> None:
        award = decode_award(payload)
        if not self.view.central_signed(signed_bytes(award), award.signature):
            self._refuse("not-central", f"an award of claim {award.claim_seq}")
            return
        if not self.freshness.bound or self.gate.diverged:
            # Bound to a live central of this history: one captured before the property's
            # journal was restored could otherwise pay a new claim of the same number.
            self._refuse(AWARD_UNBOUND, f"an award of claim {award.claim_seq}")
            return
        if (
            award.claim_seq <= self.view.sent_high()
            and award.claim_seq not in self.view.totals().held
        ):
            # Central sends each award again with every acknowledgement until this property's
            # next totals no longer list the claim as held. Once journaled, a resend is no news;
            # its other signature (and central's row) would be journaled as a conflicting reuse
            # of the award's id, a fault a row for every acknowledgement.
            self.awards_again += 1
            return
        if self._intake is not None:
            await self._intake.submit(WideAreaAwarded(award_event_id(award), utc_now(), award))

    def _refuse(self, reason: str, detail: str) -> None:
        self._refusals.refuse(reason, detail)
