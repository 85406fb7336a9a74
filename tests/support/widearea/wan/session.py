"""The WAN test's session: play, cut each property's link to central and heal it, drain, check.

:func:`wan_session` starts the lab (:mod:`support.widearea.wan.lab`) and the floor
(:mod:`support.widearea.wan.floor`) and has the tables play. :meth:`WanSession.cut` cuts one or both
properties' WAN links (:class:`support.ha.tcp_proxy.LinkProxy`: ``stall``, a partition that
loses nothing, or ``reset``, every connection closed), holds the cut, heals it and waits until
every property's gate is open again and central has applied its chain. A cut may be made
during a wide-area hit: ``hit-lock`` cuts the moment a property journals the lock of the round
before a rigged one (the rigged round then locks, settles and claims its hit, held, while the
link is down), ``hit-claim`` the moment a property journals a claim (racing its sending,
central's award and the award's return). :meth:`WanSession.drain` stops the tables, waits
until central has applied every message, reconnects each property once more (its totals are
reported on each connection: the last reconciliation then covers its whole chain) and waits
until each is reconciled and every hit paid; :meth:`WanSession.findings` checks the journals
(:mod:`support.widearea.wan.checks`). Every wait is bounded (the harness looks at the journals every
:data:`LOOK_S`: the processes tell it nothing), and every process is stopped whatever happens.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from controller.journal.identity import SEQUENCE_REUSED
from support.widearea.wan.checks import Timeline, Window, meter_lags, read_meters, site_findings
from support.widearea.wan.config import CENTRAL_SITE, HOST, POOL
from support.widearea.wan.floor import Floor, FloorProperty, FloorSettings
from support.widearea.wan.journals import CentralJournal, PropertyJournal, Tail
from support.widearea.wan.lab import LabSettings, running_lab
from support.widearea.wan.signs import closings_shown, read_statuses

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from support.ha.tcp_proxy import Cut
    from support.widearea.wan.checks import SiteFindings
    from support.widearea.wan.lab import Lab

During = Literal["", "hit-lock", "hit-claim"]

CLOCK_STEP_S: Final = 0.25
"""A change this large of the wall clock against the monotonic one, between two looks, is a
step of the clock (a virtual machine's host, NTP): the journals' times stepped too."""
LOOK_S: Final = 0.05
"""How often the harness reads the journals while it waits."""
WAIT_S: Final = 60.0
"""The bound on any one wait; a passing run takes a small fraction of it."""
ROUND_PAUSE_S: Final = 1.0
HIT_EVERY: Final = 4
"""A rigged jackpot hand every fourth round of each table: a wide-area hit every few seconds."""
LAST_HEARD: Final = "jackpotd_wide_area_central_last_heard_timestamp_seconds"
"""A property's metric: when its uplink last heard central (an accepted acknowledgement)."""
SILENT: Final = "central not heard"
"""How a property's gate says it closed for central's silence past the grace."""
SHORT_S: Final = 2.0
"""A short cut: well within the grace, the gate stays open."""


@dataclass(frozen=True)
class CutPlan:
    """One cut: which properties, how, for how long, and whether during a hit."""

    sites: tuple[str, ...]
    how: Cut
    hold_s: float
    during: During = ""


@dataclass
class CutRecord:
    """What a cut did: its plan, when it began and healed, the hits it caught."""

    sites: list[str]
    how: str
    hold_s: float
    during: str
    start: float = 0.0
    healed: float = 0.0
    recovered: float = 0.0
    """When every gate was open again and central through every chain."""
    clock_step_s: float = 0.0
    """How far the wall clock stepped during the cut: its times are not to be trusted."""
    claims: list[str] = field(default_factory=list)
    """``<site>/<site_seq>`` of each hit claim journaled during the cut."""
    caught: str = ""
    """For ``hit-claim``: how far the claim had got when the link was cut."""
    closed_after_s: dict[str, float | None] = field(default_factory=dict)
    """Per property, from the cut to its gate's journaled closing (None: it stayed open)."""
    reopened_after_s: dict[str, float | None] = field(default_factory=dict)
    """Per property whose gate closed, from the heal to its journaled reopening."""


@dataclass
class WanSession:
    """The lab, the floor, the three journals as they grow, and the cuts made."""

    lab: Lab
    floor: Floor
    properties: dict[str, PropertyJournal]
    central: CentralJournal
    rng: random.Random
    cuts: list[CutRecord] = field(default_factory=list)
    rounds: dict[str, int] = field(default_factory=dict)
    steps: list[tuple[float, float]] = field(default_factory=list)
    """Each step of the wall clock seen: when (just after it), and how far (seconds)."""
    _offset: float | None = None

    def look(self) -> None:
        """Read what the journals added; fail at once if a process ended; watch the clock."""
        offset = time.time() - time.monotonic()
        if self._offset is not None and abs(offset - self._offset) > CLOCK_STEP_S:
            self.steps.append((time.time(), offset - self._offset))
        self._offset = offset
        self.lab.check_alive()
        for journal in self.properties.values():
            journal.update()
        self.central.update()

    def until(self, reached: Callable[[], bool], what: str, wait_s: float = WAIT_S) -> None:
        """Until ``reached()`` (the journals read again before each try), bounded."""
        deadline = time.monotonic() + wait_s
        while True:
            self.look()
            if reached():
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"not {what} after {wait_s:g} s\n{self.logs()}")
            time.sleep(LOOK_S)  # the journals are files another process writes: look again

    def caught_up(self) -> bool:
        """Every gate open and central through every property's chain."""
        return all(
            prop.is_open and self.central.through(site) == prop.seq
            for site, prop in self.properties.items()
        )

    def play_for(self, seconds: float) -> None:
        """Let the floor play ``seconds`` while the harness reads the journals."""
        deadline = time.monotonic() + seconds
        self.until(lambda: time.monotonic() >= deadline, "played", seconds + WAIT_S)

    def cut(self, plan: CutPlan) -> CutRecord:
        """Cut, hold, heal, and wait until every gate is open and central has caught up."""
        record = CutRecord(list(plan.sites), plan.how, plan.hold_s, plan.during)
        props = [self.properties[site] for site in plan.sites]
        if plan.during == "hit-lock":
            locked = {p.site: len(p.before_rigged) for p in props}
            self.until(
                lambda: any(len(p.before_rigged) > locked[p.site] for p in props),
                "the lock of a round before a rigged one",
            )
        elif plan.during == "hit-claim":
            claims = {p.site: len(p.claims) for p in props}
            self.until(lambda: any(len(p.claims) > claims[p.site] for p in props), "a hit claim")
        record.start = time.time()
        for site in plan.sites:
            self.lab.properties[site].wan.cut(plan.how)
        if plan.during == "hit-lock":  # the rigged round locks and settles while cut
            claims = {p.site: len(p.claims) for p in props}
            self.until(
                lambda: any(len(p.claims) > claims[p.site] for p in props),
                "the rigged round's claim journaled during the cut",
            )
        self.play_for(max(0.0, record.start + plan.hold_s - time.time()))
        for site in plan.sites:
            self.lab.properties[site].wan.heal()
        record.healed = time.time()
        for prop in props:
            record.claims += [
                f"{prop.site}/{claim.site_seq}"
                for claim in prop.claims
                if record.start <= claim.at <= record.healed
            ]
        self.until(self.caught_up, f"healed after {plan}")
        record.recovered = time.time()
        record.clock_step_s = sum(step for when, step in self.steps if when >= record.start)
        if plan.during == "hit-claim":
            record.caught = self._caught(record)
        self._gate_times(record)
        self.cuts.append(record)
        return record

    def _caught(self, record: CutRecord) -> str:
        """How far the claim that triggered a ``hit-claim`` cut had got at the cut."""
        for site in record.sites:
            prop = self.properties[site]
            before = [c for c in prop.claims if c.at <= record.start]
            if not before:
                continue
            claim = before[-1].site_seq
            applied = self.central.applied_at.get((site, claim), float("inf"))
            awarded = self.central.awarded_at.get((site, claim), float("inf"))
            if awarded <= record.start:
                return "awarded at central before the cut"
            if applied <= record.start:
                return "at central before the cut"
            return "not at central at the cut"
        return ""

    def _gate_times(self, record: CutRecord) -> None:
        """From the cut to a closing for silence; from the heal to the gate's last reopening."""
        for site in record.sites:
            after = [s for s in self.properties[site].statuses if s[0] >= record.start]
            silent = next(
                (t for t, is_open, why, _ in after if not is_open and why.startswith(SILENT)), None
            )
            record.closed_after_s[site] = None if silent is None else silent - record.start
            if any(not is_open for _, is_open, *_ in after):
                record.reopened_after_s[site] = after[-1][0] - record.healed

    def drain(self) -> None:
        """Stop the tables; everything applied; a last reconnection each; reconciled, paid."""
        self.rounds = self.floor.stop()
        self.until(self._all_closed, "every round the floor played journaled and settled")
        self.until(self.caught_up, "central through every chain")
        links = {site: prop.wan for site, prop in self.lab.properties.items()}
        before = {site: link.traffic.accepted for site, link in links.items()}
        for link in links.values():  # totals are reported on each connection
            link.cut("reset")
            link.heal()
        self.until(
            lambda: all(link.traffic.accepted > before[site] for site, link in links.items()),
            "every property connected again",
        )
        self.until(self._reconciled, "every property reconciled through its chain, every hit paid")
        self.until(self._heard_since, "every property hearing central after its reconciliation")
        self.floor.signs_open(list(self.properties))

    def _all_closed(self) -> bool:
        return all(
            prop.rounds[table] == self.rounds.get(table, 0)
            for site, prop in self.properties.items()
            for table in [*self.lab.properties[site].tables, self.lab.properties[site].local]
        )

    def _reconciled(self) -> bool:
        return self.caught_up() and all(
            self.central.reconciled_through(site) == prop.seq and not prop.held
            for site, prop in self.properties.items()
        )

    def _heard_since(self) -> bool:
        """Each property heard central a heartbeat after the reconciliation of its chain.

        Every acknowledgement since names it: whatever the gate journaled on the older ones
        heard on reconnecting is behind it, and the gate is open.
        """
        heartbeat_s = self.lab.settings.heartbeat_s
        for site, prop in self.properties.items():
            reconciled = self.central.reconciled.get(site, [])
            covering = [at for at, through, ok, _ in reconciled if ok and through >= prop.seq]
            heard = self.lab.properties[site].controller.metric(LAST_HEARD)
            if not covering or heard is None or heard < min(covering) + 1.5 * heartbeat_s:
                return False
            if not prop.is_open:
                return False
        return True

    def timeline(self) -> Timeline:
        """Every cut of every property, and every step of the clock."""
        windows = [
            Window(site, c.start, c.healed, c.recovered) for c in self.cuts for site in c.sites
        ]
        return Timeline(windows, list(self.steps))

    def findings(self) -> list[SiteFindings]:
        """Each property's figures and problems (support.widearea.wan.checks)."""
        timeline = self.timeline()
        seen = read_meters(self.lab.directory / "meters.jsonl")
        statuses = read_statuses(self.lab.directory / "meters.jsonl")
        found = []
        for prop in self.properties.values():
            each = site_findings(prop, self.central, timeline, self.lab.settings.grace_s)
            meter_lags(each, seen, timeline)
            closings_shown(each, prop, statuses)
            found.append(each)
        return found

    def central_problems(self) -> list[str]:
        """What is wrong in central's journal beyond any one property's figures."""
        reused = self.central.faults[SEQUENCE_REUSED]
        return [f"ids_reused {reused}"] if reused else []

    def logs(self) -> str:
        """Every controller's log tail and the floor's."""
        return self.lab.logs()


