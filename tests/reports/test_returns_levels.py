"""Actual against theoretical on a multi-level pool with a mystery level (docs/operations.md).

Ohio Adm. Code 3772-10-08(A) reviews each table's actual return against its theoretical. On a
multi-level pool the theoretical is the analyzer's exact return *at every level's meter* the
round was paid at (docs/analyzer.md, "Levels"), and a mystery level's hit is won by no hand and
staked by no wager of its own: it is left out of the wagers (the report's mystery part lists it),
so that a table's hands are held to its paytable alone. On a real journal whose grand hit
(tests/support/journal/mystery_journal.py), each round a lock of three seats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.journal.mystery_journal import GRAND, mystery_journal

from controller.ledger_journal.sqlite import Journal
from controller.reports.played import played
from controller.reports.returns import Theory, returns

if TYPE_CHECKING:
    from pathlib import Path


def test_3772_10_08_a_the_theoretical_is_the_return_at_every_levels_meter_without_mystery_hits(
    tmp_path: Path,
) -> None:
    floor_ = mystery_journal(tmp_path / "journal.db")
    floor_.draw()
    while len(floor_.reveals) < 2:
        floor_.round_of(3)
    floor_.journal.close()
    with Journal(floor_.path) as journal:
        rows = sorted(journal.rows(), key=lambda row: int(row["seq"]))
    wagers, _ = played(rows, 0, len(rows))
    assert len(wagers) == 3 * len(floor_.wagers)  # every seat of every round, and nothing else
    assert not [wager for wager in wagers if wager.from_meter_cents]  # no mystery pay in them
    theory = Theory()
    for wager in wagers:
        meters = dict(wager.level_meters)
        assert set(meters) == {"grand", "major", "minor", "mini"}
        assert wager.meter is None
        analysis = theory.analysis(wager.paytable_text, wager.paytable)
        assert analysis is not None
        assert analysis.levelled is not None
        moments = theory.moments(wager)
        assert moments is not None
        assert moments.mean == analysis.levelled.return_at(meters)
    group = returns(wagers, theory).by_pool["stax"]
    assert group.wagers == len(wagers)
    assert group.theoretical is not None
    assert group.unanalyzed == 0
    assert group.paid_back_cents == 0  # the rig's hands pay nothing; the grand's hits are apart
    assert GRAND not in returns(wagers, theory).by_pool
