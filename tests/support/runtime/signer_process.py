"""A real ``jackpotd signer`` process on a Unix socket, for the tests that sign through it."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Generator

ROOT: Final = Path(__file__).resolve().parents[3]
WAIT_S: Final = 30.0
CHILD: Final = {**os.environ, "PYTHONPATH": str(ROOT)}


@dataclass
class SignerProcess:
    """The signer's socket, state file, and the running process."""

    socket: Path
    state: Path
    process: subprocess.Popen[str]

    def stop(self) -> str:
        """SIGTERM it; what it logged."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=WAIT_S)
        assert self.process.returncode == 0, err
        return err


def start_signer(
    key: Path, folder: Path, controller: str = "c1", sealing: Path | None = None
) -> SignerProcess:
    """Start ``jackpotd signer`` and wait, bounded, for the line saying it listens.

    ``sealing``: the mystery levels' sealing key file (``--sealing-key``).
    """
    socket_path, state = folder / "signer.sock", folder / "signer-marks.json"
    sealed = [] if sealing is None else ["--sealing-key", str(sealing)]
    process = subprocess.Popen(
        [
            sys.executable, "-m", "controller", "signer", "--key", str(key),
            "--socket", str(socket_path), "--state", str(state), "--controller", controller,
            *sealed,
        ],
        env=CHILD, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if selector.select(timeout=deadline - time.monotonic()):
                line = process.stdout.readline()
                if line.startswith("signing with key"):
                    return SignerProcess(socket_path, state, process)
                if not line:
                    break
    process.kill()
    raise AssertionError(f"the signer never listened: {process.communicate()[1]}")


def running(
    key: Path, folder: Path, controller: str = "c1", sealing: Path | None = None
) -> Generator[SignerProcess]:
    """A signer for the length of a test (a fixture's body)."""
    signer = start_signer(key, folder, controller, sealing)
    try:
        yield signer
    finally:
        if signer.process.poll() is None:
            signer.process.kill()
            signer.process.communicate()


def stoppable(key: Path, folder: Path, controller: str = "c1") -> Generator[SignerProcess]:
    """As :func:`running`, for a test that stops it (SIGSTOP): continued before it is ended."""
    process = running(key, folder, controller)
    signer = next(process)
    try:
        yield signer
    finally:
        if signer.process.poll() is None:
            os.kill(signer.process.pid, signal.SIGCONT)
        process.close()
