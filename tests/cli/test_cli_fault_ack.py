"""A supervisor acknowledges the faults journaled, at their own account, through the socket.

A real ``jackpotd run`` with its operator socket (tests/support/runtime/operator_rig.py). Faults are
made as a floor makes them: requests the daemon refuses before the ledger, each journaled as a
fault. Then, as docs/operations.md ("Acknowledging faults") says and as written:
``jackpotd faults`` lists them, ``jackpotd fault ack`` signs the acknowledgement with the
supervisor's key file and hands it to the daemon, which journals it (its provenance names the
socket and the command). The ledger refuses an unsigned acknowledgement and one through a fault
acknowledged already, each journaled as refused; ``--db`` acknowledges on a journal directly.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import uuid
from contextlib import closing
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from support.runtime.floor import journal_rows
from support.runtime.operator_rig import FILES, LEE, ROOT, SAM, operator_environment, running_daemon

from controller.cli.submit import SocketDesk
from controller.events import FaultsAcknowledged, encode_event
from controller.ledger.faults import register_of
from controller.runtime.operator_desk import LENGTH, VERSION, OperatorRequest, answer_of, frame

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.runtime.operator_rig import Running

PAGE = ROOT / "docs" / "operations.md"


@pytest.fixture(scope="module")
def faults_daemon() -> Iterator[Running]:
    with running_daemon() as running:
        yield running


def exchange(path: Path, data: bytes) -> dict[str, Any]:
    """Send ``data`` as it is on the operator socket; the framed answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        connection.connect(str(path))
        connection.sendall(data)
        (length,) = LENGTH.unpack(connection.recv(4, socket.MSG_WAITALL))
        body = connection.recv(length, socket.MSG_WAITALL)
    return msgspec.to_builtins(answer_of(body))  # type: ignore[no-any-return]


def bad_request(faults_daemon: Running) -> str:
    """A request that is not one: the daemon answers no and journals a fault; its id."""
    before = {
        row["event_id"] for row in journal_rows(faults_daemon.journal) if row["kind"] == "fault"
    }
    answer = exchange(faults_daemon.socket, LENGTH.pack(7) + b"{broken")
    assert "not an operator request" in answer["reason"]
    made = [
        row["event_id"]
        for row in journal_rows(faults_daemon.journal)
        if row["kind"] == "fault" and row["event_id"] not in before
    ]
    assert len(made) == 1, made
    return str(made[0])


def jackpotd(faults_daemon: Running, *argv: str) -> subprocess.CompletedProcess[str]:
    """``jackpotd ARGV`` as an operator, with the daemon's journal to read faults from."""
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        env=operator_environment(faults_daemon.socket)
        | {"JACKPOTD_DB": str(faults_daemon.journal)},
        capture_output=True, text=True, timeout=60, cwd=faults_daemon.keys, check=False,
    )  # fmt: skip


def documented_block() -> str:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("### Acknowledging faults", 1)[1].split("\n### ", 1)[0]
    return str(re.findall(r"```sh\n(.*?)```", section, re.DOTALL)[0])


def row_of(faults_daemon: Running, event_id: str) -> dict[str, Any]:
    return next(row for row in journal_rows(faults_daemon.journal) if row["event_id"] == event_id)


def provenance(faults_daemon: Running, seq: int) -> str:
    with closing(sqlite3.connect(f"file:{faults_daemon.journal}?mode=ro", uri=True)) as db:
        (found,) = db.execute("SELECT provenance FROM journal WHERE seq = ?", (seq,)).fetchone()
    return str(found)


def test_the_documented_acknowledgement_runs_as_written_through_the_socket(
    faults_daemon: Running,
) -> None:
    bad_request(faults_daemon)
    newest = bad_request(faults_daemon)
    listed = jackpotd(faults_daemon, "faults", "--json")
    assert listed.returncode == 0, listed.stderr
    waiting = json.loads(listed.stdout)["faults"]
    assert waiting[-1]["event_id"] == newest
    assert waiting[-1]["reason"] == "operator-malformed"
    shell = f'jackpotd() {{ "{sys.executable}" -m controller "$@"; }}\nset -euo pipefail\n'
    done = subprocess.run(
        ["bash", "-c", shell + documented_block()],
        env=operator_environment(faults_daemon.socket)
        | {"JACKPOTD_DB": str(faults_daemon.journal)},
        capture_output=True, text=True, timeout=120, cwd=faults_daemon.keys, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert newest in done.stdout  # the listing showed the newest fault
    register = register_of(SocketDesk(faults_daemon.socket).state)
    assert register is not None
    assert (register.through, register.by, register.waiting) == (newest, SAM, 0)
    (row,) = [r for r in journal_rows(faults_daemon.journal) if r["kind"] == "faults-acknowledged"]
    assert row["outcome"] == "applied"
    assert provenance(faults_daemon, int(row["seq"])) == (
        f"operator-socket uid={os.geteuid()} command=fault ack"
    )
    after = jackpotd(faults_daemon, "faults")
    assert after.returncode == 0, after.stderr
    assert "no fault waiting" in after.stdout
    assert f"acknowledged through {newest} by {SAM}" in after.stdout


def test_an_acknowledgement_through_a_fault_acknowledged_already_is_refused_and_journaled(
    faults_daemon: Running,
) -> None:
    newest = bad_request(faults_daemon)
    first = jackpotd(faults_daemon, "fault", "ack", "--through", newest, "--note", "seen",
                     "--key", FILES[LEE])  # fmt: skip
    assert first.returncode == 0, first.stderr
    again = jackpotd(faults_daemon, "fault", "ack", "--through", newest, "--count", "1",
                     "--note", "seen twice", "--key", FILES[SAM])  # fmt: skip
    assert again.returncode == 1
    assert f"fault {newest} was acknowledged already (by {LEE})" in again.stderr
    refusals = [
        row
        for row in journal_rows(faults_daemon.journal)
        if row["kind"] == "faults-acknowledged" and row["outcome"] == "rejected"
    ]
    assert refusals
    assert "acknowledged already" in refusals[-1]["reason"]


def test_an_unsigned_acknowledgement_is_refused_by_the_ledger_and_journaled(
    faults_daemon: Running,
) -> None:
    newest = bad_request(faults_daemon)
    desk = SocketDesk(faults_daemon.socket)
    register = register_of(desk.state)
    count = 1 if register is None else register.waiting
    event = FaultsAcknowledged(f"faults-ack-{uuid.uuid4()}", desk.now(), newest, count, "x", SAM)
    request = OperatorRequest(VERSION, "submit", "fault ack", msgspec.Raw(encode_event(event)))
    answer = exchange(faults_daemon.socket, frame(request))
    assert answer["receipt"]["outcome"] == "rejected"
    assert "unsigned" in answer["receipt"]["reason"]
    assert row_of(faults_daemon, event.event_id)["outcome"] == "rejected"
    assert register_of(SocketDesk(faults_daemon.socket).state) == register  # nothing changed
