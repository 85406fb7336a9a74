"""A mystery level in the ledger: the draw checked, the first wager to reach the trigger paid.

Mich. Admin. Code R 432.1841(2) wants every wager on the level to have the same chance per
cent wagered; the trigger is drawn uniformly to the cent in [seed, must hit by) and sealed
(docs/rules.md, "Mystery levels: the sealed trigger"). These tests play a four-level pool whose
top level is a must-hit-by level through the ledger, with the in-process keeper drawing and
answering as the daemon would ask it, and show each lie refused with nothing moved.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.ledger.approvals import Site
from support.rules.mystery_paytable import MYSTERY_PAYTABLE

from controller.effects import AnyEffect, MeterPaid, PastTrigger
from controller.events import (
    AnyEvent,
    BetSensed,
    BetsLocked,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
)
from controller.ledger.apply import LedgerState, apply
from controller.ledger.codec import pool_from_json, pool_json
from controller.ledger.journal_binding import JournalBinding
from controller.ledger.pool import Pool, PoolTerms
from controller.ledger.state import LedgerError
from controller.ledger_journal.sqlite import Journal, verify
from controller.mystery.core import DrawRequest, Meter, Reveal
from controller.mystery.keeper import LocalKeeper, Query
from controller.mystery_events import MysteryDrawn, MysteryRevealed
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from pathlib import Path


AT = "2026-12-01T18:00:00Z"
JOURNAL = "journal-lab-1"
LEVELS = ("stax.grand", "stax.major", "stax.minor", "stax.mini")
DEALER = ["2c", "3d", "5h", "8s", "9c", "Jd", "Kc"]
HANDS = (
    ["7h", "8h", "9h", "Th", "Jh", "Qh", "Kh"],
    ["As", "Ad", "Ah", "Ac", "Jk", "2s", "4d"],
    ["2d", "5c", "8d", "Tc", "Qc", "3h", "6s"],
)


def opening(spill_to: str = "stax.major") -> list[AnyEvent]:
    """The pool's four levels and one table on it, as the configuration would journal them.

    ``spill_to``: where the grand's amount past its trigger goes ("": its own overflow).
    """
    grand = PoolOpened(
        "open-grand", AT, "stax.grand", "house-mystery", 1_000, Decimal("0.10"),
        Decimal("0.01"), must_hit_by_cents=1_200, spill_to=spill_to,
    )  # fmt: skip
    others = [
        PoolOpened(f"open-{name}", AT, f"stax.{name}", "house-mystery", seed, Decimal(rate))
        for name, seed, rate in (
            ("major", 100_000, "0.03"),
            ("minor", 25_000, "0.02"),
            ("mini", 15_000, "0.01"),
        )
    ]
    table = TableConfigured(
        "table-t1", AT, "t1", {"house-mystery": MYSTERY_PAYTABLE}, progressive="house-mystery",
        pool_id="stax", envy_includes_dealer=False,
    )  # fmt: skip
    return [grand, *others, table]


def exact_meter(value: Fraction) -> Meter:
    whole = floor(value)
    part = value - whole
    return Meter(whole, part.numerator, part.denominator)


class MysteryFloor:
    """The ledger, and the keeper asked after every event that feeds the mystery level."""

    def __init__(self, spill_to: str = "stax.major") -> None:
        self.key = ControllerKey.generate()
        self.keeper = LocalKeeper(self.key)
        self.state = replace(LedgerState(), binding=JournalBinding(JOURNAL))
        self.asked: Meter | None = None
        self.reveals: list[Reveal] = []
        self.effects: tuple[AnyEffect, ...] = ()
        """The effects of the last event applied."""
        self.revealed: tuple[AnyEffect, ...] = ()
        """The effects of the last reveal."""
        self.rows = 0
        for event in opening(spill_to):
            self.apply(event)

    def apply(self, event: AnyEvent) -> None:
        """One event, as the journal would apply it."""
        self.state, self.effects = apply(self.state, event)
        self.rows += 1

    def draw(self) -> MysteryDrawn:
        """The level's next draw, made by the keeper and journaled."""
        pool = self.state.pools["stax.grand"]
        request = DrawRequest(
            "c1", JOURNAL, pool.pool_id, "grand", pool.draws + 1, 1_000, 1_200,
            self.key.key_id, AT,
        )  # fmt: skip
        drawn = MysteryDrawn(f"draw-{request.draw}", AT, self.keeper.draw(request))
        self.apply(drawn)
        self.asked = None
        return drawn

    def wager(self, round_id: str, seat: int) -> None:
        """One wager locked, then the keeper asked about the level's meter after it."""
        self.apply(WagerLocked(f"{round_id}-{seat}", AT, "t1", round_id, seat, "progressive", 500))
        self.ask()

    def ask(self) -> Reveal | None:
        """The keeper asked about the level's meter after the last event; its reveal journaled."""
        pool = self.state.pools["stax.grand"]
        assert pool.draw is not None
        meter = exact_meter(pool.meter)
        query = Query("c1", JOURNAL, pool.pool_id, "grand", pool.draw.draw, meter)
        verdict = self.keeper.check(query, self.asked)
        self.asked = meter
        if verdict.reveal is not None:
            self.apply(MysteryRevealed(f"reveal-{pool.draw.draw}", AT, verdict.reveal))
            self.reveals.append(verdict.reveal)
            self.revealed = self.effects
            self.draw()
        return verdict.reveal


