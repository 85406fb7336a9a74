"""What the WAN test checks once the floor has stopped and every link is drained, and its figures.

From the journals (:mod:`support.widearea.wan.journals`) and the signs' record (``meters.jsonl``,
:mod:`support.widearea.wan.floor`), per property:

* every message its journal queued is applied at central once: none missing
  (``contributions_lost``, and ``claims_lost`` for hit claims) and no contribution fed into
  central's pool twice (``contributions_applied_twice``, counted from the pool's own
  ``Contributed`` effects per table, round and seat, not from the message ids the journal
  deduplicates), and the cents fed equal the cents wagered;
* every hit claim awarded once at central (``AwardMade`` per claim) and paid once at the
  property (``wide_area_hits_awarded_twice``), none left unpaid (``hits_unpaid``);
* its last totals matched at central: the last matched reconciliation is through its chain's
  last message (``reconciled``), and no reconciliation mismatched;
* no contribution journaled while its gate was closed (``wagers_while_closed``), and none
  later than ``grace_s`` after a cut began while the cut lasted (``wagers_past_grace``,
  Michigan R 432.1841: play suspended a set time after communication is lost);
* each reopening of its gate after a closing only once central has journaled a matched
  reconciliation of its chain as it stood at the closing (``reopened_before_reconciled``, and
  the contributions taken meanwhile, ``wagers_before_reconciled``: docs/wide-area.md, "A cut
  WAN": only an acknowledgement naming a matched reconciliation reopens);
* its gate open at the end, central's link of it not halted, nothing of it refused, and no
  id journaled again with other content (``ids_reused``: a resend that is not one);
* its local pool played on while its WAN was cut (``local_wagers_during_cuts``, a figure);
* the lags: from a message's journaling at the property to its application at central
  (``ack_lag``: central acknowledges right after the commit), and from central's commit of a
  meter to a sign on the property's broker showing it, or a newer one (``meter_lag``); each
  worst over the whole run (a cut's length included) and over what no cut delayed (nothing
  journaled or committed between a cut and the link's recovery from it: a reconnection's
  backoff and the backlog are the cut's).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.journal.identity import SEQUENCE_REUSED
from support.widearea.wan.journals import seconds

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from support.widearea.wan.journals import CentralJournal, PropertyJournal

STEP_SLACK_S = 0.1
"""How long before the harness saw a step of the clock it may have happened (it looks every
50 ms)."""
GRACE_SLACK_S = 1.0
"""A contribution journaled this long after the grace ran out counts as past it: the gate's
timer and the journal's commit take a moment, the rule's set time is ``grace_s``."""


@dataclass(frozen=True)
class Window:
    """A cut of one property's WAN, in wall-clock time: the cut, the heal, the recovery.

    Recovered: its gate open again and central through its chain.
    """

    site: str
    start: float
    end: float
    recovered: float


@dataclass(frozen=True)
class Timeline:
    """The cuts, and the steps of the wall clock the harness saw (the journals' times step too).

    A step is ``(when, seconds)``: the wall-clock time just after it, and how far it moved.
    What a step falls within cannot be timed: it is left out of the figures and the timed
    checks (``wagers_past_grace``), and counted (``clock_steps``).
    """

    windows: Sequence[Window]
    steps: Sequence[tuple[float, float]] = ()

    def cut_delayed(self, site: str, start: float, end: float) -> bool:
        """Whether ``[start, end]`` meets a cut of ``site`` or the link's recovery from it."""
        return any(w.site == site and start <= w.recovered and end >= w.start for w in self.windows)

    def stepped(self, start: float, end: float) -> bool:
        """Whether the wall clock stepped between ``start`` (before) and ``end`` (after)."""
        return any(start <= when and end >= when - step - STEP_SLACK_S for when, step in self.steps)

    def timed(self, site: str) -> list[Window]:
        """The cuts of ``site`` no step of the clock fell within."""
        return [
            w for w in self.windows if w.site == site and not self.stepped(w.start, w.recovered)
        ]


@dataclass
class SiteFindings:
    """One property's figures once drained (see the module docstring)."""

    site: str
    messages: int = 0
    contributions: int = 0
    claims: int = 0
    central_through: int = 0
    reconciled_through: int = 0
    reconciliations: int = 0
    contributions_lost: int = 0
    claims_lost: int = 0
    contributions_applied_twice: int = 0
    wide_area_hits_awarded_twice: int = 0
    hits_unpaid: int = 0
    wagers_while_closed: int = 0
    wagers_past_grace: int = 0
    reopened_before_reconciled: int = 0
    """Reopenings journaled before central matched the chain as it stood at the closing."""
    wagers_before_reconciled: int = 0
    """Contributions journaled between such a reopening and the reconciliation."""
    refused_while_closed: int = 0
    local_wagers_during_cuts: int = 0
    """Progressive wagers on its local pool journaled while its WAN was cut: local play goes on."""
    cents_wagered: int = 0
    cents_at_central: int = 0
    gate_closings: int = 0
    gate_open_at_end: bool = False
    reconciled: bool = False
    worst_ack_lag_s: float | None = None
    worst_ack_lag_uncut_s: float | None = None
    ack_lag_uncut_p50_s: float | None = None
    worst_meter_lag_s: float | None = None
    worst_meter_lag_uncut_s: float | None = None
    meter_lag_uncut_p50_s: float | None = None
    meters_seen: int = 0
    closings_shown: int = 0
    """Closings of its gate its sign showed, with the journaled reason (:mod:`.signs`)."""
    closings_not_shown: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    """What its journal recorded as faults, by reason."""
    ids_reused: int = 0
    """Its journal's ``sequence-reused`` faults: an id (an award's, a message's) journaled
    again with other content."""
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether nothing is wrong."""
        return not self.problems


def site_findings(
    prop: PropertyJournal, central: CentralJournal, timeline: Timeline, grace_s: float
) -> SiteFindings:
    """One property's figures and problems, from both journals (module docstring)."""
    site = prop.site
    found = SiteFindings(site, messages=len(prop.messages))
    applied = central.applied.get(site)
    contributions = [m for m in prop.messages.values() if m.kind == "contribution"]
    found.contributions, found.claims = len(contributions), len(prop.claims)
    found.central_through = central.through(site)
    lost = [m for m in prop.messages.values() if not (applied and applied[m.site_seq])]
    found.contributions_lost = sum(m.kind == "contribution" for m in lost)
    found.claims_lost = sum(m.kind == "hit" for m in lost)
    fed = {(f"{site}/{m.where[0]}", m.where[1], m.where[2]): m for m in contributions}
    found.contributions_applied_twice = sum(
        count - 1 for where, count in central.contributed.items() if where in fed and count > 1
    )
    found.contributions_applied_twice += sum(
        count - 1 for count in (applied or {}).values() if count > 1
    )
    found.cents_wagered = sum(m.cents for m in contributions)
    found.cents_at_central = central.contributed_cents[site]
    awarded_twice = [n - 1 for (s, _), n in central.awards.items() if s == site and n > 1]
    paid_twice = [n - 1 for n in prop.paid.values() if n > 1]
    found.wide_area_hits_awarded_twice = sum(awarded_twice) + sum(paid_twice)
    found.hits_unpaid = len(prop.held)
    found.wagers_while_closed = len(prop.while_closed)
    found.wagers_past_grace = sum(
        1
        for m in contributions
        for w in timeline.timed(site)
        if w.start + grace_s + GRACE_SLACK_S < m.at < w.end
    )
    found.refused_while_closed = prop.refused_wide
    found.local_wagers_during_cuts = sum(
        1
        for at in prop.local_wagers
        for w in timeline.windows
        if w.site == site and w.start <= at <= w.end
    )
    reconciliations = central.reconciled.get(site, [])
    found.reconciliations = len(reconciliations)
    found.reconciled_through = central.reconciled_through(site)
    found.reconciled = found.reconciled_through == prop.seq and all(
        ok for *_, ok, _ in reconciliations
    )
    found.gate_closings = sum(1 for _, is_open, *_ in prop.statuses if not is_open)
    _reopenings(found, prop, central)
    found.gate_open_at_end = prop.is_open
    found.faults = dict(prop.faults)
    found.ids_reused = prop.faults[SEQUENCE_REUSED]
    _ack_lags(found, prop, central, timeline)
    found.problems = _problems(found, prop, central)
    return found


def _reopenings(found: SiteFindings, prop: PropertyJournal, central: CentralJournal) -> None:
    """Count the reopenings journaled before central matched the chain as it was at the closing.

    docs/wide-area.md, "A cut WAN"; Michigan R 432.1841: amounts reconciled on restore.
    """
    matched = [(at, through) for at, through, ok, _ in central.reconciled.get(prop.site, []) if ok]
    closing: tuple[float, int] | None = None
    for at, is_open, _, seq in prop.statuses:
        if not is_open:
            closing = (at, seq)
            continue
        if closing is None:
            continue
        covered = [t for t, through in matched if through >= closing[1]]
        if closing[1] and (not covered or min(covered) > at):  # a chain of none: nothing owed
            found.reopened_before_reconciled += 1
            until = min(covered, default=float("inf"))
            found.wagers_before_reconciled += sum(
                1 for m in prop.messages.values() if m.kind == "contribution" and at <= m.at < until
            )
        closing = None


def _ack_lags(
    found: SiteFindings, prop: PropertyJournal, central: CentralJournal, timeline: Timeline
) -> None:
    lags: list[tuple[float, bool]] = []
    for message in prop.messages.values():
        at = central.applied_at.get((prop.site, message.site_seq))
        if at is not None and not timeline.stepped(message.at, at):
            lags.append((at - message.at, timeline.cut_delayed(prop.site, message.at, at)))
    found.worst_ack_lag_s, found.worst_ack_lag_uncut_s, found.ack_lag_uncut_p50_s = _figures(lags)


def _figures(lags: list[tuple[float, bool]]) -> tuple[float | None, float | None, float | None]:
    """The worst lag, the worst no cut delayed, and the median of those."""
    uncut = [lag for lag, cut in lags if not cut]
    worst = max((lag for lag, _ in lags), default=None)
    return worst, max(uncut, default=None), statistics.median(uncut) if uncut else None


def _problems(found: SiteFindings, prop: PropertyJournal, central: CentralJournal) -> list[str]:
    problems = []
    counts = (
        "contributions_lost", "claims_lost", "contributions_applied_twice",
        "wide_area_hits_awarded_twice", "hits_unpaid", "wagers_while_closed", "wagers_past_grace",
        "reopened_before_reconciled", "wagers_before_reconciled", "ids_reused",
    )  # fmt: skip
    problems += [f"{name} {getattr(found, name)}" for name in counts if getattr(found, name)]
    if found.cents_wagered != found.cents_at_central:
        problems.append(
            f"wagered {found.cents_wagered} cents, central fed {found.cents_at_central}"
        )
    if found.central_through != prop.seq:
        problems.append(f"central applied through {found.central_through}, the chain is {prop.seq}")
    if not found.reconciled:
        problems.append(
            f"reconciled through {found.reconciled_through} of {prop.seq}: "
            f"{[r for r in central.reconciled.get(prop.site, []) if not r[2]]}"
        )
    if not found.gate_open_at_end:
        problems.append(f"the gate stayed closed: {prop.statuses[-1:]}")
    problems += [f"refused: {r}" for r in central.refused if r.site == prop.site]
    problems += [
        f"central refused {event_id}: {reason}"
        for event_id, reason in central.rejected
        if event_id.startswith(f"site/{prop.site}/")
    ]
    return problems


@dataclass(frozen=True)
class MeterSeen:
    """A meter a sign applied: where, when, its (epoch, seq) and central's commit time."""

    where: str
    t: float
    epoch: int
    seq: int
    at: float


def read_facts(path: Path) -> list[dict[str, Any]]:
    """``meters.jsonl`` (the floor's signs), in the order written."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def read_meters(path: Path) -> list[MeterSeen]:
    """The meters the floor's signs applied, in the order written."""
    return [
        MeterSeen(fact["where"], fact["t"], fact["epoch"], fact["seq"], seconds(str(fact["at"])))
        for fact in read_facts(path)
        if "open" not in fact  # a pool's status (support.widearea.wan.signs)
    ]


def meter_lags(found: SiteFindings, seen: Sequence[MeterSeen], timeline: Timeline) -> None:
    """The worst delay from central's commit of a meter to the property's sign showing it.

    Or a newer one: a sign that missed a meter shows the next. Over the whole run, and over
    the meters no cut of the property delayed.
    """
    central = [m for m in seen if m.where == "central"]
    shown = [m for m in seen if m.where == found.site]
    found.meters_seen = len(shown)
    if not shown:
        return
    lags: list[tuple[float, bool]] = []
    for meter in central:
        first = next((m for m in shown if (m.epoch, m.seq) >= (meter.epoch, meter.seq)), None)
        if first is not None and not timeline.stepped(meter.at, first.t):
            cut = timeline.cut_delayed(found.site, meter.at, first.t)
            lags.append((first.t - meter.at, cut))
    figures = _figures(lags)
    found.worst_meter_lag_s, found.worst_meter_lag_uncut_s, found.meter_lag_uncut_p50_s = figures
