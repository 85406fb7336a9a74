r"""A table cannot forge the daemon's log lines (docs/faults.md, "Forged log lines").

The real daemon (``python -m controller run``, its logging set up by the command line as in
production) takes a table on a real mosquitto and a table on a pty line. The devices send
input that the controller quotes when it rejects it, each carrying a would-be record of its
own, ``CRITICAL forged line``:

* over MQTT, a payload with an unknown key holding a newline (msgspec's error quotes the key),
  and events on topics holding a Unicode line separator (U+2028) and a right-to-left override
  (U+202E), which the broker lets through (it refuses C0 and C1 controls in topic names);
* on the serial line, a frame holding a newline and an ANSI escape (``ESC [2J`` clears a
  terminal), skipped as garbage and quoted in the rejection.

Every line of the log must be a record of its own, starting with its time and level (or an
indented line of a traceback); each rejection stays on its line, with the newline, escape,
separator and override written as ``\n``, ``\x1b``, ``\u2028`` and ``\u202e``; none of
those characters is in the log raw. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

from controller.runtime.logsafe import CONTINUATION
from drivers.serial.framing import encode_frame
from drivers.simulator_links import PtyPair

if TYPE_CHECKING:
    from collections.abc import Callable

    from support.drivers.mosquitto import Broker

pytestmark = pytest.mark.fault

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0
SITE = "forge"
FORGED = "CRITICAL forged line"
RECORD = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: "
)
"""The start of a record's line (controller.runtime.logsafe.LOG_FORMAT)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {WAIT_S:g} s waiting for {what}"
        time.sleep(0.05)


def write_config(folder: Path, broker: Broker, serial_path: str, port: int) -> Path:
    config = folder / "jackpotd.toml"
    write_controller_key(folder)
    config.write_text(
        f'[controller]\nsite = "{SITE}"\nid = "{SITE}"\njournal = "journal.db"\n{KEY_LINE}\n'
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        f'[[serial]]\nname = "t2-line"\nurl = "{serial_path}"\ntable_id = "t2"\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "t1"\ntransport = "mqtt"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        '[[tables]]\nid = "t2"\ntransport = "serial:t2-line"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f'[web]\nhost = "127.0.0.1"\nport = {port}\n'
    )
    approved_site(config)
    return config


def rejected(port: int) -> dict[str, float]:
    """``jackpotd_rejected_inputs_total`` by reason."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    sample = r'^jackpotd_rejected_inputs_total\{reason="([^"]+)"\} (\S+)$'
    found = re.findall(sample, text, re.MULTILINE)
    return {reason: float(value) for reason, value in found}


def journaled(database: Path, prefix: str) -> bool:
    """Whether an event whose id starts with ``prefix`` is in the journal."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        found = db.execute("SELECT 1 FROM journal WHERE event_id LIKE ?", (prefix + "%",))
        return found.fetchone() is not None


async def publish(broker: Broker, messages: list[tuple[str, bytes, bool]]) -> None:
    async with asyncio.timeout(WAIT_S), aiomqtt.Client(broker.host, broker.port) as table:
        for topic, payload, retain in messages:
            await table.publish(topic, payload, qos=1, retain=retain)


def test_a_table_cannot_forge_log_lines_over_mqtt_or_serial(
    mosquitto: Broker, tmp_path: Path
) -> None:
    port = free_port()
    prefix = f"{SITE}/jackpot/v1/table/"
    log = tmp_path / "jackpotd.log"
    with PtyPair() as line:
        config = write_config(tmp_path, mosquitto, line.path, port)
        with log.open("w") as stderr:
            daemon = subprocess.Popen(
                [sys.executable, "-m", "controller", "run", "--config", str(config)],
                stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
            )  # fmt: skip
        try:
            assert daemon.stdout is not None
            assert "meter display" in daemon.stdout.readline(), log.read_text()
            # The table comes online as a real one does; once its status is journaled, the
            # controller is subscribed and nothing the table publishes can be missed.
            asyncio.run(publish(mosquitto, [(f"{prefix}t1/status", b"online", True)]))
            until(lambda: journaled(tmp_path / "journal.db", "t1/status/"), "t1 online")

            unknown_key = {"v": 1, "device": "sensor-1", "seq": 1, "seat": 1, "spot": "bonus"}
            unknown_key |= {"present": True, "amount_cents": 500, f"x\n{FORGED}": 1}
            asyncio.run(
                publish(
                    mosquitto,
                    [
                        (f"{prefix}t1/event/bet", json.dumps(unknown_key).encode(), False),
                        (f"{prefix}t1/event/bet\u2028{FORGED}", b"{}", False),
                        (f"{prefix}t1/event/bet\u202e{FORGED}", b"{}", False),
                    ],
                )
            )
            os.write(line.master, f"$BET,sensor-1,1\n{FORGED}\x1b[2J*0000\r\n".encode())
            os.write(line.master, encode_frame("HB,sensor-1,1"))  # its "$" ends the garbage

            def all_rejected() -> bool:
                reasons = rejected(port)
                return (
                    reasons.get("unknown-field", 0) >= 1
                    and reasons.get("unknown-type", 0) >= 2
                    and reasons.get("garbage", 0) >= 1
                )

            until(all_rejected, "the four rejections")
        finally:
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
            daemon.communicate(timeout=WAIT_S)
    assert daemon.returncode == 0, log.read_text()

    text = log.read_text(encoding="utf-8")
    for raw in ("\r", "\x1b", "\u2028", "\u202e"):
        assert raw not in text, f"{raw!r} is in the log raw"
    lines = text.split("\n")
    assert lines[-1] == ""
    for entry in lines[:-1]:
        assert RECORD.match(entry) or entry.startswith(CONTINUATION), f"not a record: {entry!r}"
    # Each rejection is on one record's line, the forged text escaped inside it.
    forged = [entry for entry in lines if FORGED in entry]
    assert forged
    for entry in forged:
        record = RECORD.match(entry)
        assert record is not None, f"forged text on a line of its own: {entry!r}"
        assert record.group(1) != "CRITICAL"
    for escaped in (
        f"x\\n{FORGED}",  # the MQTT payload's key
        f"bet\\u2028{FORGED}",  # the topics
        f"bet\\u202e{FORGED}",
        f"sensor-1,1\\n{FORGED}\\x1b[2J",  # the serial frame
    ):
        assert any(escaped in entry for entry in forged), escaped
