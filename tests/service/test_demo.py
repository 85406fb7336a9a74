"""The demo a new user runs (README, "make demo"): a pending jackpot soon, a summary of its run.

``jackpotd demo`` on its defaults deals a rigged jackpot hand every 40 rounds at a round every
0.5 s, so the first jackpot, at or above the demo's $1,000 verification amount, waits for a
supervisor within the first minute. A second run on the same journal summarises itself only:
its rounds, its pays, its jackpots, and what it moved each meter.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from support.drivers.mosquitto import free_port

from controller.cli import build_parser
from controller.service.demo import DEMO_MANAGER, DEMO_PASSPHRASE, LEVELS_POOL

FIRST_MINUTE_S = 60
ROOT = Path(__file__).resolve().parents[2]


def demo(tmp_path: Path, *argv: str) -> str:
    """A run of the one-level demo (``--no-levels``).

    The levels' mystery grand hits at a random trigger, so a count of hits is exact only
    without it.
    """
    return demo_run(tmp_path, "--no-levels", *argv).stdout


def demo_run(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "demo", "--tables", "1", "--db", "var/demo.db",
         "--port", str(free_port()), "--interval", "0.001", *argv],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def test_the_defaults_show_a_pending_jackpot_within_the_first_minute(tmp_path: Path) -> None:
    args = build_parser().parse_args(["demo"])
    assert args.hit_every * args.interval < FIRST_MINUTE_S  # the pace a user sees
    assert args.levels  # and the four-level pool's table beside the one-level pool's
    out = demo_run(tmp_path, "--rounds", str(args.hit_every)).stdout  # the defaults but the pace
    assert "rounds: 80 (T1 40, T2 40)" in out
    pending = subprocess.run(
        [sys.executable, "-m", "controller", "hits", "--pending", "--json", "--db", "var/demo.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    jackpots = [pay for pay in json.loads(pending.stdout)["pays"] if pay["what"] == "jackpot"]
    # Each table's rigged hand pays from a meter at least the $1,000 a supervisor verifies: the
    # one-level pool's, and a level of the four (the grand too, if its trigger came).
    pools = {pay["pool_id"] for pay in jackpots}
    assert "fortune-progressive" in pools
    assert any(pool.startswith(f"{LEVELS_POOL}.") for pool in pools), pools


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


def _readme_block(heading: str) -> list[str]:
    """The lines of the first ``sh`` block under ``heading`` in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(f"\n{heading}\n") :]
    block = after[after.index("```sh\n") + len("```sh\n") :]
    return block[: block.index("```")].strip().splitlines()


def _pending(tmp_path: Path) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "hits", "--pending", "--json", "--db", "var/demo.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    pays: list[dict[str, object]] = json.loads(done.stdout)["pays"]
    return pays


def test_the_readme_verifies_the_demos_pays_with_the_key_and_passphrase_it_prints(
    tmp_path: Path,
) -> None:
    out = demo(tmp_path, "--rounds", "10", "--hit-every", "5")
    key = tmp_path.resolve() / "var" / "demo.manager.key"
    shown = f"demo manager '{DEMO_MANAGER}': key file {key}, passphrase "
    assert f"{shown}'{DEMO_PASSPHRASE}'" in out.splitlines()
    # The README's commands as written, .venv/bin/jackpotd being this checkout's jackpotd.
    shim = tmp_path / ".venv" / "bin" / "jackpotd"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m controller "$@"\n')
    shim.chmod(0o755)
    pending = _pending(tmp_path)
    envy = next(pay["payout_id"] for pay in pending if pay["kind"] == "envy")
    jackpot = next(pay["payout_id"] for pay in pending if pay["from_meter_cents"])
    environment = os.environ | {"PYTHONPATH": str(ROOT)}
    for line in _readme_block("### Try the supervisors' commands"):
        command = line.replace('"PAY"', shlex.quote(str(envy)))
        command = command.replace('"JACKPOT"', shlex.quote(str(jackpot)))
        done = subprocess.run(
            ["/bin/sh", "-c", command], cwd=tmp_path, env=environment,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{line}\n{done.stderr}"
    left = {pay["payout_id"] for pay in _pending(tmp_path)}
    assert envy not in left
    assert jackpot not in left


def test_earlier_runs_checkpoints_under_their_own_keys_are_said_once(tmp_path: Path) -> None:
    # Each run signs its checkpoints with a key made for it: a run on a journal that earlier
    # runs checkpointed passes theirs over, and says so in one plain line, not one a run.
    for _ in range(3):
        done = demo_run(tmp_path, "--rounds", "2", "--hit-every", "0")
    said = [line for line in done.stderr.splitlines() if "other key" in line]
    assert len(said) == 1, done.stderr
    assert "checkpoints (rows " in said[0]
    assert "signed by 2 other keys, not used" in said[0]
    assert "on a demo's journal (each run's key is new)" in said[0]
    assert "another key" not in done.stderr
