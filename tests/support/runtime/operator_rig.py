"""A running ``jackpotd run`` with its operator socket, its operators' keys out of its reach.

The daemon (a real process, a real journal, a table on a pty line) runs as the service user;
when the tests run as root that is a real other user, ``nobody`` (``setpriv``), who owns the
daemon's folder and nothing else. The operators' key files are root's, mode 0600, in a folder
of root's alone: the service user cannot read them, and the operators (the tests, as root)
sign with them through ``[controller] operator_socket`` (docs/operations.md, "Signing as the
operator"). Supervisors Sam Okafor and Lee Chen, manager Dana Reyes, their files ``sam.key``,
``lee.key`` and ``dana.key``; a jackpot of $10,000 and more pending (dual control) under
:data:`PAY`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.events import RoundSettled, WagerLocked
from controller.ledger_journal.sqlite import Journal
from drivers.simulator_links.serial import PtyPair
from support.ledger.approvals import PASSPHRASE, Site
from support.runtime.controller_keys import KEY_LINE
from support.runtime.floor import approved_site, free_port, write_config

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT: Final = Path(__file__).resolve().parents[3]
WAIT_S: Final = 60.0
NOBODY: Final = 65534
DANA, LEE, SAM = "Dana Reyes", "Lee Chen", "Sam Okafor"
FILES: Final = {DANA: "dana.key", LEE: "lee.key", SAM: "sam.key"}
ROUNDS: Final = ("T1/shoe-07f6b07f/353", "T1/shoe-07f6b07f/354", "T1/shoe-07f6b07f/355")
PAY, PAY2, PAY3 = (f"{round_id}/1/progressive" for round_id in ROUNDS)
"""Five aces on seat 1 of each: the pool's meter, $10,000 (over $5,000: two signatures)."""
FIVE_ACES: Final = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
DEALER: Final = ["3c", "4d", "6s", "8d", "Tc", "Qc", "7s"]
AT: Final = "2026-11-29T15:00:00Z"


