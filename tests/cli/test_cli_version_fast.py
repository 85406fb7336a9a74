"""``jackpotd --version`` answers without importing the service (it took 0.8 s to say 0.1.0).

The command line imports its subcommands when it builds the parser (controller/cli/__init__.py);
``--version`` alone is answered before that, from the package's version. Run as a user runs it
(``python -m controller``, the unit's launcher path, the installed script), the import log of
``-X importtime`` names no module of the service, the journal or the web display.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller import __version__

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("controller.service", "controller.journal", "controller.web", "controller.runtime")
SCRIPT = Path(sys.executable).with_name("jackpotd")


@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "controller"],
        [str(ROOT / "controller" / "__main__.py")],  # as systemd/jackpotd.service launches it
        [str(SCRIPT)],  # the console script pip installed
    ],
    ids=["module", "launcher", "script"],
)
def test_version_imports_nothing_of_the_service(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv, "--version"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"jackpotd {__version__}\n"
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "controller" in imported
    assert {name for name in imported if name.startswith(HEAVY)} == set()


def test_version_with_other_words_is_still_argparses() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "--debug", "--version"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"jackpotd {__version__}\n"
