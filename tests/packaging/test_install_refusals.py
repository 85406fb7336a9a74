"""deploy/install.sh refuses what it cannot install, in one line, before it changes anything.

No wheel (or not a wheel), and a prefix or root that is not a plain absolute path (it is
written into the units): exit 1, the reason, and no environment made.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Final

from support.deploy.source_tree import ROOT, clean_environment

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT: Final = ROOT / "deploy" / "install.sh"


def install(tmp_path: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    staged = {"JACKPOTD_PREFIX": str(tmp_path / "opt"), "JACKPOTD_ROOT": str(tmp_path / "root")}
    return subprocess.run(
        [SCRIPT, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        env=clean_environment(**{**staged, **env}),
    )  # fmt: skip


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_no_wheel_is_refused_with_the_usage(tmp_path: Path) -> None:
    for argv in ((), (str(tmp_path / "missing.whl"),), (str(SCRIPT),)):
        done = install(tmp_path, *argv)
        assert done.returncode == 1
        line = one_line(done)
        assert line.startswith("deploy/install.sh: usage: deploy/install.sh WHEEL"), line
    assert list(tmp_path.iterdir()) == []


def test_a_prefix_or_root_that_is_no_plain_absolute_path_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "paigow_jackpot-0.1.0-py3-none-any.whl"
    wheel.touch()  # never opened: the paths are checked first
    for env in ({"JACKPOTD_PREFIX": "opt/jackpotd"}, {"JACKPOTD_PREFIX": "/opt/jack#potd"},
                {"JACKPOTD_ROOT": "/srv/a root"}):  # fmt: skip
        done = install(tmp_path, str(wheel), **env)
        assert done.returncode == 1
        line = one_line(done)
        assert "must be absolute paths of letters, digits and ._-/" in line, line
    assert list(tmp_path.iterdir()) == [wheel]
