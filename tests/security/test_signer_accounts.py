"""What each account can do with the controller key once the signer holds it.

The signer's unit (systemd/jackpotd-signer.service) runs as its own user with the key as its
credential; the service (jackpotd) gets only the socket. These tests read the unit the way
systemd does (``systemd-analyze verify``), check the lines that keep the key and the marks the
signer's alone, and show with a real unprivileged process (``setpriv`` to ``nobody``) that
another user can neither read a key file of mode 0600 nor start a signer on it
(docs/operations.md, "The signer").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest
from support.runtime.controller_keys import write_controller_key

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT: Final = Path(__file__).resolve().parents[2]
UNIT: Final = ROOT / "systemd" / "jackpotd-signer.service"
SERVICE: Final = ROOT / "systemd" / "jackpotd.service"
NOBODY: Final = 65534


def test_the_signer_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: make test installs systemd"
    unit = tmp_path / "jackpotd-signer.service"
    unit.write_text(UNIT.read_text().replace("/opt/jackpotd/bin/python", sys.executable))
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "jackpotd-signer" in line] == []


def test_the_key_and_the_marks_are_the_signer_user_s_and_the_socket_the_service_s() -> None:
    text = UNIT.read_text()
    for line in (
        "User=jackpotd-signer",  # not the service user
        "Group=jackpotd",  # the socket's group: the service connects
        "LoadCredential=controller-key:/etc/credstore/jackpotd-controller-key",
        "--key ${CREDENTIALS_DIRECTORY}/controller-key",
        "RuntimeDirectory=jackpotd-signer",
        "RuntimeDirectoryMode=0750",
        "StateDirectory=jackpotd-signer",
        "StateDirectoryMode=0700",
        "UMask=0077",
        "RestrictAddressFamilies=AF_UNIX",
        "PrivateNetwork=yes",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
    ):
        assert line in text, line
    assert "User=jackpotd\n" in SERVICE.read_text()  # the writer is another user


def as_nobody(*command: str) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is missing"
    return subprocess.run(
        [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd="/",
    )  # fmt: skip


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's tmp_path is under a root-only one)."""
    folder = Path(tempfile.mkdtemp(prefix="signer-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_another_user_cannot_read_the_key_nor_sign_with_it(open_folder: Path) -> None:
    write_controller_key(open_folder)
    key = open_folder / "controller.key"
    assert as_nobody("ls", "-l", str(key)).returncode == 0  # the folder does not stop them
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert key.stat().st_uid != NOBODY
    read = as_nobody("cat", str(key))
    assert read.returncode != 0
    assert "Permission denied" in read.stderr
    signer = as_nobody(
        sys.executable, "-m", "controller", "signer", "--key", str(key),
        "--socket", "/nonexistent/s.sock", "--state", "/nonexistent/marks.json",
        "--controller", "c1",
    )  # fmt: skip
    assert signer.returncode == 1, signer.stderr
    assert "cannot read the controller key: Permission denied" in signer.stderr
