"""``jackpotd`` run in a child whose stderr (and stdout, if asked) is a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONTROLS = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(
    *argv: str,
    stdout_too: bool = False,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    columns: int | None = None,
) -> tuple[int, str, bytes]:
    """``jackpotd ARGV``'s exit status, what the terminal showed, and its stdout otherwise.

    What the terminal showed has its control sequences (colours, cursor moves) taken out. The
    terminal is read while the command runs: its buffer is small, and a command drawing a
    progress bar would otherwise wait on it for ever. ``columns``: the terminal's width, set
    on it as a terminal emulator sets it (``TIOCSWINSZ``), with no ``$COLUMNS`` to override it.
    """
    leader, follower = pty.openpty()
    base = dict(os.environ)
    if columns is not None:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        for name in ("COLUMNS", "LINES"):
            base.pop(name, None)
        base["TERM"] = "xterm-256color"
    with tempfile.TemporaryFile() as out:
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "controller", *argv],
                stdin=subprocess.DEVNULL, stdout=follower if stdout_too else out,
                stderr=follower, env=base | {"PYTHONPATH": str(ROOT)} | (env or {}),
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
