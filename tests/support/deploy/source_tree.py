"""A copy of the source tree as an operator's clone has it, for tests that run make in it.

``copy_tree(folder)`` copies every file git tracks or would track (the files it ignores left
out: .venv/, dist/, caches) into ``folder``; ``tree_files()`` names them. ``clean_environment()``
is this process's environment without the test's interpreter settings (``PYTHON*``,
``VIRTUAL_ENV``), the package index's kept, so that what runs in the copy sees what an
operator's shell gives it (tests/packaging/).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[3]


def tree_files() -> list[str]:
    """The tree's files, relative to its root, as a clone (or an sdist) has them."""
    listing = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    with tempfile.TemporaryDirectory() as empty:
        if (ROOT / ".git").exists():
            git = ["git", "-C", str(ROOT)]
        else:  # an export (git archive): every file is new to an empty repository's index
            subprocess.run(["git", "init", "-q", empty], check=True, timeout=60)
            git = ["git", f"--git-dir={empty}/.git", f"--work-tree={ROOT}", "-C", str(ROOT)]
        listed = subprocess.run(
            [*git, *listing], capture_output=True, check=True, timeout=60
        ).stdout.decode()
    return sorted(name for name in listed.split("\0") if name and (ROOT / name).is_file())


def copy_tree(folder: Path) -> list[str]:
    """A copy of the tree's files (modes kept) into ``folder``; their names.

    The names are the copy's: others editing the checkout meanwhile change the tree, not it.
    """
    names = []
    for name in tree_files():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(ROOT / name, folder / name)
        except FileNotFoundError:  # removed since git listed it
            continue
        names.append(name)
    return names


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the test's interpreter settings, plus ``extra``."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PYTHON") and name not in {"VIRTUAL_ENV", "PYTEST_CURRENT_TEST"}
    }
    return {**kept, **extra}


def distributions(python: Path) -> set[str]:
    """The normalised names of the distributions installed for ``python``."""
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze"], cwd=python.parent,
        capture_output=True, text=True, timeout=60, check=False, env=clean_environment(),
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    return {normalised(line.split("==")[0]) for line in listed.stdout.splitlines() if line}


def normalised(name: str) -> str:
    """A distribution's name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    """The normalised names of the distributions ``requirements`` (PEP 508 lines) name."""
    names = set()
    for requirement in requirements:
        found = re.match(r"[A-Za-z0-9._-]+", requirement)
        assert found is not None, requirement
        names.add(normalised(found.group()))
    return names
