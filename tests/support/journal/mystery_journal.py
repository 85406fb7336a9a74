"""A real journal file whose four-level pool's grand is a mystery level that hits.

The pool of tests/support/rules/mystery_paytable.py (the grand from $10 to $12 at 50 cents a $5
wager, so it hits within four wagers) on one table; the journal's identity made by its founding
manager (tests/support/ledger/approvals.py); the in-process keeper draws each trigger and is asked
after every wager, as the daemon asks it (controller/runtime/mystery_watch.py), its reveal journaled
and the next draw made at once. :class:`MysteryJournal` keeps what it journaled (each draw's
row and statement, each reveal's row, the row of each wager) for a test to hold a report to.
Every row is dated at least a millisecond after the one before, so a period can start at any row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from math import floor
from typing import TYPE_CHECKING

from controller.clock import utc_iso
from controller.events import (
    BetSensed,
    BetsLocked,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
)
from controller.ledger_journal.sqlite import Journal
from controller.mystery.core import DrawRequest, Meter
from controller.mystery.keeper import LocalKeeper, Query
from controller.mystery_events import MysteryDrawn, MysteryRevealed
from controller.provenances import DAEMON
from controller.security.controller_key import ControllerKey
from support.ledger.approvals import Site, now
from support.rules.mystery_paytable import MYSTERY_PAYTABLE

if TYPE_CHECKING:
    from fractions import Fraction
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.mystery.core import Drawn, Reveal

GRAND = "stax.grand"
DEALER = ["2c", "3d", "5h", "8s", "9c", "Jd", "Kc"]
NOTHING = (
    ["2d", "5c", "8d", "Tc", "Qc", "3h", "6s"],
    ["4c", "7d", "9h", "Js", "Ks", "2h", "6d"],
    ["4s", "7c", "9d", "Th", "Qd", "3c", "5s"],
)
"""Three seats' hands that pay nothing, none sharing a card with :data:`DEALER`'s."""
TABLE = "t1"
WAGER_CENTS = 500


@dataclass(frozen=True, slots=True)
class Journaled:
    """A row this rig journaled: its number and time."""

    seq: int
    at: str


@dataclass
class MysteryJournal:
    """The journal file, its keeper, and every draw, reveal and wager it journaled."""

    path: Path
    journal: Journal
    site: Site
    key: ControllerKey = field(default_factory=ControllerKey.generate)
    draws: list[tuple[Journaled, Drawn]] = field(default_factory=list)
    reveals: list[tuple[Journaled, Reveal]] = field(default_factory=list)
    wagers: list[tuple[Journaled, str]] = field(default_factory=list)
    """Each wager's row and round."""
    last: str = ""
    asked: Meter | None = None

    def __post_init__(self) -> None:
        self.keeper = LocalKeeper(self.key)

    def at(self) -> str:
        """The next row's time: now, and never at or before the row before."""
        moment = datetime.fromisoformat(now())
        if self.last:
            moment = max(moment, datetime.fromisoformat(self.last) + timedelta(milliseconds=1))
        self.last = utc_iso(moment)
        return self.last

    def append(self, event: AnyEvent, provenance: str | None = None) -> Journaled:
        """Journal ``event``; it must be applied.

        ``provenance``: who wrote it (a device's input comes from the daemon's intake on a
        signed journal: :data:`~controller.provenances.DAEMON`).
        """
        receipt = self.journal.append(event, provenance=provenance)
        assert receipt.applied, (event, receipt.reason)
        return Journaled(receipt.seq, event.at)

    def draw(self) -> Drawn:
        """The grand's next draw, made by the keeper and journaled."""
        binding = self.journal.state.binding
        assert binding is not None
        number = self.journal.state.pools[GRAND].draws + 1
        request = DrawRequest(
            "c1", binding.journal, GRAND, "grand", number, 1_000, 1_200, self.key.key_id, self.at()
        )
        drawn = self.keeper.draw(request)
        row = self.append(MysteryDrawn(f"mystery/{GRAND}/{number}/drawn", self.at(), drawn))
        self.draws.append((row, drawn))
        self.asked = None
        return drawn

    def wager(self) -> Reveal | None:
        """One $5 wager in a round of its own, then the keeper asked; a reveal journaled."""
        round_id = f"r{len(self.wagers) + 1}"
        locked = WagerLocked(
            f"{round_id}-1", self.at(), TABLE, round_id, 1, "progressive", WAGER_CENTS
        )
        self.wagers.append((self.append(self.site.sign(locked, "sup1")), round_id))
        return self.ask()

    def round_of(self, seats: int) -> Reveal | None:
        """One round of ``seats`` $5 wagers sensed and locked at once, then the keeper asked.

        The lock is one event: the level is fed seat by seat and the keeper asked once, at the
        meter after the last seat (controller/runtime/mystery_watch.py).
        """
        number = len(self.wagers) + 1
        round_id = f"r{number}"
        for seat in range(1, seats + 1):
            sensed = number * 10 + seat
            sensed_bet = BetSensed(
                f"{TABLE}/s/{sensed}", self.at(), TABLE, "s", sensed, seat, "progressive", True,
                WAGER_CENTS,
            )  # fmt: skip
            self.append(sensed_bet, DAEMON)
        locked = BetsLocked(f"{TABLE}/c/{number}", self.at(), TABLE, "c", number, round_id)
        self.wagers.append((self.append(locked, DAEMON), round_id))
        reveal = self.ask()
        hands = {str(seat): NOTHING[seat - 1] for seat in range(1, seats + 1)}
        settled = RoundSettled(f"{round_id}-settled", self.at(), TABLE, round_id, DEALER, hands)
        self.append(self.site.sign(settled, "sup1"))  # a supervisor keys the cards in
        return reveal

    def ask(self) -> Reveal | None:
        """The keeper asked about the grand's meter; a reveal journaled, the next draw made."""
        pool = self.journal.state.pools[GRAND]
        assert pool.draw is not None
        binding = self.journal.state.binding
        assert binding is not None
        meter = exact_meter(pool.meter)
        query = Query("c1", binding.journal, GRAND, "grand", pool.draw.draw, meter)
        verdict = self.keeper.check(query, self.asked)
        self.asked = meter
        if verdict.reveal is None:
            return None
        event_id = f"mystery/{GRAND}/{pool.draw.draw}/revealed"
        row = self.append(MysteryRevealed(event_id, self.at(), verdict.reveal))
        self.reveals.append((row, verdict.reveal))
        self.draw()
        return verdict.reveal

    def until_hits(self, hits: int) -> None:
        """Wagers until the grand has hit ``hits`` times in all."""
        for _ in range(20 * hits):  # each hit takes at most four wagers
            if len(self.reveals) >= hits:
                return
            self.wager()
        raise AssertionError("the grand did not hit")  # pragma: no cover


