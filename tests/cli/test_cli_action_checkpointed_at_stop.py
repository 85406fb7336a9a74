"""A clean stop seals a signed checkpoint over an operator's action appended while it ran.

An operator's action at the command line (``jackpotd adjust``, signed by two supervisors)
appends to the journal from another process while ``jackpotd run`` serves it. When the daemon
is stopped cleanly (SIGTERM) it writes a checkpoint before it exits (controller/runtime/
checkpointing.py), and that checkpoint must cover the action's row: otherwise the journal ends
on rows no signature covers, and the next start has nothing signed to check them against
(docs/security.md, section 2.3). A real daemon process, a real journal file, the real CLI.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Final

from support.ledger.approvals import PASSPHRASE
from support.runtime.controller_keys import KEY_FILE
from support.runtime.daemon_process import ready
from support.runtime.floor import POOL, approved_site, free_port, write_config

from controller.journal.checkpoints import KIND
from controller.security.controller_key import load_key
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from support.ledger.approvals import Site

ROOT: Final = Path(__file__).resolve().parents[2]
WAIT_S: Final = 60.0
CHILD: Final = {**os.environ, "PYTHONPATH": str(ROOT)}


def site_config(folder: Path, line: str) -> tuple[Path, Site]:
    """One pool and a table on a pty line nobody writes to; approved to run."""
    path = write_config(folder, "test", {"T1": line}, free_port())
    key = load_key(folder / KEY_FILE)
    (folder / "controller.pub").write_text(key.public_key + "\n", encoding="utf-8")
    return path, approved_site(path)


def rows(journal: Path) -> list[tuple[int, str, str]]:
    with closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as db:
        return list(db.execute("SELECT seq, kind, event FROM journal ORDER BY seq"))


def test_a_clean_stop_checkpoints_an_operator_action_appended_while_it_ran(
    tmp_path: Path,
) -> None:
    with PtyPair() as line:
        config, site = site_config(tmp_path, line.path)
        _run_adjust_and_stop(tmp_path, config, site)
    journal = rows(tmp_path / "journal.db")
    action = next(seq for seq, kind, _ in journal if kind == "meter-adjusted")
    seq, _, event = [row for row in journal if row[1] == KIND][-1]
    assert seq > action
    assert json.loads(event)["head_seq"] >= action  # the last checkpoint covers the action
    verified = subprocess.run(
        [
            sys.executable, "-m", "controller", "verify", "--config", str(config),
            "--controller-key", str(tmp_path / "controller.pub"), "--strict",
        ],
        env=CHILD, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _run_adjust_and_stop(tmp_path: Path, config: Path, site: Site) -> None:
    """Start ``jackpotd run``; once ready, adjust the meter at the command line; SIGTERM it."""
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify.sock"))
    notify.settimeout(1.0)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        env={**CHILD, "NOTIFY_SOCKET": str(tmp_path / "notify.sock")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        ready(notify, daemon)
        adjusted = subprocess.run(
            [
                sys.executable, "-m", "controller", "adjust", POOL, "--config", str(config),
                "--amount", "+$5.00", "--reason", "seed correction, slip 4411",
                "--key", str(site.key_file("sup1", tmp_path)),
                "--key", str(site.key_file("sup2", tmp_path)),
            ],
            env={**CHILD, "JACKPOTD_PASSPHRASE_1": PASSPHRASE, "JACKPOTD_PASSPHRASE_2": PASSPHRASE},
            capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
        )  # fmt: skip
        assert adjusted.returncode == 0, adjusted.stderr
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=WAIT_S)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        notify.close()
    assert daemon.returncode == 0, err
