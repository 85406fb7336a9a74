"""Cumulative acknowledgements: what the agent accepts of one, what the controller may claim.

The controller acknowledges an agent's events as one run of its boot: every ``seq`` from
``first`` through ``agent_seq`` is journaled. The agent checks the acknowledgement before it
trims its outbox (:func:`judge_ack`): it must name the agent's own table and boot, acknowledge
nothing the agent never stored, start no later than just after what the agent already had
acknowledged, and come from an epoch no older than the newest it has seen, so that a forged,
misrouted, zombie-leader or gapped acknowledgement trims nothing (docs/ha.md, "Table agents").

The controller keeps, per (table, boot), the run of ``seq`` the journal has answered for
(:class:`CumulativeAcks`): each one in it has a receipt, so that it submits each agent event
once, in order, and never acknowledges a ``seq`` the journal did not answer for. What a
message says it was acknowledged (``acked``) only tells it where a new run may start; it is
never taken as journaled.
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
    """``table/<tid>/cmd/ack``: every ``seq`` of ``boot`` from ``first`` to ``agent_seq`` journaled.

    ``journal_seq`` is the journal row of the last of them and ``epoch`` the sequencer epoch it
    was journaled under (docs/ha.md). ``first`` is 1 when the run is the whole boot's.
    """

    table_id: str
    boot: str
    agent_seq: int
    journal_seq: int
    epoch: int
    first: int = 1


@dataclass(frozen=True, slots=True)
class AckRefused:
    """An acknowledgement the agent does not act on, and why (logged and kept as a fault)."""

    reason: str
    detail: str


OTHER_TABLE: Final = "other-table"
OTHER_BOOT: Final = "other-boot"
AHEAD: Final = "ahead-of-outbox"
AFTER_GAP: Final = "after-gap"
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
    if ack.agent_seq > acked and ack.first > acked + 1:
        # Seqs acked+1 .. first-1 are not covered: trimming through agent_seq would lose them.
        detail = (
            f"acknowledges seq {ack.first} to {ack.agent_seq}, "
            f"the outbox was acknowledged only through {acked}"
        )
        return AckRefused(AFTER_GAP, detail)
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


@dataclass(frozen=True, slots=True)
class Confirmed:
    """What the controller may acknowledge of a boot: ``first`` .. ``through`` are journaled.

    ``through`` is 0 when the journal has answered for none of the boot's events here.
    """

    first: int
    through: int
    journal_seq: int


NOTHING_CONFIRMED: Final = Confirmed(1, 0, 0)


@dataclass(slots=True)
class _Run:
    first: int
    """The run's first ``seq``: where a message said the agent's acknowledgements stood, + 1."""
    journaled: int
    """The highest ``seq`` of the run the journal answered for (each from ``first`` did)."""
    journal_seq: int
    submitted: int
    """The highest ``seq`` of the run handed to the sequencer."""


class CumulativeAcks:
    """The controller's view of each agent boot: the run the journal has answered for.

    A run starts at an event ``seq`` that is just after the ``acked`` its message carries (the
    first event a controller hears of a boot, the agent's resend after a restart or a failover)
    and grows by one ``seq`` per receipt, in order. Only a receipt (the journal's ``COMMIT``
    returned, or the journal answered that it holds the event already) puts a ``seq`` in the
    run, so a message claiming any ``acked`` makes no event "journaled": the events after it are
    submitted, and the journal applies each id once. An acknowledgement names the run's
    ``first``, so the agent trims nothing below it that it had not been acknowledged.
    """

    def __init__(self, remembered: int = REMEMBERED_BOOTS) -> None:
        self._boots: OrderedDict[tuple[str, str], _Run] = OrderedDict()
        self._remembered = remembered

    def admit(self, table_id: str, boot: str, seq: int, acked: int) -> Admission:
        """Whether to submit an agent event that just arrived (noted as submitted if so)."""
        key = (table_id, boot)
        run = self._boots.get(key)
        if run is not None:
            self._boots.move_to_end(key)
            if run.first <= seq <= run.journaled:
                return Admission.JOURNALED
            if run.journaled < seq <= run.submitted + 1:
                run.submitted = max(run.submitted, seq)
                return Admission.SUBMIT
        if seq != acked + 1:
            return Admission.GAP
        # A new run: the message says everything before it was acknowledged to the agent. That
        # is taken as where to start, never as journaled (docs/ha.md, "Table agents").
        self._boots[key] = _Run(first=seq, journaled=seq - 1, journal_seq=0, submitted=seq)
        self._boots.move_to_end(key)
        self._forget_oldest()
        return Admission.SUBMIT

    def journaled(self, table_id: str, boot: str, seq: int, journal_seq: int) -> None:
        """The journal answered for event ``seq`` of a boot (applied, refused or a duplicate)."""
        run = self._boots.get((table_id, boot))
        if run is None or seq != run.journaled + 1:
            return  # not the next one of the run: the acknowledgement stays where it is
        run.journaled = seq
        run.journal_seq = journal_seq

    def restart(self) -> None:
        """A new connection: what was submitted but not journaled is delivered again."""
        for run in self._boots.values():
            run.submitted = run.journaled

    def acknowledged(self, table_id: str, boot: str) -> Confirmed:
        """What to acknowledge of a boot: the run the journal answered for, if any."""
        run = self._boots.get((table_id, boot))
        if run is None or run.journaled < run.first:
            return NOTHING_CONFIRMED
        return Confirmed(run.first, run.journaled, run.journal_seq)

    def _forget_oldest(self) -> None:
        while len(self._boots) > self._remembered:
            self._boots.popitem(last=False)
