"""docs/operations.md's mosquitto_pub and mosquitto_sub lines, as written, on the shipped broker.

The shipped mosquitto.conf refuses a client that sends no client id
(``allow_zero_length_clientid false``), and mosquitto_pub sends none unless given ``-i``: the
lab's "Be table t1" lines were refused ("identifier rejected"). Each line now names one
(``-i table-t1``, ``-i monitor``; the broker then names the session after the user). Here the
broker runs on the shipped configuration and ACL with make-secrets.sh's credentials; the
monitor subscribes with the flags of the page's ``mosquitto_sub`` line, the lab's lines run as
written (their host's port is this broker's) and then the retiring table's, and the monitor
receives each message: the ACL let every one through. docs/mqtt.md's lines (a bare broker on
localhost) name a client id too.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from support.drivers.shipped_broker import credentials_fixture, start_shipped, tool

if TYPE_CHECKING:
    from support.drivers.shipped_broker import Credentials

assert credentials_fixture  # the fixture, registered by importing it
REPO = Path(__file__).resolve().parents[2]
OPERATIONS = REPO / "docs" / "operations.md"
MQTT = REPO / "docs" / "mqtt.md"
WAIT_S = 30


def blocks(page: Path) -> list[str]:
    """The page's ``sh`` blocks, continuation lines joined."""
    found = re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
    return [block.replace("\\\n", " ") for block in found]


def commands(page: Path, tool_name: str) -> list[str]:
    return [
        line.strip()
        for block in blocks(page)
        for line in block.splitlines()
        if line.strip().startswith(tool_name)
    ]


def block_with(page: Path, text: str) -> str:
    (found,) = [block for block in blocks(page) if text in block]
    return found


def test_every_mosquitto_line_of_the_docs_names_a_client_id() -> None:
    for page in (OPERATIONS, MQTT):
        lines = commands(page, "mosquitto_pub") + commands(page, "mosquitto_sub")
        assert lines, page
        assert [line for line in lines if " -i " not in f" {line} "] == [], page


def test_the_lab_and_retire_lines_run_on_the_shipped_broker(
    tmp_path: Path, credentials: Credentials
) -> None:
    broker = start_shipped(tmp_path / "broker", credentials)
    here = f"-h localhost -p {broker.port}"
    try:
        # The monitor, with the flags of the page's mosquitto_sub line, on table t1's topics.
        (watching,) = commands(OPERATIONS, "mosquitto_sub")
        flags = watching.replace("-h pit-broker.casino.lan -p 8883", here)
        flags = flags.split(" -t ")[0].replace("mosquitto_sub", tool("mosquitto_sub"), 1)
        monitor = subprocess.Popen(
            [tool("stdbuf"), "-oL",  # its lines as they come (a pipe is block-buffered)
             *shlex.split(flags.replace('"$(cat passwords/monitor)"',
                                        shlex.quote(credentials.password("monitor")))),
             "-d", "-v", "-C", "4", "-W", str(WAIT_S), "-t", "riverside/jackpot/v1/table/t1/#"],
            cwd=credentials.directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        assert monitor.stdout is not None
        said = []
        for line in monitor.stdout:  # bounded: -W ends it
            said.append(line)
            if "received SUBACK" in line:
                break
        assert any("received SUBACK" in line for line in said), said
        lab = block_with(OPERATIONS, "cd deploy/lab/secrets").replace("cd deploy/lab/secrets", "")
        retire = block_with(OPERATIONS, "-r -n")
        for written in (lab, retire):
            script = written.replace("-h localhost -p 8883", here)
            script = script.replace("-h pit-broker.casino.lan -p 8883", here)
            done = subprocess.run(
                ["/bin/sh", "-e", "-c", script], cwd=credentials.directory,
                capture_output=True, text=True, timeout=WAIT_S, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
        rest, _ = monitor.communicate(timeout=WAIT_S)
        received = [line for line in rest.splitlines() if line.startswith("riverside/")]
        assert monitor.returncode == 0, rest
    finally:
        broker.stop()
    assert [line.split(" ", 1)[0] for line in received] == [
        "riverside/jackpot/v1/table/t1/status",  # online (retained)
        "riverside/jackpot/v1/table/t1/event/heartbeat",
        "riverside/jackpot/v1/table/t1/event/bet",
        "riverside/jackpot/v1/table/t1/status",  # cleared: the table retired
    ]
