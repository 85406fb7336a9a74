"""The ``jackpotd`` command line: version, paytables and the supervisors' ``hand`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run

from controller import __version__
from controller.cli import main

if TYPE_CHECKING:
    from pathlib import Path


def test_version_via_the_installed_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == f"jackpotd {__version__}"


def test_paytables_lists_all_18_seed_paytables(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "paytables")
    assert status == 0
    header, *rows = [line.split("\t") for line in out.splitlines()]
    assert header == ["paytable", "wager", "joker", "kind", "title"]
    assert [row[0] for row in rows if row[3] == "seed"] == [
        *(f"ace-high-{n}" for n in range(1, 6)),
        *(f"fortune-{n}" for n in range(1, 7)),
        *(f"progressive-{n}" for n in range(1, 8)),
    ]
    assert [row[3] for row in rows[:18]] == ["seed"] * 18


def test_paytables_lists_the_samples_after_the_seeds_marked_as_samples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "paytables")
    assert status == 0
    samples = [line.split("\t") for line in out.splitlines()][19:]
    assert {"insurance-sample-1", "insurance-sample-2"} <= {row[0] for row in samples}
    assert all(row[3] == "SAMPLE" and "sample" in row[0] for row in samples)
    assert all(line.endswith("(SAMPLE)") for line in out.splitlines()[19:])
    status, out, _ = run(capsys, "paytables", "--json")
    listed = {table["name"]: table["sample"] for table in json.loads(out)}
    assert listed["insurance-sample-1"] is True
    assert listed["fortune-1"] is False
    status, out, _ = run(capsys, "paytables", "show", "insurance-sample-2")
    assert status == 0
    assert "SAMPLE: no regulation prints these pays; an operator files their own" in out
    assert "insurance-ace-high-with-joker" in out


def test_paytables_show_prints_every_attribute(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "paytables", "show", "progressive-4")
    assert status == 0
    for text in (
        "58 Pa. Code § 688a.12(d), Paytable 4",
        "Meter seed: $10,000.00",
        "Rate of progression: 1%",
        "Reserve rate: 1%",
        "Original wager returned to player",
        "$5,000/100% of meter",
        "$1,000",
    ):
        assert text in out


def test_paytables_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "paytables", "show", "progressive-2", "--json")
    document = json.loads(out)
    assert status == 0
    assert document["joker"] == "fully-wild"
    assert document["progressive"]["meter_seed_cents"] == 1_000_000
    assert document["progressive"]["rate_of_progression"] == "7%"
    assert document["lines"][0]["pays"] == "100% of meter"


def test_unknown_paytable_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "paytables", "show", "fortune-9")
    assert status == 1
    assert "fortune-9" in err
    assert "no such paytable" in err


def test_hand_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "hand", "As Ks Qs Js Jk Kh Qh", "--paytable", "fortune-1", "--json"
    )
    assert status == 0
    report = json.loads(out)
    assert report["cards"] == ["As", "Ks", "Qs", "Js", "Jk", "Kh", "Qh"]
    assert sorted(report["best_five"]) == sorted(["As", "Ks", "Qs", "Js", "Jk"])
    assert report["rank"] == "royal flush"
    assert report["joker_as"] == "Ts"
    assert report["line"] == "royal-flush-plus-natural-suited-king-queen"
    assert report["pays"] == "1,000 to 1"
    assert report["envy_cents"] == 25_000


def test_hand_without_paytable_has_null_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "hand", "As", "Kd", "Tc", "9h", "5s", "3c", "2c", "--json")
    report = json.loads(out)
    assert status == 0
    assert report["line"] is None
    assert report["pays"] is None
    assert report["rank"] == "high card (A-K-T-9-5)"


def test_hand_that_wins_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "hand", "As Kd Tc 9h 5s 3c 2c", "--paytable", "fortune-1")
    assert status == 0
    assert "none, the wager loses" in out


def test_hand_readable_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "hand", "Ac Ad Ah As Jk 2c 3d", "--paytable", "progressive-1")
    assert status == 0
    assert "five aces" in out
    assert "Five aces: pays 10% of meter" in out


def test_hand_progressive_line_depends_on_the_meter(capsys: pytest.CaptureFixture[str]) -> None:
    hand = "Ac Ad Ah As Jk 2c 3d"
    status, out, _ = run(capsys, "hand", hand, "--paytable", "progressive-5", "--json")
    report = json.loads(out)
    assert status == 0
    assert (report["line"], report["pays"], report["meter_cents"]) == (
        "five-of-a-kind",
        "$1,000",
        500_000,
    )
    status, out, _ = run(
        capsys, "hand", hand, "--paytable", "progressive-5", "--meter", "$12,345.67", "--json"
    )
    report = json.loads(out)
    assert (report["line"], report["pays"], report["meter_cents"]) == (
        "five-aces",
        "10% of meter",
        1_234_567,
    )


def test_hand_bad_meter_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["hand", "Ac Ad Ah As Jk 2c 3d", "--paytable", "progressive-5", "--meter", "lots"])
    assert exited.value.code == 2
    assert "--meter" in capsys.readouterr().err


def test_hand_ace_high_needs_the_dealer(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "hand", "As Kd Qc 9s 7h 3c 2d", "--paytable", "ace-high-1")
    assert status == 1
    assert "--dealer" in err
    status, out, _ = run(
        capsys,
        "hand",
        "As Kd Qc 9s 7h 3c 2d",
        "--paytable",
        "ace-high-2",
        "--dealer",
        "Jk Kh Qh 9c 7d 3d 2h",
        "--json",
    )
    assert status == 0
    assert json.loads(out)["pays"] == "40 to 1"


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ("As Kd Qc 9s 7h 3c Xx", "'Xx' is not a card"),
        ("As Kd Qc 9s 7h 3c As", "duplicate card As"),
        ("As Kd Qc 9s 7h Jk Jk", "two jokers"),
        ("As Kd Qc 9s 7h 3c", "7 cards"),
    ],
)
def test_hand_bad_input_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], cards: str, message: str
) -> None:
    status, out, err = run(capsys, "hand", cards)
    assert status == 1
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_hand_ace_five_option(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "hand", "As 2d 3c 4h 5s 9c Jd", "--ace-five", "lowest", "--json")
    assert status == 0
    assert json.loads(out)["rank"] == "straight, 5 high"


# jackpotd analyze


def test_analyze_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "analyze", "fortune-1", "--json", "--quiet")
    document = json.loads(out)
    assert status == 0
    assert document["paytable"] == "fortune-1"
    assert document["total_hands"] == 154_143_080
    assert [line["line"] for line in document["lines"]][:2] == [
        "seven-card-straight-flush-natural",
        "royal-flush-plus-natural-suited-king-queen",
    ]
    first = document["lines"][0]
    assert first["count"] == 32
    assert isinstance(first["count"], int)
    assert first["probability"] == pytest.approx(32 / 154_143_080)
    assert first["pays"] == "5,000 to 1"
    assert (
        sum(line["count"] for line in document["lines"]) + document["losing_count"] == 154_143_080
    )
    assert 0 < document["return"] < 1
    assert document["house_edge_percent"] == pytest.approx((1 - document["return"]) * 100)
    numerator, denominator = map(int, document["return_exact"].split("/"))
    assert numerator / denominator == pytest.approx(document["return"])
    assert document["envy_per_other_hand_cents"] > 0


def test_analyze_ace_high_counts_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "analyze", "ace-high-1", "--json", "--quiet")
    document = json.loads(out)
    assert status == 0
    assert document["total_pairs"] == 154_143_080 * 53_524_680
    assert document["total_hands"] == 154_143_080
    assert (
        sum(line["count"] for line in document["lines"]) + document["losing_count"]
        == document["total_pairs"]
    )


def test_analyze_progressive_figures(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "analyze", "progressive-1", "--json", "--quiet")
    progressive = json.loads(out)["progressive"]
    assert status == 0
    assert progressive["meter_seed_cents"] == 1_000_000
    assert progressive["break_even_meter_cents"] > progressive["meter_seed_cents"]
    assert progressive["rate_of_progression"] == "28%"
    assert progressive["long_run_return_low"] <= progressive["long_run_return_high"]
    status, out, _ = run(capsys, "analyze", "progressive-1", "--quiet")
    assert "Break-even meter" in out
    assert "Wagers between 100 %-of-meter hits" in out


def test_analyze_all_prints_a_summary_of_18(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "analyze", "--all", "--progress")
    assert status == 0
    rows = out.splitlines()[1:]
    assert len(rows) == 18
    assert rows[0].startswith("ace-high-1")
    assert "counting 154,143,080 hands" in err
    assert "done in" in err


def test_analyze_all_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "analyze", "--all", "--json", "--quiet")
    assert status == 0
    assert len(json.loads(out)["paytables"]) == 18


def test_analyze_plot_draws_a_png(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "return.png"
    status, _, _ = run(capsys, "analyze", "progressive-1", "--plot", str(target), "--quiet")
    assert status == 0
    assert target.read_bytes().startswith(b"\x89PNG")


def test_analyze_plot_needs_a_progressive_paytable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = run(
        capsys, "analyze", "fortune-1", "--plot", str(tmp_path / "x.png"), "--quiet"
    )
    assert status == 1
    assert "progressive" in err


def test_analyze_unknown_paytable(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "analyze", "progressive-9", "--quiet")
    assert status == 1
    assert "no such paytable" in err
