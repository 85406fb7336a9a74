"""The units' ``Documentation=`` lines point at the docs as installed, not at a placeholder.

``systemctl help jackpotd`` and ``systemctl status`` show them. The install puts docs/ under
``/opt/jackpotd/share/doc/jackpotd/`` (where the alerts' runbook links point too), so each
line is a ``file:`` URI there naming a page this tree has; and ``systemd-analyze verify`` has
nothing to say about any of them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted((ROOT / "systemd").glob("*.service"))
INSTALLED = "file:///opt/jackpotd/share/doc/jackpotd/"


@pytest.mark.parametrize("unit", UNITS, ids=[unit.name for unit in UNITS])
def test_documentation_names_an_installed_page_this_tree_has(unit: Path) -> None:
    lines = re.findall(r"^Documentation=(.+)$", unit.read_text(encoding="utf-8"), re.MULTILINE)
    assert lines, f"{unit.name} has no Documentation="
    for uri in " ".join(lines).split():
        assert uri.startswith(INSTALLED), uri
        assert (ROOT / "docs" / uri.removeprefix(INSTALLED)).is_file(), uri


@pytest.mark.parametrize("unit", UNITS, ids=[unit.name for unit in UNITS])
def test_systemd_analyze_finds_nothing_in_the_documentation_lines(
    unit: Path, tmp_path: Path
) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: make test installs systemd"
    copy = tmp_path / unit.name
    copy.write_text(unit.read_text().replace("/opt/jackpotd/bin/python", sys.executable))
    done = subprocess.run(
        [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    assert [line for line in done.stderr.splitlines() if "ocumentation" in line] == []
