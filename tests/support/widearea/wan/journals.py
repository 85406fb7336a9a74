"""The three journals as they grow, read-only: what each property queued and central applied.

Each controller writes its own SQLite journal; the harness opens it read-only and reads only
the rows added since it last looked (:func:`controller.journal.sqlite.rows.read_rows`), folding them
into what the checks need (:mod:`support.widearea.wan.checks`):

* **a property** (:class:`PropertyJournal`): every message of its chain (the
  ``SiteMessageQueued`` effects, with the row's time), its gate's openings and closings
  (``WideAreaStatus``), the contributions journaled while it was closed (there must be none),
  the progressive wagers it refused, the awards it paid (``PayoutMade`` of a
  ``WideAreaAwarded`` row, per claim), the rounds each table closed, and the rounds locked
  with a wide-area wager the round before a rigged one (a claim follows that table's next),
  and the faults it journaled;
* **central** (:class:`CentralJournal`): each property's messages applied (``SiteReported``
  rows, by ``site_seq``) and when, the contributions they fed into the pool, the awards made
  per claim (``AwardMade``), each reconciliation (``SiteReconciled``), every refusal and halt,
  and the faults it journaled.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from controller.effects import Contributed, PayoutMade, RoundClosed, RoundStarted, WagerRefused
from controller.events import FaultRecorded
from controller.journal.sqlite.rows import read_rows
from controller.ports import APPLIED
from controller.wide_effects import (
    AwardMade,
    SiteMessageQueued,
    SiteReconciled,
    SiteRefused,
    WideAreaStatus,
)
from controller.wide_events import SiteReported, WideAreaAwarded
from controller.widearea.messages import HitClaim

if TYPE_CHECKING:
    from pathlib import Path

    from controller.journal.rows import Row


def seconds(at: str) -> float:
    """A journal time (UTC, ISO 8601) as seconds since the epoch."""
    return datetime.fromisoformat(at).timestamp()


class Tail:
    """A journal file read as it grows, read-only: the rows since the last look."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.after = 0
        self._connection: sqlite3.Connection | None = None

    def rows(self) -> list[Row]:
        """The rows committed since the last call, in order."""
        if self._connection is None:
            self._connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        found = list(read_rows(self._connection, self.after))
        if found:
            self.after = int(found[-1].values["seq"])
        return found

    def close(self) -> None:
        """Close the file."""
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None


@dataclass(frozen=True)
class Queued:
    """One message of a property's chain, as its journal queued it."""

    site_seq: int
    kind: str
    """``contribution`` or ``hit``."""
    at: float
    """The row's time: when the property journaled it."""
    where: tuple[str, str, int]
    """The table, round and seat."""
    cents: int
    """A contribution's wager (0 for a hit claim)."""


@dataclass
class PropertyJournal:
    """A property's journal, folded (module docstring)."""

    site: str
    tail: Tail
    wide_tables: frozenset[str]
    hit_every: int
    messages: dict[int, Queued] = field(default_factory=dict)
    is_open: bool = False
    statuses: list[tuple[float, bool, str, int]] = field(default_factory=list)
    """Each opening and closing: (time, open, reason, the chain's last ``site_seq`` then)."""
    while_closed: list[int] = field(default_factory=list)
    """The ``site_seq`` of each contribution journaled while the gate was closed."""
    refused_wide: int = 0
    """Progressive wagers on central's pool refused (the gate closed)."""
    paid: Counter[int] = field(default_factory=Counter)
    """Per hit claim's ``site_seq``, the seats paid from central's award."""
    rounds: Counter[str] = field(default_factory=Counter)
    """Rounds each table closed."""
    before_rigged: list[tuple[int, str, str]] = field(default_factory=list)
    """(row, table, round) of each round locked with a wide-area wager the round before a
    rigged one: that table's next round deals a jackpot hand, claimed when it settles."""
    local_wagers: list[float] = field(default_factory=list)
    """When each progressive wager on the local pool was journaled."""
    announced: set[str] = field(default_factory=set)
    """Tables whose MQTT ``online`` status was journaled: the controller hears them."""
    faults: Counter[str] = field(default_factory=Counter)
    """Faults journaled, by reason (``sequence-reused``: an id reused with other content)."""

    @property
    def seq(self) -> int:
        """The chain's last ``site_seq``."""
        return max(self.messages, default=0)

    @property
    def claims(self) -> list[Queued]:
        """Its hit claims, in order."""
        return [m for m in self.messages.values() if m.kind == "hit"]

    @property
    def held(self) -> list[int]:
        """The claims no award has paid yet."""
        return [claim.site_seq for claim in self.claims if not self.paid[claim.site_seq]]

    def update(self) -> None:
        """Fold the rows added since the last look."""
        for row in self.tail.rows():
            if row.values["outcome"] == APPLIED and row.effects is not None:
                self._fold(row)

    def _fold(self, row: Row) -> None:
        at = seconds(str(row.values["at"]))
        table, status, _ = str(row.values["event_id"]).partition("/status/mqtt/")
        if status:
            self.announced.add(table)
        if isinstance(row.event, FaultRecorded):
            self.faults[row.event.reason] += 1
        queued = 0
        for effect in row.effects or ():
            if isinstance(effect, SiteMessageQueued):
                queued += 1
                self._queued(effect, at)
            elif isinstance(effect, WideAreaStatus):
                self.is_open = effect.open
                self.statuses.append((at, effect.open, effect.reason, self.seq))
            elif isinstance(effect, WagerRefused):
                wide = effect.table_id in self.wide_tables and effect.spot == "progressive"
                self.refused_wide += wide
            elif isinstance(effect, PayoutMade) and isinstance(row.event, WideAreaAwarded):
                self.paid[row.event.award.claim_seq] += 1
            elif isinstance(effect, RoundClosed):
                self.rounds[effect.table_id] += 1
            elif isinstance(effect, Contributed):
                self.local_wagers.append(at)
        for effect in row.effects or ():
            if isinstance(effect, RoundStarted) and queued and self._before_rigged(effect.round_id):
                entry = (int(row.values["seq"]), effect.table_id, effect.round_id)
                self.before_rigged.append(entry)

    def _queued(self, effect: SiteMessageQueued, at: float) -> None:
        message = effect.message
        body = message.body
        kind = "hit" if isinstance(body, HitClaim) else "contribution"
        cents = 0 if isinstance(body, HitClaim) else body.wager_cents
        where = (body.table_id, body.round_id, body.seat)
        self.messages[message.site_seq] = Queued(message.site_seq, kind, at, where, cents)
        if kind == "contribution" and not self.is_open:
            self.while_closed.append(message.site_seq)

    def _before_rigged(self, round_id: str) -> bool:
        """Whether the floor rigs the next round (:mod:`.floor`: every ``hit_every``-th)."""
        number = round_id.rpartition("-")[2]
        rigged = self.hit_every - 1
        return number.isdigit() and self.hit_every > 0 and int(number) % self.hit_every == rigged


