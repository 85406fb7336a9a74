"""``jackpotd key generate --sealing``: the sealing key, run as docs/operations.md gives it.

docs/operations.md ("The signer") and docs/ha.md ("Mystery levels across a failover"): the key
the cluster's signers share, written at mode 0600, never over an existing file, its id printed
and its secret nowhere but in the file; the signer reads it with ``--sealing-key`` and a key
file of another kind is refused with its reason.
"""

from __future__ import annotations

import re
import shlex
import stat
import subprocess
import sys
from typing import TYPE_CHECKING

from support.deploy.source_tree import ROOT

from controller.security.sealing_key import load_sealing_key

if TYPE_CHECKING:
    from pathlib import Path

PAGE = ROOT / "docs" / "operations.md"
COMMAND = "jackpotd key generate --sealing --out sealing.key"


def jackpotd(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_the_documented_command_writes_a_sealing_key_and_prints_only_its_id(
    tmp_path: Path,
) -> None:
    assert COMMAND in PAGE.read_text(encoding="utf-8")
    argv = shlex.split(COMMAND)[1:]
    done = jackpotd(tmp_path, *argv)
    assert done.returncode == 0, done.stderr
    key = load_sealing_key(tmp_path / "sealing.key")
    assert stat.S_IMODE((tmp_path / "sealing.key").stat().st_mode) == 0o600
    assert re.match(rf"sealing key {key.key_id} written to sealing.key \(mode 0600\)", done.stdout)
    assert key.secret.hex() not in done.stdout
    again = jackpotd(tmp_path, *argv)
    assert again.returncode != 0
    assert "exists" in again.stderr
    assert load_sealing_key(tmp_path / "sealing.key") == key  # never over an existing file


def test_a_sealing_key_has_no_public_half_and_a_controller_key_is_not_one(tmp_path: Path) -> None:
    done = jackpotd(tmp_path, "key", "generate", "--sealing", "--out", "s.key", "--public-out",
                    "s.pub")  # fmt: skip
    assert done.returncode != 0
    assert "a sealing key has no public half" in done.stderr
    jackpotd(tmp_path, "key", "generate", "--out", "controller.key")
    signer = jackpotd(
        tmp_path, "signer", "--key", "controller.key", "--socket", "s.sock", "--state",
        "marks.json", "--controller", "c1", "--sealing-key", "controller.key",
    )  # fmt: skip
    assert signer.returncode != 0
    assert "not a sealing key file" in signer.stderr
