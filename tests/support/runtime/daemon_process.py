"""``jackpotd run`` as a real process: its environment, its READY=1, a configuration on a signer.

:func:`ready` waits, bounded, for the daemon's ``READY=1`` on its notify socket as systemd
would; :func:`signer_config` writes a site whose controller key is named only by the signer's
socket (``[controller] signer_socket``, docs/operations.md, "The signer"). Shared by
tests/cli/test_cli_action_checkpointed_at_stop.py and tests/cli/test_cli_run_*signer*.py.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.security.controller_key import load_key
from support.runtime.controller_keys import KEY_FILE, KEY_LINE
from support.runtime.floor import approved_site, free_port, write_config

if TYPE_CHECKING:
    import socket
    import subprocess

ROOT: Final = Path(__file__).resolve().parents[3]
WAIT_S: Final = 60.0
CHILD: Final = {**os.environ, "PYTHONPATH": str(ROOT)}


def ready(notify: socket.socket, daemon: subprocess.Popen[str]) -> None:
    """Wait, bounded, for the daemon's READY=1 (as systemd would); fail if it exits first."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            if notify.recv(4096).decode().startswith("READY=1"):
                return
        except TimeoutError:
            assert daemon.poll() is None, daemon.communicate()[1]
    raise AssertionError("the daemon never said READY=1")


def signer_config(folder: Path, line: str) -> Path:
    """One pool and a table on a pty line; the key named by the signer's socket only."""
    path = write_config(folder, "test", {"T1": line}, free_port())
    text = path.read_text(encoding="utf-8")
    socket_line = f'signer_socket = "{folder / "signer.sock"}"\n'
    path.write_text(text.replace(KEY_LINE, socket_line), "utf-8")
    key = load_key(folder / KEY_FILE)
    (folder / "controller.pub").write_text(key.public_key + "\n", encoding="utf-8")
    approved_site(path)
    return path
