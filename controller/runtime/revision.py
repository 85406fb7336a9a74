"""The source revision the running controller was built from, for ``jackpotd_build_info``.

In order, the first that answers (docs/metrics.md):

1. the package's install metadata: ``direct_url.json`` (PEP 610), which pip writes with the
   commit a ``git+`` install was built from (``vcs_info.commit_id``);
2. ``git describe --always --dirty --tags`` of the source tree the package is imported from,
   when that tree is a git checkout (a developer's, the lab's);
3. ``unknown``.

Asked once per process: the revision of the running code does not change under it.
"""

from __future__ import annotations

import functools
import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Final

DISTRIBUTION: Final = "paigow-jackpot"
UNKNOWN: Final = "unknown"
GIT_TIMEOUT_S: Final = 2.0
ROOT: Final = Path(__file__).resolve().parents[2]


def _installed() -> str | None:
    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return None
    vcs = found.get("vcs_info") if isinstance(found, dict) else None
    commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
    return commit if isinstance(commit, str) and commit else None


def _described(root: Path) -> str | None:
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(  # noqa: S603 - a fixed command line
            ["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],  # noqa: S607
            capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # no git on the host, or it hung
    described = done.stdout.strip()
    return described if done.returncode == 0 and described else None


@functools.cache
def revision() -> str:
    """The running code's revision (see the module docstring)."""
    return _installed() or _described(ROOT) or UNKNOWN
