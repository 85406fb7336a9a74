"""``jackpotd_build_info{revision}``: the source revision the running code was built from.

docs/metrics.md: the commit pip recorded when it installed the package from git (PEP 610's
``direct_url.json``), else ``git describe`` of the checkout the code is imported from, else
``unknown``. Each case runs in a fresh interpreter on real files: this checkout, a copy of
it that is no git checkout (as ``git archive`` gives), and a distribution's metadata as pip
writes it for a ``git+`` install, found first on the import path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASK = "from controller.runtime.revision import revision; print(revision())"


def revision_in(*path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", ASK], cwd=path[-1], capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": ":".join(str(entry) for entry in path), "PATH": "/usr/bin:/bin"},
        check=True,
    )  # fmt: skip
    return done.stdout.strip()


def described() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--tags"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_a_checkout_names_its_git_description() -> None:
    if not (ROOT / ".git").exists():  # the suite run from an exported tree: the case below
        assert revision_in(ROOT) == "unknown"
        return
    before = described()
    found = revision_in(ROOT).removesuffix("-dirty")  # others may be editing the checkout
    assert found in {before, described()}  # or committing, meanwhile


def test_a_tree_that_is_no_checkout_says_unknown(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "controller", tree / "controller", ignore=shutil.ignore_patterns("*.pyc")
    )
    assert revision_in(tree) == "unknown"


def test_an_install_from_git_names_the_commit_pip_recorded(tmp_path: Path) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    dist = tmp_path / "site" / "paigow_jackpot-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: paigow-jackpot\nVersion: 0.1.0\n")
    (dist / "direct_url.json").write_text(
        json.dumps({"url": "https://example.org/jackpotd.git",
                    "vcs_info": {"vcs": "git", "commit_id": commit}})
    )  # fmt: skip
    assert revision_in(tmp_path / "site", ROOT) == commit