def balanced(state: LedgerState) -> bool:
    return all(
        state.pools[level].money_in() == state.pools[level].money_held_or_paid() for level in LEVELS
    )


def test_a_wager_is_refused_while_the_mystery_level_has_no_draw() -> None:
    floor_ = MysteryFloor()
    before = floor_.state
    with pytest.raises(LedgerError, match=r"stax\.grand is a mystery level with no draw open"):
        apply(before, WagerLocked("w", AT, "t1", "r1", 1, "progressive", 500))
    assert floor_.state.pools == before.pools


def test_r432_1841_the_first_wager_to_reach_the_trigger_wins_exactly_the_trigger() -> None:
    floor_ = MysteryFloor()
    floor_.draw()
    wagers = 0
    while len(floor_.reveals) < 5:
        wagers += 1
        round_id = f"r{wagers}"
        floor_.wager(round_id, 1)
        assert balanced(floor_.state)
    grand = floor_.state.pools["stax.grand"]
    triggers = [reveal.trigger for reveal in floor_.reveals]
    assert all(1_000 <= trigger < 1_200 for trigger in triggers)
    assert grand.paid_cents == sum(triggers)
    assert grand.hits_count == 5
    assert [hit.amount_cents for hit in grand.last_hits] == triggers[::-1]
    assert grand.meter == 1_000  # reseeded to its seed exactly: the next draw's floor
    major = floor_.state.pools["stax.major"]
    assert major.spilled_in == grand.spilled_out > 0  # past the triggers: onto the major
    mystery_pays = [p for p in floor_.state.pending.values() if p.line == "mystery-grand"]
    assert all(p.win_cents in triggers for p in mystery_pays)


def hit_effects(floor_: MysteryFloor) -> tuple[MeterPaid, list[PastTrigger]]:
    """Wagers until the grand hits: its reveal's pay and what it moved past the trigger."""
    floor_.draw()
    for number in range(1, 20):  # the grand hits within four wagers
        floor_.apply(WagerLocked(f"r{number}-1", AT, "t1", f"r{number}", 1, "progressive", 500))
        if floor_.ask() is not None:
            break
    else:  # pragma: no cover
        raise AssertionError("the grand did not hit")
    (paid,) = (effect for effect in floor_.revealed if isinstance(effect, MeterPaid))
    return paid, [effect for effect in floor_.revealed if isinstance(effect, PastTrigger)]


@pytest.mark.parametrize(("spill_to", "onto"), [("stax.major", "stax.major"), ("", "stax.grand")])
def test_the_amount_past_the_trigger_is_an_effect_naming_where_it_went(
    spill_to: str, onto: str
) -> None:
    """docs/money.md, "Mystery levels": the meter past the trigger leaves it as a named flow.

    The level pays its trigger's whole cents; what its meter held past it (its fraction of a
    cent included) leaves the meter, onto the next level's meter or the level's own overflow,
    and the reveal's effects say so, so that a report balances each account by its flows.
    """
    floor_ = MysteryFloor(spill_to)
    paid, passed = hit_effects(floor_)
    past = Fraction(paid.meter_before) - paid.paid_cents
    assert past >= 0
    moved = {(effect.pool_id, effect.level): effect for effect in passed}
    grand = moved.pop(("stax.grand", "stax.grand"))
    if onto == "stax.major":
        (major,) = moved.values()
        assert (major.pool_id, major.level) == ("stax.major", "stax.grand")
        assert (Fraction(grand.meter), Fraction(grand.overflow)) == (-past, Fraction(0))
        assert (Fraction(major.meter), Fraction(major.overflow)) == (past, Fraction(0))
        assert floor_.state.pools["stax.major"].spilled_in == past
    else:
        assert not moved
        assert (Fraction(grand.meter), Fraction(grand.overflow)) == (-past, past)
        assert floor_.state.pools["stax.grand"].overflow == past
    assert balanced(floor_.state)


