"""``jackpotd analyze`` and ``jackpotd paytables show`` on a multi-level paytable file.

Each level's terms are printed (seed, rates, limit, must-hit-by), each meter pay names its level,
and the analysis gives the return at the levels' seeds, each level's share of it per meter
dollar and break-even meter, and the mystery level's cost per wager (docs/analyzer.md,
"Levels"), in the JSON exactly.
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from typing import TYPE_CHECKING

import pytest

from controller.analyzer.mystery import MysteryCost
from controller.cli import main
from controller.rules.paytable_files import parse_paytable

if TYPE_CHECKING:
    from pathlib import Path

LEVELLED = """
name = "house-levels"
title = "House levels"
wager = "progressive"
source = "house rules"
joker = "semi-wild"

[progressive]
wager = "$5"
original_wager_returned = false

[[progressive.levels]]
level = "grand"
meter_seed = "$10,000"
rate_of_progression = "1%"
must_hit_by = "$20,000"
past_trigger = "next-level"

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "3%"
reserve_rate = "0.5%"
limit = "$50,000"

[[progressive.levels]]
level = "mini"
meter_seed = "$50"
rate_of_progression = "1%"

[[lines]]
line = "seven-card-straight-flush"
outcome = "Seven-card straight flush"
pays = "100% of meter"
level = "major"

[[lines]]
line = "royal-flush"
outcome = "Royal flush"
pays = "100% of meter"
level = "mini"

[[lines]]
line = "straight-flush"
outcome = "Straight flush"
pays = "$40"
"""


@pytest.fixture
def levelled(tmp_path: Path) -> str:
    path = tmp_path / "house-levels.toml"
    path.write_text(LEVELLED, encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_paytables_show_prints_each_levels_terms_and_each_rows_level(
    capsys: pytest.CaptureFixture[str], levelled: str
) -> None:
    out = run(capsys, "paytables", "show", levelled)
    (grand,) = [line for line in out.splitlines() if line.startswith("grand")]
    assert grand.split() == ["grand", "$10,000", "1%", "0%", "$20,000", "next", "level"]
    (major,) = [line for line in out.splitlines() if line.startswith("major")]
    assert major.split() == ["major", "$1,000", "3%", "0.5%", "$50,000"]
    assert "Meter seed" not in out  # each level has its own
    (royal,) = [line for line in out.splitlines() if line.startswith("Royal flush")]
    assert "100% of meter [mini]" in royal
    (straight,) = [line for line in out.splitlines() if line.startswith("Straight flush")]
    assert "[" not in straight  # a fixed pay is the house's, from no level

    document = json.loads(run(capsys, "paytables", "show", levelled, "--json"))
    levels = document["progressive"]["levels"]
    assert [level["level"] for level in levels] == ["grand", "major", "mini"]
    assert levels[0] == {
        "level": "grand",
        "meter_seed_cents": 1_000_000,
        "rate_of_progression": "1%",
        "reserve_rate": "0%",
        "limit_cents": None,
        "must_hit_by_cents": 2_000_000,
        "mystery": True,
        "past_trigger": "next level",
    }
    assert [row.get("level") for row in document["lines"]] == ["major", "mini", None]


def test_analyze_gives_the_levelled_figures_exactly(
    capsys: pytest.CaptureFixture[str], levelled: str
) -> None:
    document = json.loads(run(capsys, "analyze", levelled, "--json", "--quiet"))
    assert document["total_hands"] == comb(53, 7)
    assert "progressive" not in document  # one meter would not say which level
    figures = document["levels"]
    at_seeds = Fraction(figures["return_at_seeds_exact"])
    assert at_seeds == Fraction(document["return_exact"])
    by_level = {level["level"]: level for level in figures["levels"]}
    assert by_level["grand"]["break_even_meter_cents"] is None
    assert by_level["grand"]["return_per_meter_cent_exact"] == "0/1"
    (crossover,) = by_level["mini"]["crossovers"]
    assert crossover["meter_exact_cents"] == "100000/1"
    assert (crossover["level_below"], crossover["level_above"]) == ("major", "mini")
    # R is linear in the mini's meter from its seed: its break-even is where it reaches 100 %.
    mini = Fraction(by_level["mini"]["return_per_meter_cent_exact"])
    mini_break = Fraction(by_level["mini"]["break_even_meter_exact_cents"])
    assert mini_break > 5_000
    assert float(mini_break) == by_level["mini"]["break_even_meter_cents"]
    lines = {line["line"]: line for line in document["lines"]}
    assert lines["royal-flush"]["level"] == "mini"
    assert lines["straight-flush"]["level"] is None
    total = sum(line["return_contribution"] for line in document["lines"])
    assert total == pytest.approx(float(at_seeds))
    assert mini > 0
    # The mystery level's cost, as controller/analyzer/mystery.py gives it.
    terms = parse_paytable(LEVELLED, "levels.toml").progressive
    assert terms is not None
    cost = MysteryCost(terms.levels[0], 500)
    mystery = by_level["grand"]["mystery"]
    assert Fraction(mystery["cost_rate_exact"]) == cost.cost_rate
    assert Fraction(mystery["expected_trigger_exact_cents"]) == Fraction(2_999_999, 2)
    assert Fraction(mystery["expected_wagers_per_cycle_exact"]) == cost.expected_wagers_per_cycle

    out = run(capsys, "analyze", levelled, "--quiet")
    assert "Return at the levels' seeds:" in out
    (royal,) = [line for line in out.splitlines() if line.startswith("Royal flush")]
    assert "100% of meter [mini]" in royal
    assert "Break-even meter of grand: none (no hand is paid from it)" in out
    assert "Break-even meter of mini (R = 100 %, the others at their seeds): $" in out
    assert "Mystery level grand: pays $14,999.99 on average every" in out
    # A seven-card straight flush to the ace is a royal too: the mini's once it shows more.
    assert (
        f"From a mini meter of $1,000.00 the {crossover['count']:,} hands paid "
        "'Seven-card straight flush' "
        "(100% of meter [major]) are paid 'Royal flush' (100% of meter [mini]), which pays more"
    ) in out
    assert "Break-even meter of major (R = 100 %, the others at their seeds): $" in out
    assert "above its limit: never shown" in out  # $50,000: far below what R needs
