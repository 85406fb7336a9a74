"""Cumulative acknowledgements: what the agent accepts of one, what the controller may claim.

The controller acknowledges an agent's events with one number: the highest agent ``seq`` of
the agent's boot that it has journaled, every lower one journaled too. The agent checks the
acknowledgement before it trims its outbox (:func:`judge_ack`): it must name the agent's own
table and boot, acknowledge nothing the agent never stored, and come from an epoch no older
than the newest it has seen, so that a forged, misrouted or zombie-leader acknowledgement
trims nothing (docs/ha.md, "Table agents").

The controller keeps, per (table, boot), what it has journaled and what it has handed to its
sequencer (:class:`CumulativeAcks`), so that it submits each agent event once, in order, and
never claims a ``seq`` beyond a gap.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum
from typing import Final

REMEMBERED_BOOTS: Final = 4096
"""(table, boot) pairs the controller remembers; the oldest is forgotten past it."""


@dataclass(frozen=True, slots=True)
class Ack:
    """``table/<tid>/cmd/ack``: every agent ``seq`` up to ``agent_seq`` of ``boot`` is journaled.

    ``journal_seq`` is the journal row of the last of them and ``epoch`` the sequencer epoch it
    was journaled under (docs/ha.md).
    """

    table_id: str
    boot: str
    agent_seq: int
    journal_seq: int
    epoch: int


@dataclass(frozen=True, slots=True)
class AckRefused:
    """An acknowledgement the agent does not act on, and why (logged and kept as a fault)."""

    reason: str
    detail: str


OTHER_TABLE: Final = "other-table"
OTHER_BOOT: Final = "other-boot"
AHEAD: Final = "ahead-of-outbox"
STALE_EPOCH: Final = "stale-epoch"


@dataclass(frozen=True, slots=True)
class AckAccepted:
    """A valid acknowledgement: the outbox is trimmed through ``through`` (it never goes back)."""

    through: int
    epoch: int


@dataclass(frozen=True, slots=True)
class OutboxPosition:
    """Where the agent's outbox stands: its table and boot, stored and acknowledged through."""

    table_id: str
    boot: str
    stored_high: int
    """The highest ``seq`` stored in this boot."""
    acked: int
    """The highest ``seq`` acknowledged so far."""
    epoch: int
    """The newest epoch an accepted acknowledgement carried."""


def judge_ack(ack: Ack, position: OutboxPosition) -> AckAccepted | AckRefused:
    """What the agent makes of an acknowledgement, given where its outbox stands.

    A lower ``agent_seq`` than already acknowledged is an old answer, still proof that the
    controller hears the table.
    """
    table_id, boot = position.table_id, position.boot
    stored_high, acked, epoch = position.stored_high, position.acked, position.epoch
    if ack.table_id != table_id:
        return AckRefused(OTHER_TABLE, f"for table {ack.table_id!r}, this agent is {table_id!r}")
    if ack.boot != boot:
        return AckRefused(OTHER_BOOT, f"for boot {ack.boot!r}, this agent is in {boot!r}")
    if ack.agent_seq > stored_high:
        detail = f"acknowledges seq {ack.agent_seq}, the outbox holds up to {stored_high}"
        return AckRefused(AHEAD, detail)
    if ack.epoch < epoch:
        detail = f"epoch {ack.epoch} after epoch {epoch}: a sequencer that was replaced"
        return AckRefused(STALE_EPOCH, detail)
    return AckAccepted(max(acked, ack.agent_seq), ack.epoch)


class Admission(Enum):
    """What the controller does with an agent's event on arrival."""

    SUBMIT = "submit"
    """Hand it to the sequencer (the journal still applies its event id once)."""
    JOURNALED = "journaled"
    """Journaled already: acknowledge again, submit nothing."""
    GAP = "gap"
    """An earlier one is missing: drop it unjournaled; the agent resends from the gap, in order."""


@dataclass(slots=True)
class _Boot:
    journaled: int
    journal_seq: int
    submitted: int


class CumulativeAcks:
    """The controller's view of each agent boot: journaled through, and submitted through.

    Every agent message carries ``acked``, the highest ``seq`` a controller has acknowledged
    to it. That is the controller's floor for the boot: a controller that has just started, or
    that led before another node acknowledged more, knows no more than that, and never
    takes an event it has not seen journaled for one that was (an agent that says less than
    it was told only makes itself resend).
    """

    def __init__(self, remembered: int = REMEMBERED_BOOTS) -> None:
        self._boots: OrderedDict[tuple[str, str], _Boot] = OrderedDict()
        self._remembered = remembered

    def admit(self, table_id: str, boot: str, seq: int, acked: int) -> Admission:
        """Whether to submit an agent event that just arrived (noted as submitted if so)."""
        known = self.heard(table_id, boot, acked)
        if seq <= known.journaled:
            return Admission.JOURNALED
        if seq > known.submitted + 1:
            return Admission.GAP
        known.submitted = max(known.submitted, seq)
        return Admission.SUBMIT

    def heard(self, table_id: str, boot: str, acked: int) -> _Boot:
        """A message of the boot (an event or a heartbeat) says it was acknowledged ``acked``."""
        key = (table_id, boot)
        known = self._boots.get(key)
        if known is None:
            known = self._boots[key] = _Boot(journaled=acked, journal_seq=0, submitted=acked)
            self._forget_oldest()
            return known
        self._boots.move_to_end(key)
        if acked > known.journaled:
            # Another node acknowledged more (a failover): its row is not known here.
            known.journaled, known.journal_seq = acked, 0
        known.submitted = max(known.submitted, known.journaled)
        return known

    def journaled(self, table_id: str, boot: str, seq: int, journal_seq: int) -> None:
        """The event ``seq`` of a boot is durable (applied, refused or a duplicate)."""
        known = self._boots.get((table_id, boot))
        if known is None or seq != known.journaled + 1:
            return  # not the next one: the acknowledgement stays where it is
        known.journaled = seq
        known.journal_seq = journal_seq

    def restart(self) -> None:
        """A new connection: what was submitted but not journaled is delivered again."""
        for known in self._boots.values():
            known.submitted = known.journaled

    def acknowledged(self, table_id: str, boot: str) -> tuple[int, int] | None:
        """(agent seq, journal seq) to acknowledge for a boot; None if nothing is known."""
        known = self._boots.get((table_id, boot))
        if known is None:
            return None
        return known.journaled, known.journal_seq

    def _forget_oldest(self) -> None:
        while len(self._boots) > self._remembered:
            self._boots.popitem(last=False)
