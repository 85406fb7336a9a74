"""Journal disk full: the controller fails closed, says why, and recovers.

docs/faults.md, "The journal's disk fills up"; docs/architecture.md, "Failing closed".

The journal lives on a small tmpfs mounted by the test (the tests run as root, as CI does);
the daemon plays simulated tables on it. Filling the disk makes journal writes fail: every
table must show CLOSED, ``/healthz`` answer 503 with the reason, and no wager be acknowledged.
Freeing the space must bring the controller back by itself, tables open, meters moving.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

from controller.ledger_journal.sqlite import verify

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = pytest.mark.fault


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def until(condition: Callable[[], bool], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert mounted.returncode == 0, f"this test mounts a tmpfs and needs root: {mounted.stderr}"
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    # Unbuffered, and the error suppressed around the file too: a buffered file whose last
    # write failed for lack of space fails again when it is closed (the bytes still in its
    # buffer), which made this helper itself raise ENOSPC now and then.
    with contextlib.suppress(OSError), filler.open("wb", buffering=0) as handle:
        while True:
            handle.write(b"\0" * 65536)
    return filler


def test_faults_journal_disk_full_fails_closed_and_recovers_when_space_returns(
    small_disk: Path, tmp_path: Path
) -> None:
    port = free_port()
    config = tmp_path / "jackpotd.toml"
    write_controller_key(tmp_path)
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c"\njournal = "{small_disk / "journal.db"}"\n'
        f"{KEY_LINE}\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f"[web]\nport = {port}\n\n[simulator]\nround_interval_s = 0.02\n"
    )
    approved_site(config)
    url = f"http://127.0.0.1:{port}/"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert daemon.stdout is not None
        assert "meter display" in daemon.stdout.readline()
        until(lambda: get(url + "api/state")[1]["pools"][0]["meter_cents"] > 1_000_000, "play")
        filler = fill(small_disk)
        until(lambda: get(url + "healthz")[0] == 503, "failing closed")
        _status, health = get(url + "healthz")
        assert "full" in health["reason"]
        state = get(url + "api/state")[1]
        assert state["controller"]["online"] is False
        assert all(not table["online"] for table in state["tables"])
        wagers = state["pools"][0]["meter_cents"]
        time.sleep(1.0)
        assert get(url + "api/state")[1]["pools"][0]["meter_cents"] == wagers  # nothing accepted
        filler.unlink()
        until(lambda: get(url + "healthz")[0] == 200, "recovery", seconds=60)
        until(lambda: get(url + "api/state")[1]["pools"][0]["meter_cents"] > wagers, "play again")
        tables_after = get(url + "api/state")[1]["tables"]
        assert all(table["online"] for table in tables_after), tables_after
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, err
    assert "failing closed" in err
    assert verify(small_disk / "journal.db").ok


def test_faults_read_only_journal_file_system_is_refused_with_the_reason_until_writable(
    small_disk: Path, tmp_path: Path
) -> None:
    """A journal that cannot be written is never run on: the daemon says why and stops.

    A file system goes read-only under a writer only by failing (Linux refuses to remount one
    read-only while a file on it is open for writing), and then the daemon fails closed as
    above. What an operator meets is the next start: the journal's file system mounted
    read-only. The daemon must not start (it could acknowledge nothing), must name the
    journal and the reason, and must start normally once the file system is writable again
    (under systemd, ``Restart=on-failure`` retries it).

    docs/faults.md.
    """
    port = free_port()
    config = tmp_path / "jackpotd.toml"
    write_controller_key(tmp_path)
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c"\njournal = "{small_disk / "journal.db"}"\n'
        f"{KEY_LINE}\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        f'pool = "P1"\n\n[web]\nport = {port}\n\n[simulator]\nround_interval_s = 0.02\n'
    )
    command = [sys.executable, "-m", "controller", "run", "--config", str(config)]
    approved_site(config)  # the journal of earlier runs
    before = {path.name: path.read_bytes() for path in small_disk.iterdir()}
    remount = ["mount", "-o", "remount,ro", str(small_disk)]
    assert subprocess.run(remount, capture_output=True, check=False).returncode == 0
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode != 0
    assert str(small_disk / "journal.db") in refused.stderr, refused.stderr
    assert "read-only" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert {path.name: path.read_bytes() for path in small_disk.iterdir()} == before
    remount[2] = "remount,rw"
    assert subprocess.run(remount, capture_output=True, check=False).returncode == 0
    url = f"http://127.0.0.1:{port}/"
    daemon = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert daemon.stdout is not None
        assert "meter display" in daemon.stdout.readline()
        until(lambda: get(url + "healthz")[0] == 200, "the daemon up")
        until(lambda: get(url + "api/state")[1]["pools"][0]["meter_cents"] > 1_000_000, "play")
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, err
    assert verify(small_disk / "journal.db").ok
