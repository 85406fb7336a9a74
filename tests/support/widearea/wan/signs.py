"""What the WAN test checks of the property's signs: each closing of the gate shown, and why.

docs/wide-area.md, "A cut WAN": wide-area wagers close after the grace, and the signs show why
(Michigan R 432.1841). The floor's sign on each property's broker (a
:class:`drivers.mqtt.follower.MeterFollower`, as ``jackpotd sign`` runs it) writes each status
of the wide-area pool it applies (``meter/<pool>/status``) to ``meters.jsonl``. Each closing
the property journaled that lasted :data:`SHOWN_WITHIN_S` or more must have been shown closed,
with the journaled reason, between the closing and its reopening (and a moment after: the
sign hears it through the broker); at the end the sign shows the pool open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from support.widearea.wan.checks import read_facts

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from support.widearea.wan.checks import SiteFindings
    from support.widearea.wan.journals import PropertyJournal

SHOWN_WITHIN_S = 1.0
"""A closing shorter than this may be superseded by its reopening before a sign hears it (the
controller publishes the latest status of a pool): it is not required on the sign."""
SLACK_S = 5.0
"""How long after a reopening a sign may still show the closing it heard late."""


@dataclass(frozen=True)
class StatusSeen:
    """A pool's status a sign applied: where, when, and open or closed why."""

    where: str
    t: float
    open: bool
    reason: str


def read_statuses(path: Path) -> list[StatusSeen]:
    """The statuses in ``meters.jsonl``, in the order written."""
    return [
        StatusSeen(fact["where"], fact["t"], fact["open"], fact["reason"])
        for fact in read_facts(path)
        if "open" in fact
    ]


def closings_shown(found: SiteFindings, prop: PropertyJournal, seen: Sequence[StatusSeen]) -> None:
    """Count the closings the property's sign showed, and say what it did not."""
    shown = [s for s in seen if s.where == found.site]
    statuses = prop.statuses
    for index, (at, is_open, reason, _) in enumerate(statuses):
        if is_open:
            continue
        until = next((t for t, o, *_ in statuses[index + 1 :] if o), float("inf"))
        if until - at < SHOWN_WITHIN_S:
            continue
        if any(not s.open and s.reason == reason and at <= s.t <= until + SLACK_S for s in shown):
            found.closings_shown += 1
        else:
            found.closings_not_shown += 1
            found.problems.append(f"the sign never showed the closing at {at}: {reason!r}")
    if not shown or not shown[-1].open:
        found.problems.append(f"the sign shows the pool closed at the end: {shown[-1:]}")
