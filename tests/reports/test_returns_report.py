"""Actual against theoretical return, from the journal's rows (controller/reports/).

The theoretical return of a wager is its paytable's exact return at the meter it was played at
(docs/analyzer.md), weighted by stake; the figures are checked against the analyzer and
against arithmetic done here by hand from the paytable, the pool's rates and the hands dealt.
Ohio Adm. Code 3772-10-08(A) reviews a deviation over 4 %: a deviation past it and past the
margin of chance is flagged ``REVIEW``, one inside the margin ``within chance``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest
from support.journal.journal_rig import (
    AT,
    NOTHING,
    OTHER,
    SEED_CENTS,
    STRAIGHT_FLUSH,
    TABLE,
    opened_journal,
    paytable_text,
    settle,
    wager,
)

from controller.analyzer.report import Analyzer
from controller.events import RoundVoided
from controller.ledger_journal import open_reader
from controller.reports.period import span
from controller.reports.played import PlayedWager, played
from controller.reports.returns import OK, REVIEW, WITHIN_CHANCE, ReturnGroup, Theory, returns
from controller.rules.paytable_files import parse_paytable

if TYPE_CHECKING:
    from pathlib import Path

FULL_HOUSE = ["7c", "7d", "7h", "Ks", "Kd", "9c", "Jh"]
"""Pays $4 on progressive-1 (the wager is not returned)."""
TO_METER = Fraction(113, 4)
"""28.25 % of a $1 wager: what each progressive wager adds to the rig's pool's meter."""


@pytest.fixture(scope="module")
def theory() -> Theory:
    return Theory(Analyzer())


def _rows(path: Path) -> list[dict[str, Any]]:
    reader = open_reader(path)
    try:
        return sorted(reader.rows(), key=lambda row: int(row["seq"]))
    finally:
        reader.close()


def _wager_at(meter: Fraction | None, text: str = "", paid: int = 0) -> PlayedWager:
    return PlayedWager(
        1, TABLE, "r", 1, "progressive", 100, "progressive-1", text, "p", meter, paid
    )


def test_theoretical_is_the_analyzers_return_at_the_meter_played(theory: Theory) -> None:
    text = paytable_text()
    analysis = theory.analysis(text, "progressive-1")
    assert analysis is not None
    assert analysis.progressive is not None
    for meter in (Fraction(SEED_CENTS), Fraction(4_000_113, 4), Fraction(50_000_000)):
        moments = theory.moments(_wager_at(meter, text))
        assert moments is not None
        assert moments.mean == analysis.progressive.return_at(meter)
        assert moments.variance > 0


def test_an_odds_paytables_theoretical_is_its_exact_return(theory: Theory) -> None:
    from importlib.resources import files  # noqa: PLC0415 - only this test reads a seed file

    for name in ("fortune-1", "ace-high-1"):
        text = (files("controller") / "paytables" / f"{name}.toml").read_text()
        analysis = theory.analysis(text, name)
        assert analysis is not None
        spot = "ace-high" if name.startswith("ace") else "bonus"
        played_wager = PlayedWager(1, TABLE, "r", 1, spot, 500, name, text, None, None, 0)
        moments = theory.moments(played_wager)
        assert moments is not None
        assert moments.mean == analysis.return_
        # The variance by hand: every line's probability times its pay per unit, squared.
        paytable = parse_paytable(text, name)
        assert paytable.name == name
        second = sum(
            (line.fixed_return * line.fixed_return / line.probability)
            for line in analysis.lines
            if line.probability
        )
        assert moments.variance == second - analysis.return_**2


def test_each_settled_wager_is_read_back_with_the_meter_its_round_was_paid_at(
    tmp_path: Path, theory: Theory
) -> None:
    """Three rounds: two wagers lose, then a full house, then a 7-card straight flush."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        journal.append(settle("r1-settle", "r1", {1: NOTHING, 2: OTHER}))
        journal.append(wager("r2-w1", "r2", 1))
        journal.append(settle("r2-settle", "r2", {1: FULL_HOUSE}))
        journal.append(wager("r3-w1", "r3", 1))
        journal.append(settle("r3-settle", "r3", {1: STRAIGHT_FLUSH}))
    rows = _rows(path)
    wagers, envy = played(rows, 0, len(rows))
    assert envy == []
    assert [(w.round_id, w.seat, w.paid_back_cents) for w in wagers] == [
        ("r1", 1, 0), ("r1", 2, 0), ("r2", 1, 400), ("r3", 1, wagers[-1].paid_back_cents),
    ]  # fmt: skip
    seed = Fraction(SEED_CENTS)
    # Each round is paid at the meter its wagers (and every earlier one) carried it to.
    assert [w.meter for w in wagers] == [
        seed + 2 * TO_METER, seed + 2 * TO_METER, seed + 3 * TO_METER, seed + 4 * TO_METER,
    ]  # fmt: skip
    assert wagers[-1].paid_back_cents == int(seed + 4 * TO_METER)  # 100 % of the meter
    assert wagers[-1].from_meter_cents == wagers[-1].paid_back_cents
    found = returns(wagers, theory)
    group = found.by_table_spot[TABLE, "progressive"]
    assert (group.wagers, group.staked_cents) == (4, 400)
    assert group.paid_back_cents == 400 + int(seed + 4 * TO_METER)
    assert group.meter_hits == 1
    analysis = theory.analysis(paytable_text(), "progressive-1")
    assert analysis is not None
    assert analysis.progressive is not None
    progressive = analysis.progressive
    by_hand = sum((progressive.return_at(w.meter) for w in wagers if w.meter), Fraction(0))
    assert group.theoretical == by_hand / 4
    assert found.by_pool["pool-a"].paid_back_cents == group.paid_back_cents


