"""README, "Quickstart": ``make demo`` sets itself up on a fresh clone, on the runtime alone.

The demo runs in ``.venv-run/`` (the Makefile), the package and its runtime dependencies: none
of the dev, bench or plot extras, so a demo that needed one would fail here. It is run in a
copy of the tree, as the README writes it with options of its own (``ARGS``): a few rounds on
one table, on a free port, then it stops by itself and prints its summary.
"""

from __future__ import annotations

import subprocess
import tomllib
from typing import TYPE_CHECKING

import pytest
from support.deploy.source_tree import (
    ROOT,
    clean_environment,
    copy_tree,
    distributions,
    requirement_names,
)
from support.drivers.mosquitto import free_port

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def test_make_demo_on_a_fresh_clone_builds_a_runtime_only_environment_and_plays(
    tmp_path: Path,
) -> None:
    tree = tmp_path
    copy_tree(tree)
    args = f"--rounds 3 --tables 1 --interval 0.01 --port {free_port()}"
    done = subprocess.run(
        ["make", "demo", f"ARGS={args}"],
        cwd=tree, capture_output=True, text=True, timeout=300, check=False,
        env=clean_environment(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rounds: 6 (T1 3, T2 3)" in done.stdout  # T2: the four-level pool's table
    assert "pool demo-levels.grand: meter $" in done.stdout  # its house paytable shipped
    assert (tree / "var" / "demo.db").is_file()
    assert not (tree / ".venv").exists()  # the development environment is not built
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = requirement_names(project["dependencies"])
    extras = requirement_names([r for group in project["optional-dependencies"].values()
                                for r in group])  # fmt: skip
    present = distributions(tree / ".venv-run" / "bin" / "python")
    assert {"paigow-jackpot", *runtime} <= present
    assert present & (extras - runtime) == set()