def exact_meter(value: Fraction) -> Meter:
    whole = floor(value)
    part = value - whole
    return Meter(whole, part.numerator, part.denominator)


def opening(at: str, spill_to: str = "stax.major") -> list[AnyEvent]:
    """The pool's four levels and its table, as the configuration would journal them.

    ``spill_to``: where the grand's amount past its trigger goes ("": its own overflow).
    """
    grand = PoolOpened(
        "open-grand", at, GRAND, "house-mystery", 1_000, Decimal("0.10"), Decimal("0.01"),
        must_hit_by_cents=1_200, spill_to=spill_to,
    )  # fmt: skip
    others = [
        PoolOpened(f"open-{name}", at, f"stax.{name}", "house-mystery", seed, Decimal(rate))
        for name, seed, rate in (
            ("major", 100_000, "0.03"),
            ("minor", 25_000, "0.02"),
            ("mini", 15_000, "0.01"),
        )
    ]
    table = TableConfigured(
        "table-t1", at, TABLE, {"house-mystery": MYSTERY_PAYTABLE}, progressive="house-mystery",
        pool_id="stax", envy_includes_dealer=False, verification_cents=100_000,
    )  # fmt: skip
    return [grand, *others, table]


def mystery_journal(path: Path, spill_to: str = "stax.major") -> MysteryJournal:
    """The journal at ``path`` open, its pool and table configured, its identity made.

    Close it (``floor.journal.close()``) before a command reads the file.
    """
    journal = Journal(path)
    at = now()
    for event in opening(at, spill_to):
        assert journal.append(event).applied
    site = Site.create(journal)  # the journal's identity, which every draw names
    return MysteryJournal(path, journal, site, last=now())