@dataclass
class Running:
    """The daemon's folder, journal, socket and process; the operators' folder and site."""

    folder: Path
    keys: Path
    config: Path
    journal: Path
    socket: Path
    process: subprocess.Popen[str]
    site: Site
    line: PtyPair
    web_port: int

    def jackpotd(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``jackpotd ARGV`` as the operators (the tests' user), through the socket."""
        return subprocess.run(
            [sys.executable, "-m", "controller", *argv],
            env=operator_environment(self.socket), capture_output=True, text=True,
            timeout=WAIT_S, cwd=cwd or self.keys, check=False,
        )  # fmt: skip

    def key(self, name: str) -> Path:
        """An operator's key file."""
        return self.keys / FILES[name]


def operator_environment(path: Path) -> dict[str, str]:
    """What an operator's shell has: the socket, the passphrases (the tests' own)."""
    return os.environ | {
        "PYTHONPATH": str(ROOT),
        "JACKPOTD_OPERATOR_SOCKET": str(path),
        "JACKPOTD_PASSPHRASE": PASSPHRASE,
        "JACKPOTD_PASSPHRASE_1": PASSPHRASE,
        "JACKPOTD_PASSPHRASE_2": PASSPHRASE,
    }


def as_nobody() -> list[str]:
    """The prefix that runs a command as ``nobody`` (the tests run as root)."""
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is missing"
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@functools.cache
def as_service_user() -> list[str]:
    """The prefix that runs the daemon as the service user: ``nobody`` where it can, else us.

    ``nobody`` under root, when it can reach the interpreter the daemon restarts itself on and
    hashes into its manifest (an interpreter under root's home, 0700, it cannot: the daemon then
    runs as the tests' own user, and the key files are shown unreadable to ``nobody`` instead).
    """
    if os.geteuid() != 0:
        return []
    probe = "import os, sys; os.stat(os.path.realpath(sys.executable))"
    reached = subprocess.run(
        [*as_nobody(), sys.executable, "-c", probe], capture_output=True, check=False, cwd="/"
    )
    return as_nobody() if reached.returncode == 0 else []


def _pending_jackpot(journal: Path, site: Site) -> None:
    """Rounds settled by hand (signed, as a supervisor may): five aces pending on seat 1."""
    with Journal(journal) as opened:
        live = Site(opened, site.keys)
        for round_id in ROUNDS:
            wager = WagerLocked(f"{round_id}/w1", AT, "T1", round_id, 1, "progressive", 100)
            live.append(live.sign(wager, SAM))
            settled = RoundSettled(round_id, AT, "T1", round_id, DEALER, {"1": FIVE_ACES})
            live.append(live.sign(settled, SAM))
        assert {PAY, PAY2, PAY3} <= set(opened.state.pending)


def _site(config: Path, keys: Path) -> Site:
    site = approved_site(config)
    with Journal(load_journal(config)) as opened:
        live = Site(opened, site.keys)
        live.enroll(SAM, "supervisor", by="mgr")
        live.enroll(LEE, "supervisor", by="mgr")
        live.enroll(DANA, "manager", by="mgr")  # last: then enrollments take two managers
    for name, file in FILES.items():
        live.key_file(name, keys).rename(keys / file)
    return live


def load_journal(config: Path) -> Path:
    return config.parent / "journal.db"


def _hand_over(folder: Path, line: PtyPair) -> None:
    """Everything of the daemon's to the service user (``nobody`` under root)."""
    if not as_service_user():
        return
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    os.chown(line.path, NOBODY, NOBODY)


def _ready(notify: socket.socket, process: subprocess.Popen[str], path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            if notify.recv(4096).decode().startswith("READY=1"):
                assert path.exists(), "READY=1 without the operator socket"
                return
        except TimeoutError:
            assert process.poll() is None, process.communicate()[1]
    raise AssertionError("the daemon never said READY=1")


@contextlib.contextmanager
def running_daemon(more: str = "") -> Iterator[Running]:
    """The daemon with its operator socket until the block ends (then SIGTERM, exit 0).

    ``more`` is appended to its configuration file (a sign's section, say).
    """
    folder = Path(tempfile.mkdtemp(prefix="jackpotd-ops-", dir="/tmp"))
    keys = Path(tempfile.mkdtemp(prefix="operators-", dir="/tmp"))  # 0700, the operators'
    folder.chmod(0o755)
    try:
        with PtyPair() as line:
            port = free_port()
            config = write_config(folder, "test", {"T1": line.path}, port)
            lines = (
                f'{KEY_LINE}\noperator_socket = "operator.sock"\nverification_amount = "$1,000"\n'
                'dual_control_amount = "$5,000"\n'
            )
            config.write_text(config.read_text().replace(KEY_LINE, lines) + more, "utf-8")
            site = _site(config, keys)
            _pending_jackpot(load_journal(config), site)
            _hand_over(folder, line)
            with _process(folder, config) as process:
                yield Running(
                    folder, keys, config, load_journal(config), folder / "operator.sock",
                    process, site, line, port,
                )  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(keys, ignore_errors=True)


@contextlib.contextmanager
def _process(folder: Path, config: Path) -> Iterator[subprocess.Popen[str]]:
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(folder / "notify.sock"))
    (folder / "notify.sock").chmod(0o777)  # the service user sends to it
    notify.settimeout(1.0)
    process = subprocess.Popen(
        [*as_service_user(), sys.executable, "-m", "controller", "run", "--config", str(config)],
        env=os.environ | {"PYTHONPATH": str(ROOT), "NOTIFY_SOCKET": str(folder / "notify.sock")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        _ready(notify, process, folder / "operator.sock")
        yield process
        process.terminate()
        _, err = process.communicate(timeout=WAIT_S)
        assert process.returncode == 0, err
        assert not (folder / "operator.sock").exists()  # removed at a clean stop
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        notify.close()