def test_r432_1841_in_a_round_locked_at_once_the_seat_whose_chip_reached_the_trigger_wins() -> None:
    """One ``BetsLocked`` feeds the level seat by seat; the first seat to reach it wins.

    The keeper, asked once after the event, names the trigger; the winner is the seat whose
    contribution carried the meter to it, wherever it sits in the round, not the first seat.
    """
    floor_ = MysteryFloor()
    floor_.draw()
    winners: list[int] = []
    for number in range(1, 400):  # each seat crosses about a third of the time: bounded
        round_id = f"r{number}"
        for seat in (1, 2, 3):
            sensed = number * 10 + seat
            floor_.apply(
                BetSensed(f"t1/s/{sensed}", AT, "t1", "s", sensed, seat, "progressive", True, 500)
            )
        floor_.apply(BetsLocked(f"t1/c/{number}", AT, "t1", "c", number, round_id))
        fed = floor_.state.pools["stax.grand"].fed
        assert [feed.seat for feed in fed] == [1, 2, 3]  # one event, three contributions
        assert [feed.before for feed in fed[1:]] == [feed.after for feed in fed[:-1]]
        reveal = floor_.ask()
        if reveal is not None:
            crossing = next(feed for feed in fed if feed.after >= reveal.trigger)
            hit = floor_.state.pools["stax.grand"].last_hits[0]
            assert (hit.table_id, hit.seat) == (crossing.table_id, crossing.seat)
            assert crossing.round_id == round_id
            assert hit.amount_cents == reveal.trigger
            winners.append(crossing.seat)
        hands = {str(seat): HANDS[seat % 3] for seat in (1, 2, 3)}
        floor_.apply(RoundSettled(f"{round_id}-settle", AT, "t1", round_id, DEALER, hands))
        assert balanced(floor_.state)
        if {2, 3} <= set(winners):
            break
    assert {2, 3} <= set(winners), winners


@settings(max_examples=15, deadline=None)
@given(plays=st.lists(st.tuples(st.integers(1, 3), st.sampled_from(range(3))), max_size=40))
def test_money_is_conserved_on_every_level_with_mystery_hits_among_hand_hits(
    plays: list[tuple[int, int]],
) -> None:
    floor_ = MysteryFloor()
    floor_.draw()
    for index, (seats, hand) in enumerate(plays):
        round_id = f"r{index}"
        for seat in range(1, seats + 1):
            floor_.wager(round_id, seat)
        hands = {str(seat): HANDS[(hand + seat) % 3] for seat in range(1, seats + 1)}
        floor_.apply(RoundSettled(f"{round_id}-settle", AT, "t1", round_id, DEALER, hands))
        assert balanced(floor_.state)
        for level in LEVELS:
            pool = floor_.state.pools[level]
            assert pool.meter >= pool.terms.seed_cents
        assert floor_.state.pools["stax.grand"].meter < 1_200


def _reached_floor() -> tuple[MysteryFloor, MysteryRevealed]:
    """A floor whose last wager reached the trigger, the reveal not yet journaled."""
    floor_ = MysteryFloor()
    floor_.draw()
    for index in range(1_000):
        floor_.apply(WagerLocked(f"w{index}", AT, "t1", f"r{index}", 1, "progressive", 500))
        pool = floor_.state.pools["stax.grand"]
        assert pool.draw is not None
        query = Query("c1", JOURNAL, pool.pool_id, "grand", pool.draw.draw, exact_meter(pool.meter))
        verdict = floor_.keeper.check(query, floor_.asked)
        floor_.asked = query.meter
        if verdict.reveal is not None:
            return floor_, MysteryRevealed("reveal", AT, verdict.reveal)
    raise AssertionError("the trigger was never reached")  # pragma: no cover


