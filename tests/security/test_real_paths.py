"""The self-check's real paths (controller/security/installed.py ``RealPaths``) are realpath's.

A file's real path decides whether a file of an install folder belongs to a distribution (its
RECORD lists it, maybe through a link) or to none (a planted module: docs/security.md). The
self-check works it out from the file's folder, resolved once a folder; here its answers are
``os.path.realpath``'s for a plain file, a link to a file, a file in a linked folder, a link
to a link, a dangling link, a missing file and a relative path.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from controller.security.installed import RealPaths

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_real_paths_are_realpaths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    (real / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(real)
    (real / "pkg" / "alias.py").symlink_to(real / "pkg" / "mod.py")
    (real / "pkg" / "alias2.py").symlink_to(real / "pkg" / "alias.py")
    (real / "pkg" / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    paths = [
        real / "pkg" / "mod.py",
        tmp_path / "linked" / "pkg" / "mod.py",
        tmp_path / "linked" / "pkg" / "alias.py",
        real / "pkg" / "alias2.py",
        real / "pkg" / "dangling.py",
        real / "pkg" / "missing.py",
        tmp_path / "linked" / "pkg" / ".." / "pkg" / "mod.py",
    ]
    resolver = RealPaths()
    for path in paths * 2:  # the second time from the folders it kept
        assert resolver.of(path) == os.path.realpath(path), path
    monkeypatch.chdir(tmp_path / "linked")
    assert resolver.of("pkg/mod.py") == os.path.realpath("pkg/mod.py")
