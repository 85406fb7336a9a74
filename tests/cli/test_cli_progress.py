"""``jackpotd verify`` shows its progress on a terminal, on stderr; elsewhere it says nothing.

Verifying a floor's journal takes seconds (11 to 16 s for 200,000 rows, docs/benchmarks.md):
on a terminal a progress bar counts the rows checked, on stderr, so that stdout holds the
report alone (``--json`` stays exact JSON); piped or in a cron job, stderr stays empty.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from support.cli.terminal import on_a_terminal

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60


def test_verify_on_a_terminal_draws_a_bar_of_the_rows_on_stderr(played: Path) -> None:
    status, drawn, out = on_a_terminal("verify", "--json", "--db", str(played))
    assert status == 0
    rows = json.loads(out)["rows"]
    bars = [line for line in re.split(r"[\r\n]+", drawn) if "verifying the journal" in line]
    assert bars
    assert f" 100% {rows}/{rows} " in bars[-1]
    assert "━" in bars[-1]


def test_verify_elsewhere_says_nothing_on_stderr(played: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "verify", "--db", str(played)],
        capture_output=True, text=True, timeout=WAIT_S, check=False,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("journal OK: ")
