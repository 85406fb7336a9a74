"""The controller's answers to table agents: de-duplication on (table, boot, seq), cumulative acks.

A table agent (docs/ha.md, "Table agents") sends each event with its boot and its own ``seq``
and resends until acknowledged. The MQTT source hands each one to :meth:`AgentAnswers.admit`:
an event already journaled is not submitted again, only acknowledged again; one past a gap is
dropped unjournaled (the agent resends from the gap, in order, so the journal keeps the
table's order); the next one is submitted. Once its receipt is in (the journal's ``COMMIT`` has
returned) the source calls :meth:`AgentAnswers.journaled`, and only then is the boot marked
for an answer: :meth:`AgentAnswers.serve` publishes the latest cumulative acknowledgement of
every marked boot on ``table/<tid>/cmd/ack`` (:mod:`drivers.mqtt.agent_wire`), so a burst of
events is answered by one message. An agent's heartbeat is answered the same way, with what is
journaled, so that the agent knows the controller hears it even when it has nothing to send.

What is acknowledged comes from receipts alone (:class:`controller.agent.acks.CumulativeAcks`):
the ``acked`` a message claims never makes an event "journaled", so a forged claim far ahead
cannot have the next events answered without being written (docs/ha.md, "Table agents"); nor
does an event refused for its agent's signature, so that a forgery under an agent's (boot,
seq) never has the agent's own event at that seq acknowledged unjournaled.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from controller.agent.acks import Ack, Admission, CumulativeAcks
from controller.agent_signature import AGENT_SIGNATURE
from controller.clock import utc_now
from drivers.mqtt.agent_wire import ACK_COMMAND, encode_ack
from drivers.mqtt.connection import QOS, guarded

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiomqtt

    from controller.ports import Receipt
    from drivers.mqtt.payloads import AgentStamp
    from drivers.mqtt.topics import Topics

log = logging.getLogger(__name__)


class AgentAnswers:
    """What the source knows of each agent boot, and the acknowledgements it owes."""

    def __init__(self, topics: Topics) -> None:
        self._topics = topics
        self.epoch: Callable[[], int] = lambda: 0
        """The sequencer epoch the journal writes under (the service sets it from the journal)."""
        self._acks = CumulativeAcks()
        self._owed: dict[tuple[str, str], None] = {}
        self._wake = asyncio.Event()
        self.gaps = 0
        """Agent events dropped because an earlier one had not arrived (resent by the agent)."""
        self.answered = 0
        """Acknowledgements published."""
        self.refused = 0
        """Table events refused for their agent's signature (an agent's: never acknowledged)."""

    def admit(self, table_id: str, stamp: AgentStamp) -> Admission:
        """Whether to submit an agent's event; one journaled already is answered again."""
        admission = self._acks.admit(table_id, stamp.boot, stamp.seq, stamp.acked)
        if admission is Admission.JOURNALED:
            self.owe(table_id, stamp.boot)
        elif admission is Admission.GAP:
            self.gaps += 1
            log.info(
                "agent %s/%s: seq %s after a gap, left for the resend",
                table_id,
                stamp.boot,
                stamp.seq,
            )
        return admission

    def journaled(self, table_id: str, stamp: AgentStamp) -> Callable[[Receipt], None]:
        """What the source runs once the event's receipt is in: note it, and owe an answer."""

        def note(receipt: Receipt) -> None:
            if self.count_refusal(receipt):
                # Not the table's agent (docs/ha.md, "Signed forwarding"): a forgery under
                # the agent's (boot, seq) must not have the agent's own event at that seq
                # answered as journaled. The genuine one, sent again, is submitted.
                return
            self._acks.journaled(table_id, stamp.boot, stamp.seq, receipt.seq)
            self.owe(table_id, stamp.boot)

        return note

    def count_refusal(self, receipt: Receipt) -> bool:
        """Whether the event was refused for its table agent's signature (counted if so)."""
        if not receipt.reason.startswith(AGENT_SIGNATURE):
            return False
        self.refused += 1
        log.warning("refused for its table agent's signature: %s", receipt.reason[:200])
        return True

    def refusal_counted(self, receipt: Receipt) -> None:
        """Count the event if it was refused for its table agent's signature."""
        self.count_refusal(receipt)

    def beat(self, table_id: str, stamp: AgentStamp) -> None:
        """An agent's heartbeat: answer it with what is journaled of its boot."""
        self.owe(table_id, stamp.boot)

    def owe(self, table_id: str, boot: str) -> None:
        """Answer this boot with what is journaled (after an event, or to a heartbeat)."""
        self._owed[table_id, boot] = None
        self._wake.set()

    def restart(self) -> None:
        """A new connection: what was submitted and not journaled comes again."""
        self._acks.restart()
        if self._owed:
            self._wake.set()

    async def serve(self, client: aiomqtt.Client) -> None:
        """Publish the acknowledgements owed, latest value per boot, until the connection ends."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            owed, self._owed = list(self._owed), {}
            for table_id, boot in owed:
                run = self._acks.acknowledged(table_id, boot)
                ack = Ack(table_id, boot, run.through, run.journal_seq, self.epoch(), run.first)
                topic = self._topics.table_command(table_id, ACK_COMMAND)
                try:
                    await guarded(client.publish(topic, encode_ack(ack, utc_now()), qos=QOS))
                except BaseException:
                    # Not said: owed again on the next connection (the agent resends anyway).
                    self._owed.update(dict.fromkeys(owed))
                    raise
                self.answered += 1
