"""A property's side of a wide-area link: what it makes of central's acks, and its wagers' gate.

docs/wide-area.md: the property judges each cumulative acknowledgement from central
(:func:`judge_central_ack`) as a table agent judges its own: its site, nothing it never
journaled, no older epoch. It also checks central's ``head`` for the acknowledged message
against its own digest of it: a central that holds another history of the property (a
restored backup, a rewritten chain, an impostor) must trim nothing, and the property must say
so loudly (a fault in its journal, an alert) and keep wide-area wagers closed.

Michigan R 432.1841: play is suspended after a set time without communication, and amounts are
reconciled when it is restored. :class:`WideAreaGate` opens the property's wide-area
progressive wagers only while central was heard within ``grace_s`` **and** a matched
reconciliation covers the current connection: after each (re)connection the property reports
its totals through ``site_seq`` N and stays closed until an accepted ack names a reconciliation
through N or beyond. It starts closed. Times are the property's monotonic clock, in seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from controller.widearea.messages import GENESIS, CentralAck

OTHER_SITE: Final = "other-site"
MALFORMED: Final = "malformed"
AHEAD_OF_CHAIN: Final = "ahead-of-chain"
STALE_EPOCH: Final = "stale-epoch"
HEAD_DIFFERS: Final = "head-differs"
"""Central holds another history of this property: a fault to journal and alert on, never a trim."""


@dataclass(frozen=True, slots=True)
class SitePosition:
    """Where the property's chain stands with central."""

    site: str
    sent_high: int
    """The last ``site_seq`` journaled: the most that can have been sent."""
    acked: int
    """The last ``site_seq`` an accepted ack covered (the outbox is what follows it)."""
    epoch: int
    """The newest central epoch an accepted ack carried."""

    def after(self, accepted: CentralAckAccepted) -> SitePosition:
        """The position once an accepted ack is acted on."""
        return dataclasses.replace(self, acked=accepted.through, epoch=accepted.epoch)


@dataclass(frozen=True, slots=True)
class CentralAckAccepted:
    """A valid ack: the outbox is trimmed through ``through`` (it never goes back)."""

    through: int
    epoch: int
    reconciled_through: int
    """The last ``site_seq`` a matched reconciliation at central covered."""


@dataclass(frozen=True, slots=True)
class CentralAckRefused:
    """An ack the property does not act on, and why (logged, and kept as a fault)."""

    reason: str
    detail: str


def judge_central_ack(
    ack: CentralAck, position: SitePosition, own_head: str | None
) -> CentralAckAccepted | CentralAckRefused:
    """What the property makes of central's ack, given where its chain stands.

    ``own_head`` is the property's own digest of its message ``ack.through``, looked up in its
    journal by the caller (None if it holds no such message; through 0 is :data:`GENESIS`
    whatever is passed). It is an argument rather than a lookup function so that the judgement
    stays a plain function of values: the journal read is the edge's. An ack older than the
    last accepted is still proof that central hears the property; it trims nothing more.
    """
    if ack.site != position.site:
        detail = f"for site {ack.site!r}, this property is {position.site!r}"
        return CentralAckRefused(OTHER_SITE, detail)
    if min(ack.through, ack.reconciled_through) < 0 or ack.reconciled_through > ack.through:
        detail = f"through {ack.through}, reconciled through {ack.reconciled_through}"
        return CentralAckRefused(MALFORMED, detail)
    if ack.through > position.sent_high:
        detail = f"acknowledges site_seq {ack.through}, the chain holds up to {position.sent_high}"
        return CentralAckRefused(AHEAD_OF_CHAIN, detail)
    if ack.epoch < position.epoch:
        detail = f"epoch {ack.epoch} after epoch {position.epoch}: a central that was replaced"
        return CentralAckRefused(STALE_EPOCH, detail)
    ours = GENESIS if ack.through == 0 else own_head
    if ack.head != ours:
        held = "no such message" if ours is None else ours
        detail = f"central's head of site_seq {ack.through} is {ack.head}, this property's {held}"
        return CentralAckRefused(HEAD_DIFFERS, detail)
    through = max(position.acked, ack.through)
    return CentralAckAccepted(through, ack.epoch, ack.reconciled_through)


NEVER_HEARD: Final = "never heard from central"
RECONCILING: Final = "reconciling with central"
DIVERGED: Final = "central holds another history"
SIGN_WIDTH: Final = 32
"""Every reason fits a sign's line in fewer characters than this."""


@dataclass(slots=True)
class WideAreaGate:
    """Whether the property's wide-area progressive wagers are open (see the module docstring)."""

    grace_s: float
    last_heard: float | None = None
    reconciling_from: int | None = None
    """The ``site_seq`` of the totals reported on this connection; None before any."""
    reconciled: bool = False
    """A matched reconciliation through ``reconciling_from`` or beyond was heard since."""
    diverged: bool = False
    """Central's head differed from the property's: closed until a manager acts (a new gate)."""

    def connected(self, totals_through: int) -> None:
        """A (re)connection on which the property reported its totals through ``totals_through``."""
        self.reconciling_from = totals_through
        self.reconciled = False

    def heard(self, now: float, accepted: CentralAckAccepted) -> None:
        """An accepted ack (or heartbeat ack) arrived at ``now``."""
        self.last_heard = now
        if self.reconciling_from is not None:
            self.reconciled |= accepted.reconciled_through >= self.reconciling_from

    def refused(self, refused: CentralAckRefused) -> None:
        """A refused ack: one naming another history closes the gate for good."""
        self.diverged |= refused.reason == HEAD_DIFFERS

    def is_open(self, now: float) -> bool:
        """Whether wide-area progressive wagers are taken at ``now``."""
        return self.reason(now) is None

    def closes_at(self) -> float | None:
        """When the gate closes if nothing more is heard; None if never heard."""
        return None if self.last_heard is None else self.last_heard + self.grace_s

    def reason(self, now: float) -> str | None:
        """For the sign and the log: why the gate is closed at ``now``; None while open."""
        if self.diverged:
            return DIVERGED
        if self.last_heard is None:
            return NEVER_HEARD
        silent = now - self.last_heard
        if silent >= self.grace_s:
            return f"central not heard for {_elapsed(silent)}"
        return None if self.reconciled else RECONCILING


def _elapsed(seconds: float) -> str:
    """Short enough for a sign: 42 s, 7 min, 3 h, 12 d (999 d at most)."""
    for unit, size in (("s", 1), ("min", 60), ("h", 3600)):
        if seconds < 100 * size:
            return f"{int(seconds // size)} {unit}"
    return f"{min(int(seconds // 86400), 999)} d"
