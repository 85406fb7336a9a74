"""``jackpotd agent``: a bad configuration or outbox is one line and exit status 1."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from support.cli.cli_runs import run

from controller.journal.sqlite.agent_outbox import AgentOutboxStore

if TYPE_CHECKING:
    import pytest

GOOD = """
[agent]
table_id = "t1"
outbox = "agent.db"

[broker]
host = "127.0.0.1"

[[serial]]
name = "sensors"
url = "/dev/null"
"""


def test_a_missing_configuration_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "agent", "--config", str(tmp_path / "agent.toml"))
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1
    assert "agent.toml: (file): cannot read" in err


def test_a_bad_key_names_the_file_and_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(GOOD.replace('outbox = "agent.db"', 'outbox = "agent.db"\nclosed = 3'))
    status, _, err = run(capsys, "agent", "--config", str(path))
    assert status == 1
    assert f"{path}: agent.closed: " in err


def test_an_outbox_of_another_table_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    AgentOutboxStore(tmp_path / "agent.db", "t9").close()
    path = tmp_path / "agent.toml"
    path.write_text(GOOD)
    status, _, err = run(capsys, "agent", "--config", str(path))
    assert status == 1
    assert "belongs to table 't9', not 't1'" in err
    assert err.count("\n") == 1


UNIT = Path(__file__).parents[2] / "systemd" / "jackpotd-agent.service"


def test_the_agent_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: make test installs systemd"
    text = UNIT.read_text(encoding="utf-8")
    for line in ("Type=notify", "WatchdogSec=", "User=jackpotd", "ProtectSystem=strict"):
        assert line in text, line
    unit = tmp_path / "jackpotd-agent.service"
    jackpotd = Path(sys.executable).parent / "jackpotd"
    unit.write_text(text.replace("/opt/jackpotd/bin/jackpotd", str(jackpotd)), encoding="utf-8")
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "jackpotd-agent.service" in line] == []


def test_the_agent_tells_systemd_ready_watchdog_and_stopping(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    # No broker listens on port 1 and /dev/null is no serial line: both are retried, and the
    # agent runs, closed, all the same.
    path.write_text(GOOD.replace('host = "127.0.0.1"', 'host = "127.0.0.1"\nport = 1'))
    address = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(address)
        listener.settimeout(30)
        env = {**os.environ, "NOTIFY_SOCKET": address, "WATCHDOG_USEC": "200000"}
        process = subprocess.Popen(
            [sys.executable, "-m", "controller", "agent", "--config", str(path)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            messages = [listener.recv(4096).decode()]
            while not any(m == "WATCHDOG=1" for m in messages):
                messages.append(listener.recv(4096).decode())
            process.send_signal(signal.SIGTERM)
            while not any(m.startswith("STOPPING=1") for m in messages):
                messages.append(listener.recv(4096).decode())
            assert process.wait(timeout=30) == 0
        finally:
            process.kill()
            process.wait()
    assert messages[0].startswith("READY=1\nSTATUS=table t1, boot ")
