"""``jackpotd analyze --plot`` of a multi-level paytable: a line per level hands are paid from.

docs/analyzer.md, "Levels": the return is piecewise linear in every level's meter. The plot
draws, for each level a hand is paid from, the exact return as that level's meter runs from its
seed to past its break-even meter, the other levels at their seeds; a mystery level, won by no
hand, draws none. The demo's four-level paytable (a mystery grand over three hand-paid levels),
analysed as ``jackpotd analyze FILE.toml --plot`` analyses it.
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

from support.cli.cli_runs import run

from controller.analyzer.report import Analyzer
from controller.cli.analyze_plot import plotted
from controller.rules.paytable_files import load_paytable_file
from controller.service.demo import DEMO_PAYTABLES

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

LEVELS_FILE = DEMO_PAYTABLES / "demo-levels-1.toml"


def test_a_line_per_hand_paid_level_each_exact_from_its_seed_past_its_break_even() -> None:
    analysis = Analyzer().analyze(load_paytable_file(LEVELS_FILE))
    figures = analysis.levelled
    assert figures is not None
    series = plotted([analysis])
    assert list(series) == [
        f"demo-levels-1: {level} (others at their seeds)" for level in ("major", "minor", "mini")
    ]  # the mystery grand is won by no hand: the return does not move with its meter
    for label, points in series.items():
        level = label.split(": ")[1].split(" ")[0]
        seed = figures.seeds[level]
        assert points[0] == (int(seed), figures.return_at_seeds)
        assert all(value == figures.return_at({level: meter}) for meter, value in points)
        values = [value for _, value in points]
        assert values == sorted(values)  # the return never falls as a meter rises
        break_even = figures.break_even_meter_cents(level)
        if break_even is not None:
            assert points[-1][0] >= break_even  # drawn past the level's break-even
            assert figures.return_at({level: break_even}) == 1


def test_the_command_writes_the_levels_plot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "levels.png"
    status, _, err = run(capsys, "analyze", str(LEVELS_FILE), "--plot", str(target), "--quiet")
    assert status == 0, err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