@dataclass
class CentralJournal:
    """Central's journal, folded (module docstring)."""

    tail: Tail
    applied: dict[str, Counter[int]] = field(default_factory=dict)
    """Per property, how many times each ``site_seq`` was applied (once, or it is a bug)."""
    applied_at: dict[tuple[str, int], float] = field(default_factory=dict)
    contributed: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    """Per (central's table ``<site>/<table>``, round, seat), contributions into the pool."""
    contributed_cents: Counter[str] = field(default_factory=Counter)
    """Per property, the cents its contributions fed into the pool."""
    awards: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Per (property, claim ``site_seq``), the awards made."""
    awarded_at: dict[tuple[str, int], float] = field(default_factory=dict)
    reconciled: dict[str, list[tuple[float, int, bool, list[str]]]] = field(default_factory=dict)
    """Per property, each reconciliation: (time, through, matched, problems)."""
    refused: list[SiteRefused] = field(default_factory=list)
    """Messages refused (a forgery, or a property's own break: then its link halts)."""
    rejected: list[tuple[str, str]] = field(default_factory=list)
    """Rows of a property's messages or totals the ledger refused: (id, reason)."""
    faults: Counter[str] = field(default_factory=Counter)
    """Faults journaled, by reason."""

    def through(self, site: str) -> int:
        """The last ``site_seq`` of ``site`` applied in order from 1 (0: none)."""
        seqs = self.applied.get(site, Counter())
        through = 0
        while seqs[through + 1]:
            through += 1
        return through

    def reconciled_through(self, site: str) -> int:
        """The ``site_seq`` of ``site``'s last matched reconciliation (0: none)."""
        matched = [through for _, through, ok, _ in self.reconciled.get(site, []) if ok]
        return max(matched, default=0)

    def update(self) -> None:
        """Fold the rows added since the last look."""
        for row in self.tail.rows():
            kind = str(row.values["kind"])
            if row.values["outcome"] != APPLIED:
                if kind.startswith("site-"):
                    self.rejected.append((str(row.values["event_id"]), str(row.values["reason"])))
                continue
            self._fold(row)

    def _fold(self, row: Row) -> None:
        at = seconds(str(row.values["at"]))
        event = row.event
        if isinstance(event, FaultRecorded):
            self.faults[event.reason] += 1
        if isinstance(event, SiteReported):
            message = event.message
            self.applied.setdefault(message.site, Counter())[message.site_seq] += 1
            self.applied_at[(message.site, message.site_seq)] = at
        for effect in row.effects or ():
            if isinstance(effect, Contributed) and isinstance(event, SiteReported):
                self.contributed[(effect.table_id, effect.round_id, effect.seat)] += 1
                self.contributed_cents[event.message.site] += effect.wager_cents
            elif isinstance(effect, AwardMade):
                self.awards[(effect.site, effect.claim_seq)] += 1
                self.awarded_at[(effect.site, effect.claim_seq)] = at
            elif isinstance(effect, SiteReconciled):
                entry = (at, effect.through, effect.matched, list(effect.problems))
                self.reconciled.setdefault(effect.site, []).append(entry)
            elif isinstance(effect, SiteRefused):
                self.refused.append(effect)
