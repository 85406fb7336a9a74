"""The systemd unit and the daemon's notifications.

docs/operations.md, "Run under systemd".

The unit is checked with ``systemd-analyze verify`` (installed with systemd); the daemon is run
with ``NOTIFY_SOCKET`` pointing at a datagram socket the test owns, as systemd would, and must
send READY, then WATCHDOG keep-alives, then STOPPING on SIGTERM, and exit 0.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

UNIT = Path(__file__).parents[2] / "systemd" / "jackpotd.service"


def test_unit_is_type_notify_with_watchdog_user_and_hardening() -> None:
    text = UNIT.read_text()
    for line in (
        "Type=notify",
        "WatchdogSec=",
        "Restart=on-failure",
        "User=jackpotd",
        "SupplementaryGroups=dialout",
        "StateDirectory=jackpotd",
        "ConfigurationDirectory=jackpotd",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "LimitNOFILE=",
        # No bytecode cache read or written, no writable folder on the import path
        # (controller/security/bytecode.py; tests/security/test_bytecode.py plants the .pyc).
        "Environment=PYTHONDONTWRITEBYTECODE=1",
        "Environment=PYTHONPYCACHEPREFIX=/dev/null/jackpotd-pycache",
        "Environment=PYTHONSAFEPATH=1",
        "Environment=PYTHONNOUSERSITE=1",
    ):
        assert line in text, line


def test_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: make test installs systemd"
    # The unit starts the environment's interpreter (on the launcher, -I -S): this one.
    unit = tmp_path / "jackpotd.service"
    unit.write_text(UNIT.read_text().replace("/opt/jackpotd/bin/python", sys.executable))
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    problems = [line for line in done.stderr.splitlines() if "jackpotd.service" in line]
    assert done.returncode == 0, done.stderr
    assert problems == []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "jackpotd.toml"
    write_controller_key(tmp_path)
    path.write_text(
        f"""
[controller]
site = "test"
id = "c1"
journal = "journal.db"
{KEY_LINE}
[[pools]]
id = "P1"
paytable = "progressive-1"

[[tables]]
id = "T1"
transport = "simulator"
bonus = "fortune-1"
progressive = "progressive-1"
pool = "P1"

[web]
port = {free_port()}

[simulator]
round_interval_s = 0.05
"""
    )
    approved_site(path)
    return path


def test_operations_systemd_daemon_sends_ready_watchdog_and_stopping_to_notify_socket(
    config: Path, tmp_path: Path
) -> None:
    address = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(address)
    listener.settimeout(30)
    env = {**os.environ, "NOTIFY_SOCKET": address, "WATCHDOG_USEC": "200000"}
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    messages: list[str] = []
    try:
        while not any(m.startswith("WATCHDOG=1") for m in messages):
            messages.append(listener.recv(4096).decode())
        watchdogs_before = sum(m == "WATCHDOG=1" for m in messages)
        time.sleep(0.35)  # keep-alives come every WATCHDOG_USEC / 2
        listener.settimeout(1)
        while True:
            try:
                messages.append(listener.recv(4096).decode())
            except TimeoutError:
                break
            if sum(m == "WATCHDOG=1" for m in messages) >= watchdogs_before + 2:
                break
        process.send_signal(signal.SIGTERM)
        listener.settimeout(30)
        while not any(m.startswith("STOPPING=1") for m in messages):
            messages.append(listener.recv(4096).decode())
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        listener.close()
    assert messages[0].startswith("READY=1\nSTATUS=serving http://127.0.0.1:")
    assert sum(m == "WATCHDOG=1" for m in messages) >= 2
    assert process.returncode == 0