@pytest.mark.parametrize(
    ("lie", "reason"),
    [
        (lambda r: msgspec.structs.replace(r, nonce="00" * 32), "do not open the draw's commit"),
        (lambda r: msgspec.structs.replace(r, trigger=r.trigger - 1), "do not open the draw's"),
        (lambda r: msgspec.structs.replace(r, journal="journal-elsewhere"), "the reveal is of"),
        (lambda r: msgspec.structs.replace(r, draw=2), "the reveal is of draw 2"),
        (lambda r: msgspec.structs.replace(r, hit=Meter(r.hit.cents + 1)), "carried the meter"),
    ],
    ids=["wrong-nonce", "another-trigger", "another-journal", "another-draw", "another-meter"],
)
def test_a_reveal_that_lies_is_refused_and_moves_nothing(lie: object, reason: str) -> None:
    floor_, revealed = _reached_floor()
    assert callable(lie)
    forged = MysteryRevealed("forged", AT, lie(revealed.reveal))
    with pytest.raises(LedgerError, match=reason):
        apply(floor_.state, forged)
    state, _ = apply(floor_.state, revealed)  # the true one is taken
    assert state.pools["stax.grand"].hits_count == 1


def test_a_reveal_after_another_wager_fed_the_level_is_refused() -> None:
    """The controller asks after every event feeding the level: a late reveal is refused."""
    floor_, revealed = _reached_floor()
    later, _ = apply(floor_.state, WagerLocked("late", AT, "t1", "late", 2, "progressive", 500))
    with pytest.raises(LedgerError, match="reached before the last event"):
        apply(later, revealed)


def test_a_draw_for_another_journal_range_or_number_is_refused() -> None:
    floor_ = MysteryFloor()
    pool = floor_.state.pools["stax.grand"]
    good = DrawRequest("c1", JOURNAL, pool.pool_id, "grand", 1, 1_000, 1_200, floor_.key.key_id, AT)
    drawn = floor_.keeper.draw(good)
    lies = {
        "is for journal 'journal-elsewhere'": msgspec.structs.replace(
            drawn, journal="journal-elsewhere"
        ),
        "where the level's range is [1000, 1200)": msgspec.structs.replace(drawn, ceiling=5_000),
        "where the next is 1": msgspec.structs.replace(drawn, draw=3),
        "carries its commitment and signature": msgspec.structs.replace(drawn, signature=""),
    }
    for reason, lie in lies.items():
        with pytest.raises(LedgerError, match=reason.replace("[", r"\[").replace(")", r"\)")):
            apply(floor_.state, MysteryDrawn("lie", AT, lie))
    state, _ = apply(floor_.state, MysteryDrawn("draw-1", AT, drawn))
    with pytest.raises(LedgerError, match="draw 1 is open"):
        apply(state, MysteryDrawn("again", AT, msgspec.structs.replace(drawn, draw=2)))


def test_a_mystery_levels_draw_and_feeds_are_kept_in_the_stored_state_exactly() -> None:
    """The journal stores each pool as canonical JSON and reads it back at a restart."""
    floor_ = MysteryFloor()
    floor_.draw()
    for index in range(50):  # until a wager feeds the open draw without reaching its trigger
        floor_.wager(f"r{index}", 1)
        if floor_.state.pools["stax.grand"].fed:
            break
    grand = floor_.state.pools["stax.grand"]
    assert grand.draw is not None
    assert grand.fed
    assert pool_from_json(pool_json(grand)) == grand
    one_level = Pool.open("main", PoolTerms(1_000, Fraction(1, 10)))
    assert "draw" not in pool_json(one_level)  # every other pool's text as it always was
    assert "must_hit_by" not in pool_json(one_level)


def test_verify_checks_each_draw_statement_against_the_controllers_public_key(
    tmp_path: Path,
) -> None:
    """docs/rules.md § 10, check 1: a draw the controller key did not sign is a problem."""
    path = tmp_path / "journal.db"
    key = ControllerKey.generate()
    with Journal(path) as journal:
        for event in opening():
            assert journal.append(event).applied
        Site.create(journal)  # the journal's identity, made by its founding manager
        assert journal.state.binding is not None
        identity = journal.state.binding.journal
        request = DrawRequest(
            "c1", identity, "stax.grand", "grand", 1, 1_000, 1_200, key.key_id, AT
        )
        drawn = LocalKeeper(key).draw(request)
        assert journal.append(MysteryDrawn("draw-1", AT, drawn)).applied
    assert verify(path).ok
    # The journal has no checkpoint yet (verify says so with a key given): only the draws here.
    drawn_by_us = verify(path, keys=[key.public_key]).problems
    assert not [problem for problem in drawn_by_us if "mystery draw" in problem]
    stranger = ControllerKey.generate()
    problems = "\n".join(verify(path, keys=[stranger.public_key]).problems)
    assert "row 9: mystery draw: the draw's signature verifies under none" in problems
