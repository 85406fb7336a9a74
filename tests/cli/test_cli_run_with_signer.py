"""``jackpotd run`` signs through the signer process, and a journal rolled back gets no signature.

A real signer (``jackpotd signer``, tests/support/runtime/signer_process.py) holds the key; the
daemon's configuration names only its socket (``[controller] signer_socket``). The daemon starts,
signs its checkpoints and heads through it, and ``jackpotd verify --controller-key`` accepts them.
Then the journal is put back to a copy taken before that run and the high-water file beside it is
removed, as a shell as the service user could: without the key the service user cannot sign,
and the signer refuses the rolled-back head, so the daemon does not start on it
(docs/operations.md, "The signer").
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Final

from support.runtime.controller_keys import KEY_FILE
from support.runtime.daemon_process import ready, signer_config
from support.runtime.signer_process import running

from drivers.simulator_links.serial import PtyPair

ROOT: Final = Path(__file__).resolve().parents[2]
WAIT_S: Final = 60.0
CHILD: Final = {**os.environ, "PYTHONPATH": str(ROOT)}
SIDES: Final = ("", "-wal", "-shm")


def copy_journal(source: Path, target: Path) -> None:
    for side in SIDES:
        Path(f"{target}{side}").unlink(missing_ok=True)
        if Path(f"{source}{side}").exists():
            shutil.copy2(f"{source}{side}", f"{target}{side}")


def run_and_stop(folder: Path, config: Path) -> None:
    """``jackpotd run`` until READY=1, then SIGTERM; it must exit 0."""
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(folder / "notify.sock"))
    notify.settimeout(1.0)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        env={**CHILD, "NOTIFY_SOCKET": str(folder / "notify.sock")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        ready(notify, daemon)
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=WAIT_S)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        notify.close()
        (folder / "notify.sock").unlink(missing_ok=True)
    assert daemon.returncode == 0, err


def test_the_daemon_signs_through_the_signer_and_a_rolled_back_journal_does_not_start(
    tmp_path: Path,
) -> None:
    with PtyPair() as line:
        config = signer_config(tmp_path, line.path)
        signer = running(tmp_path / KEY_FILE, tmp_path, "test")
        next(signer)
        try:
            refused = rolled_back(tmp_path, config)
        finally:
            signer.close()
    assert refused.returncode == 1, refused.stderr
    assert "the signer refused" in refused.stderr
    assert "the journal went back" in refused.stderr


def rolled_back(tmp_path: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """Run, verify, roll the journal back as the service user could, and start again."""
    journal = tmp_path / "journal.db"
    copy_journal(journal, tmp_path / "backup.db")
    run_and_stop(tmp_path, config)
    verified = subprocess.run(
        [
            sys.executable, "-m", "controller", "verify", "--config", str(config),
            "--controller-key", str(tmp_path / "controller.pub"), "--strict",
        ],
        env=CHILD, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # The service user's rollback: the journal as it was, the high-water file gone.
    copy_journal(tmp_path / "backup.db", journal)
    Path(f"{journal}.high-water").unlink()
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        env=CHILD, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
    )  # fmt: skip
