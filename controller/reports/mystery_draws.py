"""Each mystery level's draws over a period: the commitments, and the triggers once revealed.

A mystery level (docs/rules.md, "Mystery levels: the sealed trigger") journals each draw as
the controller's ``mystery-drawn`` row: the level's range and the commitment to its trigger,
never the trigger. At the hit, ``mystery-revealed`` journals the trigger and its nonce. Over a
period (a run of rows, controller/reports/period.py) the report lists every draw open during
it: drawn in it, or drawn before it and revealed in it or still open at its close. A draw
revealed after the period's close is open in that period's report, as it was then, so the
same rows always make the same report.

Each reveal is checked as anyone checks it, by :func:`controller.mystery.core.hit_holds` over
the level's meter after each contribution since its draw (the ``balances`` effect after each
``contributed`` one): the trigger and nonce open the commitment, the trigger lies in ``[floor,
ceiling)``, and the hit is the first contribution to reach it, whose row this names. The draw
statement's signature is ``jackpotd verify --key``'s to check (check 1): the report holds no
key. Only the journal's rows are read; the sealed draws are the keeper's, and nothing here
could show a trigger before its reveal is journaled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.effects import Balances, Contributed, MeterPaid, decode_effects, fraction_text
from controller.events import decode_event
from controller.journal import JournalError
from controller.mystery.core import first_reaching, hit_holds
from controller.mystery_events import MysteryDrawn, MysteryRevealed
from controller.runtime.mystery_watch import meter_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import AnyEvent
    from controller.mystery.core import Drawn, Meter, Reveal

DRAWN: Final = "mystery-drawn"
REVEALED: Final = "mystery-revealed"
_CONTRIBUTED: Final = '"contributed"'
"""How a row's effects text names a contribution: only such rows are decoded for the meters."""


@dataclass(frozen=True, slots=True)
class Feed:
    """One contribution to a level with an open draw: its row, its wager, the meter after it."""

    seq: int
    table_id: str
    round_id: str
    seat: int
    meter: Meter


@dataclass(frozen=True, slots=True)
class RevealRecord:
    """A draw's trigger revealed at its hit, and whether the reveal checks."""

    seq: int
    at: str
    reveal: Reveal
    paid_cents: int | None
    """What the level paid at the reveal's row (None: the row paid nothing from it)."""
    hit: Feed | None
    """The first contribution since the draw to reach the trigger (None: none did)."""
    problem: str | None
    """Why the reveal does not check (None: it checks)."""


@dataclass(slots=True)
class DrawRecord:
    """One draw as the journal records it: its row, its public statement, its reveal if any."""

    seq: int
    at: str
    drawn: Drawn
    revealed: RevealRecord | None = None
    feeds: list[Feed] = field(default_factory=list)


def _event(row: dict[str, Any]) -> AnyEvent:
    try:
        return decode_event(row["event"])
    except msgspec.MsgspecError as error:
        raise JournalError(f"row {row['seq']}: {error}") from error


def mystery_draws(
    rows: Sequence[dict[str, Any]], begin: int, stop: int
) -> dict[str, list[DrawRecord]]:
    """Each mystery level's draws open during rows ``begin`` to ``stop`` (list indexes).

    ``rows`` are in journal order; the rows before ``begin`` give the draws carried into the
    period and their contributions. Levels by their ledger id (``POOL.LEVEL``), each with its
    draws in order; a journal without a mystery draw up to ``stop`` gives none.
    """
    levels: dict[str, list[DrawRecord]] = {}
    open_draws: dict[str, DrawRecord] = {}
    for index, row in enumerate(rows[:stop]):
        if row["outcome"] != "applied":
            continue  # a refused row moves nothing: a refused reveal leaves its draw open
        kind = row["kind"]
        if kind == DRAWN:
            event = _event(row)
            if isinstance(event, MysteryDrawn):
                record = DrawRecord(int(row["seq"]), str(row["at"]), event.drawn)
                levels.setdefault(event.drawn.pool, []).append(record)
                open_draws[event.drawn.pool] = record
        elif kind == REVEALED:
            event = _event(row)
            if not isinstance(event, MysteryRevealed):
                continue
            spent = open_draws.pop(event.reveal.pool, None)
            if spent is not None:
                spent.revealed = _revealed(row, spent, event.reveal)
                spent.feeds = []  # only the check needed them
                if index < begin:  # spent before the period opened: not one of its draws
                    levels[event.reveal.pool].remove(spent)
        elif open_draws and _CONTRIBUTED in row["effects"]:
            _fed(row, open_draws)
    return levels