@contextlib.contextmanager
def wan_session(
    seed: int, directory: Path | None = None, settings: LabSettings | None = None
) -> Iterator[WanSession]:
    """The lab and the floor running, the floor playing, every gate open; all stopped after.

    Everything is kept in ``directory`` (a new folder under /var/tmp if not given).
    """
    settings = settings or LabSettings()
    directory = directory or Path(tempfile.mkdtemp(prefix="jackpotd-wan-", dir="/var/tmp"))
    with running_lab(directory, settings) as lab:
        floor = Floor(
            FloorSettings(
                meters=directory / "meters.jsonl", host=HOST, seed=seed,
                round_pause_s=ROUND_PAUSE_S, hit_every=HIT_EVERY, heartbeat_s=1.0, wait_s=WAIT_S,
                properties=[
                    FloorProperty(site, p.broker.port, [*p.tables, p.local])
                    for site, p in lab.properties.items()
                ],
                central_site=CENTRAL_SITE, central_port=lab.central_broker.port, pool=POOL,
            )
        )  # fmt: skip
        journals = {
            site: PropertyJournal(site, Tail(p.controller.journal), frozenset(p.tables), HIT_EVERY)
            for site, p in lab.properties.items()
        }
        central = CentralJournal(Tail(lab.central.journal))
        session = WanSession(lab, floor, journals, central, random.Random(seed))  # noqa: S311 - the cuts' order
        try:
            floor.start()
            session.until(
                lambda: all(p.is_open and p.wide_tables <= p.announced for p in journals.values()),
                "every gate open and every table heard",
            )
            floor.play()
            yield session
        finally:
            floor.close()
            for journal in journals.values():
                journal.tail.close()
            central.tail.close()