def test_a_voided_round_played_no_hand_and_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        voided = RoundVoided("r1-void", AT, TABLE, "r1", "supervisor-7", "shoe jammed")
        assert journal.append(voided).applied
        journal.append(wager("r2-w1", "r2", 1))
        journal.append(settle("r2-settle", "r2", {1: NOTHING}))
    rows = _rows(path)
    wagers, _ = played(rows, 0, len(rows))
    assert [w.round_id for w in wagers] == ["r2"]


def test_a_period_counts_the_rounds_it_settled(tmp_path: Path) -> None:
    """A report's period is a run of rows: a round settled before it is not counted in it."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        for number in range(1, 4):
            journal.append(wager(f"r{number}-w1", f"r{number}", 1))
            journal.append(settle(f"r{number}-settle", f"r{number}", {1: NOTHING}))
    rows = _rows(path)
    begin = next(i for i, row in enumerate(rows) if row["event_id"] == "r2-w1")
    wagers, _ = played(rows, begin, len(rows))
    assert [w.round_id for w in wagers] == ["r2", "r3"]
    assert span(rows, None, None) == (0, len(rows))


def test_3772_10_08_a_a_deviation_past_4_points_and_past_chance_is_flagged(
    tmp_path: Path, theory: Theory
) -> None:
    """200 full houses in a row: 400 % against about 48 %, far past any chance."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        for number in range(200):
            journal.append(wager(f"r{number}-w1", f"r{number}", 1))
            journal.append(settle(f"r{number}-settle", f"r{number}", {1: FULL_HOUSE}))
    rows = _rows(path)
    group = returns(played(rows, 0, len(rows))[0], theory).by_table[TABLE]
    assert group.actual == 4
    assert group.verdict() == REVIEW


def test_3772_10_08_a_a_small_sample_past_4_points_is_within_chance(theory: Theory) -> None:
    """Three wagers and one full house: 133 % against 48 %, but three hands prove nothing."""
    text = paytable_text()
    meter = Fraction(SEED_CENTS)
    group = ReturnGroup()
    for paid in (0, 0, 400):
        played_wager = _wager_at(meter, text, paid)
        group.add(played_wager, theory.moments(played_wager))
    assert group.actual == Fraction(4, 3)
    assert group.theoretical is not None
    assert abs(group.actual - group.theoretical) > Fraction(4, 100)
    assert group.verdict() == WITHIN_CHANCE


def test_3772_10_08_a_within_4_points_is_ok_and_the_threshold_is_the_operators(
    theory: Theory,
) -> None:
    text = paytable_text()
    meter = Fraction(SEED_CENTS)
    moments = theory.moments(_wager_at(meter, text))
    assert moments is not None
    group = ReturnGroup()
    # Pays chosen to come back within a point of the mean: 48 cents a wager on 1,000 wagers.
    target = int(moments.mean * 100 * 1000)
    for number in range(1000):
        paid = target // 1000 + (1 if number < target % 1000 else 0)
        group.add(_wager_at(meter, text, paid), moments)
    assert group.verdict() == OK
    assert group.verdict(deviation_points=Fraction(1, 1000)) == OK  # off by under a cent in all


def test_a_paytable_the_journal_does_not_carry_gets_no_verdict(theory: Theory) -> None:
    group = ReturnGroup()
    group.add(_wager_at(Fraction(SEED_CENTS)), theory.moments(_wager_at(Fraction(SEED_CENTS))))
    assert group.unanalyzed == 1
    assert group.theoretical is None
    assert group.verdict() == "no analysis"
