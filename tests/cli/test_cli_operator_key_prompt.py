"""``jackpotd operator key`` at a terminal asks again after a weak or mistyped passphrase.

docs/operations.md, "Enrollment": a new operator types a passphrase at the prompt.
One the key file refuses (controller/security/keys.py, ``check_passphrase``) used to end the
command, and the operator started over; at a terminal it is now said, with what is wrong, and
asked again, three times at most. The command runs under a real pseudo-terminal that is its
controlling terminal (getpass reads ``/dev/tty``), and the test types as an operator would.
"""

from __future__ import annotations

import json
import os
import pty
import select
import sys
import time
from typing import TYPE_CHECKING

from support.cli.terminal import ROOT

if TYPE_CHECKING:
    from pathlib import Path

WEAK = "password123"
STRONG = "ochre kettle 4471 rowan"
TIMEOUT = 60.0


class Terminal:
    """A child's controlling pseudo-terminal: wait for text, type lines."""

    def __init__(self, *argv: str) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the pty is its stdin, stdout, stderr and /dev/tty
            os.environ["PYTHONPATH"] = str(ROOT)
            os.execv(sys.executable, [sys.executable, "-m", "controller", *argv])  # noqa: S606
        self.pid, self.fd, self.shown, self.everything = pid, fd, "", ""

    def wait_for(self, text: str) -> str:
        """Everything shown up to and including ``text``, taken (bounded: fails after TIMEOUT).

        What came after it in the same read stays in :attr:`shown` for the next wait: a
        message and the prompt after it often come in one chunk.
        """
        deadline = time.monotonic() + TIMEOUT
        while text not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0, f"never shown: {text!r}; shown: {self.shown!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child has exited and closed the terminal
                    chunk = b""
                assert chunk, f"exited before showing {text!r}; shown: {self.shown!r}"
                self.shown += chunk.decode()
                self.everything += chunk.decode()
        end = self.shown.index(text) + len(text)
        taken, self.shown = self.shown[:end], self.shown[end:]
        return taken

    def type(self, line: str) -> None:
        """Type ``line`` and Enter."""
        os.write(self.fd, line.encode() + b"\r")

    def status(self) -> int:
        """Read the rest and reap the child: its exit status."""
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.shown += chunk.decode()
            self.everything += chunk.decode()
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def test_a_weak_passphrase_typed_is_asked_again(tmp_path: Path) -> None:
    out = tmp_path / "sam.key"
    terminal = Terminal("operator", "key", "Sam Supervisor", "--out", str(out))
    terminal.wait_for("new passphrase for Sam Supervisor: ")
    terminal.type(WEAK)
    shown = terminal.wait_for("try again (2 left)")
    assert "a passphrase has at least 12 characters" in shown
    terminal.wait_for("new passphrase for Sam Supervisor: ")
    terminal.type(STRONG)
    terminal.wait_for("again: ")
    terminal.type(STRONG)
    assert terminal.status() == 0
    assert "public key" in terminal.shown
    assert STRONG not in terminal.everything  # never echoed
    assert WEAK not in terminal.everything
    assert json.loads(out.read_text())["operator"] == "Sam Supervisor"
    assert out.stat().st_mode & 0o777 == 0o600


def test_a_mistyped_second_entry_is_asked_again(tmp_path: Path) -> None:
    out = tmp_path / "sam.key"
    terminal = Terminal("operator", "key", "Sam Supervisor", "--out", str(out))
    terminal.wait_for("new passphrase for Sam Supervisor: ")
    terminal.type(STRONG)
    terminal.wait_for("again: ")
    terminal.type(STRONG + "x")
    terminal.wait_for("the passphrases differ; try again (2 left)")
    terminal.wait_for("new passphrase for Sam Supervisor: ")
    terminal.type(STRONG)
    terminal.wait_for("again: ")
    terminal.type(STRONG)
    assert terminal.status() == 0
    assert out.exists()


def test_three_weak_passphrases_end_the_command_with_no_key_file(tmp_path: Path) -> None:
    out = tmp_path / "sam.key"
    terminal = Terminal("operator", "key", "Sam Supervisor", "--out", str(out))
    asked = ""
    for _ in range(3):
        asked += terminal.wait_for("new passphrase for Sam Supervisor: ")
        terminal.type(WEAK)
    assert "try again (1 left)" in asked
    assert terminal.status() == 1  # what the third answer brought is in terminal.shown
    assert terminal.shown.strip() == "jackpotd: a passphrase has at least 12 characters"
    assert not out.exists()