def _fed(row: dict[str, Any], open_draws: dict[str, DrawRecord]) -> None:
    """The row's contributions to levels with an open draw, each with the meter it left."""
    contributed: dict[str, Contributed] = {}
    for effect in decode_effects(row["effects"]):
        if isinstance(effect, Contributed) and effect.pool_id in open_draws:
            contributed[effect.pool_id] = effect
        elif isinstance(effect, Balances) and effect.pool_id in contributed:
            # A contribution's balances follow it: the level's meter after that wager.
            share = contributed.pop(effect.pool_id)
            meter = meter_of(Fraction(effect.meter))
            feed = Feed(int(row["seq"]), share.table_id, share.round_id, share.seat, meter)
            open_draws[effect.pool_id].feeds.append(feed)


def _revealed(row: dict[str, Any], record: DrawRecord, reveal: Reveal) -> RevealRecord:
    """The reveal, checked against its draw and the meters since it (docs/rules.md § 10)."""
    meters = [feed.meter for feed in record.feeds]
    problem = hit_holds(record.drawn, reveal, asked_meters(record.feeds))
    first = first_reaching(meters, reveal.trigger) if type(reveal.trigger) is int else None
    paid = [
        effect.paid_cents
        for effect in decode_effects(row["effects"])
        if isinstance(effect, MeterPaid) and effect.pool_id == reveal.pool
    ]
    return RevealRecord(
        int(row["seq"]), str(row["at"]), reveal, sum(paid) if paid else None,
        None if first is None else record.feeds[first], problem,
    )  # fmt: skip


def asked_meters(feeds: Sequence[Feed]) -> list[Meter]:
    """The meter after each row that fed the level: what the keeper was asked at.

    A lock of several seats is one event, one row: it feeds the level seat by seat and the
    keeper is asked once, at the meter after its last seat (controller/runtime/mystery_watch.py),
    so the reveal names that meter, and the winner is the lock's first seat to reach the
    trigger (the report names it from the contributions themselves).
    """
    asked: list[Meter] = []
    for index, feed in enumerate(feeds):
        if index + 1 == len(feeds) or feeds[index + 1].seq != feed.seq:
            asked.append(feed.meter)
    return asked


def draw_document(record: DrawRecord) -> dict[str, Any]:
    """A draw as the JSON report gives it: a draw still open has no trigger, only its commitment."""
    drawn = record.drawn
    document: dict[str, Any] = {
        "draw": drawn.draw,
        "seq": record.seq,
        "at": record.at,
        "floor_cents": drawn.floor,
        "ceiling_cents": drawn.ceiling,
        "commitment": drawn.commitment,
        "revealed": None,
    }
    found = record.revealed
    if found is not None:
        hit = found.hit
        document["revealed"] = {
            "seq": found.seq,
            "at": found.at,
            "trigger_cents": found.reveal.trigger,
            "nonce": found.reveal.nonce,
            "hit_meter": fraction_text(found.reveal.hit.exact()),
            "hit": None
            if hit is None
            else {"seq": hit.seq, "table": hit.table_id, "round": hit.round_id, "seat": hit.seat},
            "paid_cents": found.paid_cents,
            "checks": found.problem is None,
            "problem": found.problem,
        }
    return document


def levels_document(levels: dict[str, list[DrawRecord]]) -> list[dict[str, Any]]:
    """Every level's draws as the JSON report gives them, the levels by id."""
    return [
        {"level": level, "draws": [draw_document(record) for record in draws]}
        for level, draws in sorted(levels.items())
    ]
