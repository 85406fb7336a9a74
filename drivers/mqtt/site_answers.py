"""Central's answers to its linked properties: each message submitted once, signed cumulative acks.

docs/wide-area.md, "The link's runtime". A linked property publishes its chain's
messages and, after each (re)connection's backlog, its totals on ``wide/<site>/up``
(:mod:`drivers.mqtt.topics`). The MQTT source hands each one to :meth:`SiteAnswers.admit`:

* the next message after what the ledger has applied (and what this connection has already
  handed to the sequencer) is submitted as :class:`~controller.wide_events.SiteReported`;
* one the ledger has applied is not submitted again, only acknowledged again (a resend);
* one in flight (handed over, not yet committed) is dropped: its commit is acknowledged;
* one after a gap is dropped unjournaled: the property resends from the gap, in order;
* anything from a property that is not linked, or whose link is halted, is dropped, counted:
  the ledger would refuse it, and a halted link's resends would otherwise fill the journal
  (the halt itself was journaled once, with its reason); a halted link is not acknowledged
  either, heartbeats included, so the property's wide-area wagers close at its grace;
* totals are submitted (:class:`~controller.wide_events.SiteTotalsReported`) when they cover
  exactly what is applied or handed over: they follow the messages they count;
* a hello (:class:`~controller.widearea.messages.SiteHello`, signed by the property) is not
  journaled: its nonce is kept, and every acknowledgement after it names it, with a counter
  that grows with each acknowledgement, so the property tells a fresh one from one published
  again (docs/wide-area.md, "A replayed acknowledgement"); and each hello is answered on
  ``wide/<site>/mark`` with the property's highest signed head central keeps, naming the
  hello's nonce (:class:`~controller.widearea.messages.CentralMark`);
* a signed head (:class:`~controller.widearea.messages.SiteHead`) is kept if it is the
  property's highest valid one (:meth:`controller.ports.SiteLinks.keep_head`), never journaled.

Once a receipt is in (the ``COMMIT`` has returned) the property is owed an acknowledgement
(and with it every award of its claims it may not have journaled yet, on ``wide/<site>/award``):
:meth:`SiteAnswers.serve` publishes, for each property owed one, a :class:`CentralAck` built
from the ledger's state of its link (``through``, ``head``, ``reconciled_through``), the row and
the epoch, signed with central's controller key (:class:`controller.ports.SiteLinks`), and one
for every linked property each ``heartbeat_s`` so that its wide-area wagers stay open while it
has nothing to send.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Final

import msgspec

from controller.wide_events import (
    SiteReported,
    SiteTotalsReported,
    site_event_id,
    totals_event_id,
)
from controller.widearea.messages import (
    ACK_FRESH,
    CentralAck,
    SiteHead,
    SiteHello,
    SiteMessage,
    canonical,
    decode_up,
    signed_bytes,
)
from drivers.mqtt.connection import QOS, guarded

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiomqtt

    from controller.ports import Receipt, SiteLinks
    from controller.widearea.messages import SiteTotals, SiteUp
    from drivers.mqtt.topics import Topics

log = logging.getLogger(__name__)


BAD_SITE_MESSAGE: Final = "bad-site-message"
SITE_MISMATCH: Final = "site-mismatch"
UNKNOWN_SITE: Final = "unknown-site"
FORGED: Final = "forged-site-message"
REFUSALS: Final = (BAD_SITE_MESSAGE, SITE_MISMATCH, UNKNOWN_SITE, FORGED)
"""The reasons the source refuses a property's input with (journaled as faults)."""


@dataclass(frozen=True, slots=True)
class SiteRefusal:
    """A property's input refused: journaled as a fault, with a metric."""

    reason: str
    detail: str


class SiteAdmission(Enum):
    """What becomes of a property's message or totals (see the module docstring)."""

    SUBMIT = "submit"
    APPLIED = "applied"
    IN_FLIGHT = "in-flight"
    GAP = "gap"
    NOT_LINKED = "not-linked"
    HALTED = "halted"


DROP_REASONS: Final = tuple(
    admission.value
    for admission in SiteAdmission
    if admission not in {SiteAdmission.SUBMIT, SiteAdmission.NOT_LINKED}
)
"""Why a linked property's input is dropped before the sequencer (``jackpotd_site_dropped``);
a property that is not linked is refused instead (``jackpotd_rejected_inputs``)."""


