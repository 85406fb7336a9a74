"""The service end to end: the demo, the display endpoints, metrics, SIGTERM drain.

docs/operations.md, "Run under systemd"; docs/architecture.md, "Start-up and shutdown".

These run the real daemon (``python -m controller``) as a child process against a real SQLite
file and talk to it over HTTP on a free loopback port.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from typing import TYPE_CHECKING

from controller.ledger_journal.sqlite import verify

if TYPE_CHECKING:
    from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def jackpotd(*args: str, cwd: Path, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "controller", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own loopback
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_for_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    if "meter display and /metrics at" not in line:
        process.kill()  # first: its stderr ends only once it has exited
        raise AssertionError(line + (process.stderr.read() if process.stderr else ""))
    return line.rsplit(" ", 1)[1].strip()


def test_operations_demo_runs_rounds_summarises_and_leaves_a_verified_journal(
    tmp_path: Path,
) -> None:
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "controller", "demo", "--rounds", "20", "--tables", "3",
         "--db", "var/run.db", "--port", str(port), "--interval", "0.001", "--hit-every", "10"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "rounds: 80 (T1 20, T2 20, T3 20, T4 20)" in done.stdout  # T4: the four levels
    assert "pool fortune-progressive: meter $" in done.stdout
    assert "progressive hits: " in done.stdout
    report = verify(tmp_path / "var" / "run.db")
    assert report.ok, report.problems
    assert report.rows > 60 * 10


def test_operations_display_metrics_and_health_while_running_then_sigterm_drains(
    tmp_path: Path,
) -> None:
    port = free_port()
    process = jackpotd(
        "demo", "--port", str(port), "--interval", "0.05", "--hit-every", "5", cwd=tmp_path
    )
    try:
        url = wait_for_url(process)
        assert url == f"http://127.0.0.1:{port}/"
        status, page = get(url)
        assert status == 200
        assert b"PROGRESSIVE JACKPOTS" in page
        assert b"http" not in page.split(b"<script>")[0].replace(
            b"http-equiv", b""
        )  # no external assets
        deadline = time.monotonic() + 30
        while True:  # wait until rounds have been played
            state = json.loads(get(url + "api/state")[1])
            pool = next(p for p in state["pools"] if p["pool"] == "fortune-progressive")
            if pool["meter_cents"] > 1_000_000 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert state["controller"]["online"] is True
        assert [table["table"] for table in state["tables"]] == ["T1", "T2", "T3", "T4"]
        assert pool["meter_cents"] > 1_000_000
        status, metrics = get(url + "metrics")
        assert status == 200
        text = metrics.decode()
        for name in (
            'jackpotd_pool_meter_dollars{pool="fortune-progressive"}',
            'jackpotd_pool_meter_dollars{pool="demo-levels.grand"}',  # each level, a meter
            "jackpotd_journal_commit_seconds_bucket",
            "jackpotd_event_to_commit_seconds_count",
            'jackpotd_table_online{table="T1"} 1.0',
            "jackpotd_wagers_total",
            "jackpotd_pending_pays",
        ):
            assert name in text, name
        assert json.loads(get(url + "healthz")[1]) == {"ok": True, "reason": "", "sources": {}}
        with urllib.request.urlopen(url + "events", timeout=5) as events:  # noqa: S310
            first = events.readline().decode()
        assert first.startswith("event: ")
    finally:
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert verify(tmp_path / "var" / "demo.db").ok


def test_operations_run_refuses_a_bad_configuration_with_file_key_and_reason(
    tmp_path: Path,
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(
        '[controller]\nsite = "s"\nid = "c"\n\n[[tables]]\nid = "T1"\ntransport = "mqtt"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert done.returncode == 1
    assert str(config) in done.stderr
    assert "Traceback" not in done.stderr
