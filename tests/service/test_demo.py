"""The demo a new user runs (README, "make demo"): a pending jackpot soon, a summary of its run.

``jackpotd demo`` on its defaults deals a rigged jackpot hand every 40 rounds at a round every
0.5 s, so the first jackpot, at or above the demo's $1,000 verification amount, waits for a
supervisor within the first minute. A second run on the same journal summarises itself only:
its rounds, its pays, its jackpots, and what it moved each meter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from support.mosquitto import free_port

from controller.cli import build_parser

if TYPE_CHECKING:
    from pathlib import Path

FIRST_MINUTE_S = 60


def demo(tmp_path: Path, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "demo", "--tables", "1", "--db", "var/demo.db",
         "--port", str(free_port()), "--interval", "0.001", *argv],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_defaults_show_a_pending_jackpot_within_the_first_minute(tmp_path: Path) -> None:
    args = build_parser().parse_args(["demo"])
    assert args.hit_every * args.interval < FIRST_MINUTE_S  # the pace a user sees
    out = demo(tmp_path, "--rounds", str(args.hit_every))  # the defaults but the pace
    assert "progressive hits: 1 " in out
    pending = subprocess.run(
        [sys.executable, "-m", "controller", "hits", "--pending", "--json", "--db", "var/demo.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    pays = json.loads(pending.stdout)["pays"]
    assert [pay["what"] for pay in pays].count("jackpot") == 1


def test_a_second_run_summarises_only_itself(tmp_path: Path) -> None:
    first = demo(tmp_path, "--rounds", "10", "--hit-every", "5")
    assert "progressive hits: 2 " in first
    second = demo(tmp_path, "--rounds", "4", "--hit-every", "0")
    assert "rounds: 4 (T1 4)" in second
    assert "progressive hits: 0 " in second
    moved = [line for line in second.splitlines() if line.startswith("pool ")]
    assert len(moved) == 1
    assert moved[0].endswith(" this run)")
    assert "(+$" in moved[0]  # four rounds of contributions, no jackpot


def test_a_demo_on_a_database_it_cannot_reach_says_so_and_leaves_nothing(tmp_path: Path) -> None:
    unreachable = f"postgresql://jackpotd@127.0.0.1:{free_port()}/floor"
    done = subprocess.run(
        [sys.executable, "-m", "controller", "demo", "--db", unreachable, "--port",
         str(free_port()), "--rounds", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "cannot open the journal" in line
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no manager's key file, no var/