class SiteAnswers:
    """What central's source knows of each linked property, and the acknowledgements it owes.

    A :class:`drivers.mqtt.metrics.SiteCounts`: its drops, acknowledgements and when each
    linked property was last heard are the ``jackpotd_site_*`` metrics (docs/metrics.md).
    """

    drop_reasons: tuple[str, ...] = DROP_REASONS

    def __init__(self, topics: Topics, links: SiteLinks) -> None:
        self._topics = topics
        self._links = links
        self.epoch: Callable[[], int] = lambda: 0
        """The sequencer epoch the journal writes under (the service sets it)."""
        self._handed: dict[str, int] = {}
        """Per property, the last ``site_seq`` handed to the sequencer on this connection."""
        self._owed: dict[str, int] = {}
        """Per property owed an acknowledgement, the journal row to name (0: none yet)."""
        self._wake = asyncio.Event()
        self.dropped: Counter[SiteAdmission] = Counter()
        """Messages and totals not submitted, by why."""
        self.site_drops: Counter[tuple[str, str]] = Counter()
        """Of those, a linked property's by (site, why)."""
        self.answered = 0
        """Acknowledgements published."""
        self.site_acks: Counter[str] = Counter()
        """Of those, by site."""
        self.started = time.time()
        self._heard: dict[str, float] = {}
        """When each linked property was last heard (Unix time)."""
        self._nonces: dict[str, str] = {}
        """Per property, the nonce of its latest hello: the connection acknowledged."""
        self._counters: dict[str, int] = {}
        """Per property, the counter of the last acknowledgement signed for it."""
        self._marks_owed: dict[str, str] = {}
        """Per property whose hello is to be answered with its mark, the hello's nonce."""
        self.heads_kept = 0
        """Signed heads of properties kept as their marks."""

    def admit(self, up: SiteMessage | SiteTotals) -> SiteAdmission:
        """Whether to submit a property's message or totals (see the module docstring)."""
        admission = self._judge(up)
        if admission is SiteAdmission.SUBMIT and isinstance(up, SiteMessage):
            self._handed[up.site] = up.site_seq
        elif admission is SiteAdmission.APPLIED:
            self.owe(up.site, 0)
        if admission is not SiteAdmission.NOT_LINKED:  # no series for any name a client sends
            self._heard[up.site] = time.time()
            if admission is not SiteAdmission.SUBMIT:
                self.site_drops[up.site, admission.value] += 1
        if admission is not SiteAdmission.SUBMIT:
            self.dropped[admission] += 1
        return admission

    def linked(self) -> list[str]:
        """The properties the journal links, sorted: the only ones the metrics name."""
        return self._links.sites()

    def heard_at(self, site: str) -> float:
        """When ``site`` was last heard (Unix time); when this source started if never."""
        return self._heard.get(site, self.started)

    def _judge(self, up: SiteMessage | SiteTotals) -> SiteAdmission:
        link = self._links.link(up.site)
        if link is None:
            return SiteAdmission.NOT_LINKED
        if link.halted:
            return SiteAdmission.HALTED
        frontier = max(link.through, self._handed.get(up.site, 0))
        if isinstance(up, SiteMessage):
            if up.site_seq <= link.through:
                return SiteAdmission.APPLIED
            if up.site_seq <= frontier:
                return SiteAdmission.IN_FLIGHT
            if up.site_seq != frontier + 1:
                log.info("site %s: message %s after a gap, left to resend", up.site, up.site_seq)
                return SiteAdmission.GAP
            return SiteAdmission.SUBMIT
        if up.through != frontier:  # not after the message it counts: a gap, or an old report
            return SiteAdmission.GAP
        return SiteAdmission.SUBMIT

    def take(
        self, site: str, payload: bytes, at: str
    ) -> SiteReported | SiteTotalsReported | SiteRefusal | None:
        """What to submit for one message on ``wide/<site>/up``; a refusal; or None: dropped."""
        try:
            up = decode_up(payload)
        except msgspec.MsgspecError as error:
            return SiteRefusal(BAD_SITE_MESSAGE, f"{site}: {error}")
        if up.site != site:
            return SiteRefusal(SITE_MISMATCH, f"site {up.site!r} on the topic of {site!r}")
        if self._links.link(site) is not None and not self._signed(up):
            # Before the sequencer: journaled as a fault of its own, never under the id the
            # property's own message of that number will carry, so a forgery blocks nothing.
            number = _number(up)
            return SiteRefusal(FORGED, f"{site} {type(up).__name__} {number}: not its key's")
        if isinstance(up, SiteHello):
            return self._hello(up)
        if isinstance(up, SiteHead):
            if self._links.link(site) is None:
                return SiteRefusal(UNKNOWN_SITE, f"site {site!r} is not linked")
            self.heads_kept += self._links.keep_head(site, up.head)
            return None
        admission = self.admit(up)
        if admission is SiteAdmission.NOT_LINKED:
            return SiteRefusal(UNKNOWN_SITE, f"site {site!r} is not linked")
        if admission is not SiteAdmission.SUBMIT:
            return None
        if isinstance(up, SiteMessage):
            link = self._links.link(site)
            resumed = 0 if link is None else link.resumed
            return SiteReported(site_event_id(up.site, up.site_seq, resumed), at, up)
        return SiteTotalsReported(totals_event_id(up), at, up)

    def _hello(self, hello: SiteHello) -> SiteRefusal | None:
        """A linked property's new connection: answer it, under its nonce, at once."""
        if self._links.link(hello.site) is None:
            return SiteRefusal(UNKNOWN_SITE, f"site {hello.site!r} is not linked")
        self._nonces[hello.site] = hello.nonce
        self._marks_owed[hello.site] = hello.nonce
        self._heard[hello.site] = time.time()
        self.owe(hello.site, 0)
        return None

    def _signed(self, up: SiteUp) -> bool:
        if isinstance(up, SiteMessage):
            return self._links.signed_by(up.site, up.digest.encode(), up.signature)
        return self._links.signed_by(up.site, signed_bytes(up), up.signature)

    def journaled(self, site: str) -> Callable[[Receipt], None]:
        """What the source runs once the receipt is in: owe the property an acknowledgement.

        A message the ledger refused (not applied), or that halted the link, is handed over
        again when it comes again (once a manager has resumed the link, for the latter).
        """

        def note(receipt: Receipt) -> None:
            link = self._links.link(site)
            if not receipt.applied or (link is not None and link.halted):
                self._handed.pop(site, None)
            self.owe(site, receipt.seq)

        return note

    def owe(self, site: str, journal_seq: int) -> None:
        """Acknowledge ``site`` with what its link now holds (naming ``journal_seq`` if any)."""
        self._owed[site] = max(journal_seq, self._owed.get(site, 0))
        self._wake.set()

    def restart(self) -> None:
        """A new connection: what was handed over and not committed comes again."""
        self._handed.clear()
        for site in self._links.sites():
            self.owe(site, 0)

    def ack_of(self, site: str, journal_seq: int) -> CentralAck | None:
        """The signed acknowledgement of what the ledger holds of ``site``'s link now.

        None for a halted link: it acknowledges nothing, heartbeats included, so that the
        property's wide-area wagers close once its grace runs out, as for a silent central,
        and stay closed until a manager resumes the link (docs/wide-area.md, "A halted link").
        None too before the property's hello (a central that restarted: the property says
        hello again once central is silent a third of its grace): it would take none.
        """
        link = self._links.link(site)
        nonce = self._nonces.get(site)
        if link is None or link.halted or nonce is None:
            return None
        # Microseconds of the wall clock at least: beyond every counter central signed for the
        # property before a restart, though it keeps none (a step back is caught by the
        # property: it refuses the acknowledgement, says hello again, and is answered).
        counter = max(self._counters.get(site, 0) + 1, time.time_ns() // 1000)
        self._counters[site] = counter
        ack = CentralAck(
            site, link.through, link.head, journal_seq, self.epoch(), link.reconciled_through,
            nonce=nonce, counter=counter, version=ACK_FRESH,
        )  # fmt: skip
        return msgspec.structs.replace(ack, signature=self._links.sign(signed_bytes(ack)))

    async def serve(self, client: aiomqtt.Client) -> None:
        """Publish the acknowledgements owed, and a heartbeat of each, until the connection ends."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._links.heartbeat_s):
                    await self._wake.wait()
            if not self._wake.is_set():  # a heartbeat: every linked property hears central
                for site in self._links.sites():
                    self._owed.setdefault(site, 0)
            self._wake.clear()
            await self._answer_marks(client)
            owed, self._owed = self._owed, {}
            for site, journal_seq in owed.items():
                ack = self.ack_of(site, journal_seq)
                if ack is None:
                    continue
                # Read with the ack, not after its publish: an award of a claim the ack does
                # not cover yet would reach the property before the ack that does.
                awards = [canonical(award) for award in self._links.awards(site)]
                try:
                    await self._answer(client, site, canonical(ack), awards)
                except BaseException:
                    self._owed.update(owed)  # owed again on the next connection
                    raise
                self.answered += 1
                self.site_acks[site] += 1

    async def _answer_marks(self, client: aiomqtt.Client) -> None:
        """Answer each hello heard with the mark central keeps of its property, under its nonce."""
        marks, self._marks_owed = self._marks_owed, {}
        for site, nonce in marks.items():
            answer = canonical(self._links.mark_answer(site, nonce))
            try:
                await guarded(client.publish(self._topics.site_mark(site), answer, qos=QOS))
            except BaseException:
                self._marks_owed.setdefault(site, nonce)
                raise

    async def _answer(
        self, client: aiomqtt.Client, site: str, ack: bytes, awards: list[bytes]
    ) -> None:
        """The acknowledgement, then every award the property may still lack.

        The property journals each award once, so sending one again is harmless, and a crash
        between a commit and a publish loses none.
        """
        await guarded(client.publish(self._topics.site_ack(site), ack, qos=QOS))
        for award in awards:
            await guarded(client.publish(self._topics.site_award(site), award, qos=QOS))


def _number(up: SiteUp) -> str:
    """What names a property's input in a refusal: its ``site_seq``, ``through`` or nonce."""
    if isinstance(up, SiteMessage):
        return str(up.site_seq)
    if isinstance(up, SiteHead):
        return f"head {up.head.seq}"
    return up.nonce[:8] if isinstance(up, SiteHello) else str(up.through)
