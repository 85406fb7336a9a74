"""``jackpotd`` run in a child whose stderr (and stdout, if asked) is a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTROLS = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(
    *argv: str, stdout_too: bool = False, env: dict[str, str] | None = None, timeout: float = 120
) -> tuple[int, str, bytes]:
    """``jackpotd ARGV``'s exit status, what the terminal showed, and its stdout otherwise.

    What the terminal showed has its control sequences (colours, cursor moves) taken out. The
    terminal is read while the command runs: its buffer is small, and a command drawing a
    progress bar would otherwise wait on it for ever.
    """
    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as out:
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "controller", *argv],
                stdin=subprocess.DEVNULL, stdout=follower if stdout_too else out,
                stderr=follower, env=os.environ | {"PYTHONPATH": str(ROOT)} | (env or {}),
            )  # fmt: skip
        finally:
            os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal is closed once the command has exited
                break
            if not chunk:
                break
            shown += chunk
        os.close(leader)
        status = child.wait(timeout=timeout)
        out.seek(0)
        return status, CONTROLS.sub("", shown.decode()), out.read()
