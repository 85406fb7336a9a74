"""``jackpotd analyze`` says everything the analyzer knows, in JSON too (docs/analyzer.md).

The JSON gives each crossover meter (where hands move to a line with more of the meter), the
break-even meter exactly, the natural and joker split of every line's count and the Envy per
other player's hand as a share of a $5 Qualifying Wager. Progress goes to stderr only: a
progress bar per step on a terminal, a line per quarter when forced into a file, nothing when
stderr is not a terminal; stdout holds the result alone.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from fractions import Fraction
from math import comb
from typing import Any

import pytest
from support.cli.terminal import on_a_terminal

from controller.cli import main

TOTAL_HANDS = comb(53, 7)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def documents() -> dict[str, dict[str, Any]]:
    """``jackpotd analyze --all --json``, each seed paytable's document by name."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["analyze", "--all", "--json", "--quiet"]) == 0
    return {document["paytable"]: document for document in json.loads(out.getvalue())["paytables"]}


def test_json_gives_the_crossover_meters_of_progressive_5_and_6(
    documents: dict[str, dict[str, Any]],
) -> None:
    # § 688a.12(d) Paytables 5 and 6: four aces and the joker are paid "Five-of-a-kind" ($1,000,
    # $800) until 10 % of the meter pays more: from $10,000 and $8,000 they are "Five aces".
    for name, meter in (("progressive-5", 1_000_000), ("progressive-6", 800_000)):
        (crossover,) = documents[name]["progressive"]["crossovers"]
        assert crossover == {
            "meter_cents": meter,
            "meter_exact_cents": f"{meter}/1",
            "count": comb(48, 2),
            "line_below": "five-of-a-kind",
            "outcome_below": "Five-of-a-kind",
            "line_above": "five-aces",
            "outcome_above": "Five aces",
        }
    assert documents["progressive-1"]["progressive"]["crossovers"] == []


def test_json_gives_the_break_even_meter_exactly(documents: dict[str, dict[str, Any]]) -> None:
    for name in (f"progressive-{number}" for number in range(1, 8)):
        figures = documents[name]["progressive"]
        exact = Fraction(figures["break_even_meter_exact_cents"])
        assert float(exact) == figures["break_even_meter_cents"]
        assert exact > figures["meter_seed_cents"]
    # Paytable 7: the break-even meter is $6,663 and some cents (docs/analyzer.md).
    seven = Fraction(documents["progressive-7"]["progressive"]["break_even_meter_exact_cents"])
    assert 666_300 <= seven < 666_400


def test_json_splits_every_lines_count_into_natural_and_with_joker(
    documents: dict[str, dict[str, Any]],
) -> None:
    for name, document in documents.items():
        for line in document["lines"]:
            if document["wager"] == "ace-high":  # two hands' outcomes, named by the joker
                assert line["count_natural"] is line["count_with_joker"] is None
                continue
            assert line["count_natural"] + line["count_with_joker"] == line["count"], (name, line)
    lines = {line["line"]: line for line in documents["fortune-1"]["lines"]}
    assert lines["royal-flush-plus-natural-suited-king-queen"]["count_natural"] == 12
    assert lines["royal-flush-plus-natural-suited-king-queen"]["count_with_joker"] == 60
    assert lines["five-aces"]["count_natural"] == 0


def test_json_gives_the_envy_per_other_player_on_a_5_dollar_wager(
    documents: dict[str, dict[str, Any]],
) -> None:
    # § 688a.1: the Envy of each other player's hand, on the least Qualifying Wager ($5).
    assert round(documents["fortune-3"]["envy_percent_of_5_dollars_per_other_hand"], 4) == 0.9185
    envy = Fraction(documents["fortune-3"]["envy_per_other_hand_exact_cents"])
    assert documents["fortune-3"]["envy_percent_of_5_dollars_per_other_hand"] == float(envy / 5)
    assert "envy_percent_of_5_dollars_per_other_hand" not in documents["progressive-1"]


def test_text_shows_the_split_the_crossover_and_four_of_a_kind_1_in_135_86(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "analyze", "progressive-7", "--quiet")
    assert (status, err) == (0, "")
    assert "Natural" in out
    assert "With joker" in out
    (quads,) = [row for row in out.splitlines() if row.startswith("Four-of-a-kind")]
    assert "135.86" in quads
    assert f"{224_848 + 12 * comb(48, 2):,}" in quads  # natural four of a kind


def test_progress_forced_into_a_file_is_a_line_per_quarter_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "analyze", "fortune-1", "--json", "--progress")
    assert status == 0
    assert json.loads(out)["paytable"] == "fortune-1"  # stdout holds the JSON alone
    counting = [row for row in err.splitlines() if "joker semi-wild:" in row]
    assert [row.rsplit(": ", 1)[1] for row in counting] == ["25 %", "50 %", "75 %", "100 %"]
    assert "counting 154,143,080 hands, joker semi-wild ..." in err
    assert err.splitlines()[-1].endswith(tuple(f"{n}s" for n in "0123456789"))
    assert "done in" in err.splitlines()[-1]


def test_no_progress_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "analyze", "fortune-1", "--json")
    assert (status, err) == (0, "")
    assert json.loads(out)["total_hands"] == TOTAL_HANDS


def test_progress_on_a_terminal_is_a_bar_per_step() -> None:
    """A real pseudo-terminal as stderr, stdout a pipe: the JSON stays clean."""
    status, text, out = on_a_terminal("analyze", "fortune-1", "--json")
    assert status == 0
    assert json.loads(out)["paytable"] == "fortune-1"
    drawn = [line for line in re.split(r"[\r\n]+", text) if line.strip()]
    bars = [line for line in drawn if "counting 154,143,080 hands, joker semi-wild" in line]
    assert len(bars) > 2  # redrawn as the count grows
    assert "━" in bars[-1]
    assert " 100% " in bars[-1]
    assert drawn[-1].startswith("done in ")
