"""Operators sign with their own account and key; the running daemon journals the signed action.

A real ``jackpotd run`` (as ``nobody`` when the tests run as root: a real other user) with
``[controller] operator_socket``, a table on a pty line, and a jackpot pending that needs two
supervisors' signatures (tests/support/runtime/operator_rig.py). The supervisors' key files are
root's, 0600: the service user cannot read them, and never needs to. Through the socket:

* the first supervisor signs ``verify-hit`` and saves it (``--save``), the second adds their
  signature (``jackpotd cosign``) and the daemon journals it: the jackpot is paid, the row's
  provenance names the socket and the operator's uid (docs/operations.md, "Signing as the
  operator");
* refused by the ledger, journaled as refused: an unsigned action, a signature bound to another
  journal or another target, one signer where dual control needs two, a supervisor enrolling
  an operator (a manager's action);
* refused by the daemon, answered in words, counted and journaled as faults: a signature
  whose window is over by the controller's clock, a request too large, one that is not JSON,
  a table's word sent as an operator's action;
* a flood of connections held open: the daemon answers "busy" beyond its cap and keeps
  journaling the table's events; the socket answers again once the flood is gone.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import socket
import sqlite3
import subprocess
import uuid
from contextlib import AsyncExitStack, closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from support.ledger.approvals import PASSPHRASE
from support.runtime.floor import journal_rows, keep_playing, simulated, within
from support.runtime.operator_rig import (
    FILES,
    LEE,
    NOBODY,
    PAY,
    PAY2,
    PAY3,
    ROOT,
    SAM,
    as_nobody,
    as_service_user,
    running_daemon,
)

from controller.cli.submit import SocketDesk
from controller.clock import utc_iso
from controller.events import BetSensed, HitVerified, encode_event
from controller.ledger.binding import binding_for, signed_by
from controller.runtime.operator_desk import (
    LENGTH,
    MAX_REQUEST,
    VERSION,
    OperatorRequest,
    answer_of,
    frame,
)
from controller.security import keys
from controller.security.signatures import sign, with_signature
from drivers.simulator_links import SerialTableLink

if TYPE_CHECKING:
    from collections.abc import Iterator

    from support.runtime.operator_rig import Running

PAGE = ROOT / "docs" / "operations.md"


@pytest.fixture(scope="module")
def daemon() -> Iterator[Running]:
    with running_daemon() as running:
        yield running


def rows(journal: Path) -> list[dict[str, Any]]:
    """Every row's canonical values, with the provenance written beside it."""
    with closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as db:
        written = dict(db.execute("SELECT seq, provenance FROM journal"))
    return [{**row, "provenance": written[row["seq"]]} for row in journal_rows(journal)]


def raw(path: Path, data: bytes) -> dict[str, Any]:
    """Send ``data`` as it is and read the framed answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        connection.connect(str(path))
        connection.sendall(data)
        header = connection.recv(4, socket.MSG_WAITALL)
        (length,) = LENGTH.unpack(header)
        body = connection.recv(length, socket.MSG_WAITALL)
    return msgspec.to_builtins(answer_of(body))  # type: ignore[no-any-return]


def submit(path: Path, event: object) -> dict[str, Any]:
    request = OperatorRequest(VERSION, "submit", "verify-hit", msgspec.Raw(encode_event(event)))  # type: ignore[arg-type]
    return raw(path, frame(request))


def faults(journal: Path, reason: str) -> list[dict[str, Any]]:
    found = []
    for row in rows(journal):
        if row["kind"] == "fault":
            event = json.loads(row["event"]) if isinstance(row["event"], str) else row["event"]
            if event["reason"] == reason and event["source"].startswith("operator-socket uid="):
                found.append(event)
    return found


def test_the_service_user_cannot_read_an_operators_key(daemon: Running) -> None:
    key = daemon.key(SAM)
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    status = Path(f"/proc/{daemon.process.pid}/status").read_text()
    if as_service_user():  # the daemon runs as nobody: it cannot read the key it never needs
        assert re.search(rf"^Uid:\s+{NOBODY}\s", status, re.MULTILINE), status
    if os.geteuid() == 0:
        tried = subprocess.run(
            [*as_nobody(), "cat", str(key)], capture_output=True, text=True, check=False
        )
        assert tried.returncode != 0
        assert "Permission denied" in tried.stderr
    socket_mode = daemon.socket.stat().st_mode & 0o777
    assert socket_mode == 0o660


def documented_commands() -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("### Signing as the operator", 1)[1].split("\n### ", 1)[0]
    block = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_signing_commands_of_operations_md_run_as_written(daemon: Running) -> None:
    commands = documented_commands()
    assert [words[0] for words in commands] == ["jackpotd"] * len(commands)
    for words in commands:
        done = daemon.jackpotd(*words[1:])
        assert done.returncode == 0, (words, done.stderr)
    assert PAY not in SocketDesk(daemon.socket).state.pending  # paid
    verified = [row for row in rows(daemon.journal) if row["kind"] == "hit-verified"]
    assert [row["provenance"] for row in verified] == [
        f"operator-socket uid={os.geteuid()} command=cosign"
    ]


def test_verify_hit_signed_by_two_supervisors_at_their_own_accounts_is_journaled_and_paid(
    daemon: Running,
) -> None:
    alone = daemon.jackpotd(
        "adjust", "floor", "--amount", "+1", "--reason", "sign test", "--key", FILES[SAM]
    )  # a meter adjustment takes two signatures, always
    assert alone.returncode == 1
    assert "needs the signatures of 2 different operators (dual control), not 1" in alone.stderr
    saved = daemon.jackpotd("verify-hit", PAY2, "--key", FILES[SAM], "--save", "second.json")
    assert saved.returncode == 0, saved.stderr
    assert "the next operator runs jackpotd cosign second.json" in saved.stdout
    assert PAY2 in SocketDesk(daemon.socket).state.pending  # saved, not journaled
    done = daemon.jackpotd("cosign", "second.json", "--key", FILES[LEE])
    assert done.returncode == 0, done.stderr
    assert f'"payout_id":"{PAY2}"' in done.stderr  # what Lee signed, shown before
    seq = int(done.stdout.split("journaled as row ")[1].split()[0])
    row = next(row for row in rows(daemon.journal) if row["seq"] == seq)
    assert row["kind"] == "hit-verified"
    assert row["outcome"] == "applied"
    assert row["provenance"] == f"operator-socket uid={os.geteuid()} command=cosign"
    assert PAY2 not in SocketDesk(daemon.socket).state.pending
    again = daemon.jackpotd("cosign", "second.json", "--key", FILES[LEE])
    assert again.returncode == 1  # applied once, ever


def test_unsigned_and_misbound_actions_are_refused_by_the_ledger(daemon: Running) -> None:
    desk = SocketDesk(daemon.socket)
    state = desk.state
    unsigned = HitVerified(f"verify-{uuid.uuid4()}", desk.now(), PAY3, SAM)
    answer = submit(daemon.socket, unsigned)
    assert answer["receipt"]["outcome"] == "rejected"
    assert "unsigned" in answer["receipt"]["reason"]
    key = daemon.site.keys[SAM]
    for part, says in (
        ({"journal": "journal-another"}, "signed it for journal"),
        ({"target": f"payout/{PAY3}/9"}, "signed it against"),
    ):
        event = HitVerified(f"verify-{uuid.uuid4()}", desk.now(), PAY3, SAM)
        binding = binding_for(state, event)
        assert binding is not None
        forged = msgspec.structs.replace(binding, **part)
        signed = with_signature(event, sign(event, SAM, key, forged))
        answer = submit(daemon.socket, signed)
        assert answer["receipt"]["outcome"] == "rejected", (says, answer)
        assert says in answer["receipt"]["reason"]


def test_a_supervisor_doing_a_managers_action_is_refused(daemon: Running) -> None:
    keys.write_key_file(daemon.keys / "new.key", keys.seal(keys.generate(), "New", PASSPHRASE))
    done = daemon.jackpotd(
        "operator", "add", "New", "--role", "supervisor", "--public-key", "new.key",
        "--key", FILES[SAM],
    )  # fmt: skip
    assert done.returncode == 1
    assert f"{SAM} (supervisor) may not enroll" in done.stderr


def test_a_signature_past_its_window_is_refused_by_the_daemon_and_journaled(
    daemon: Running,
) -> None:
    desk = SocketDesk(daemon.socket)
    then = utc_iso(datetime.now(UTC) - timedelta(hours=2))
    event = HitVerified(f"verify-{uuid.uuid4()}", then, PAY3, SAM)
    signed = signed_by(desk.state, event, [(SAM, daemon.site.keys[SAM])])
    answer = submit(daemon.socket, signed)
    assert not answer["ok"]
    assert "and the controller's clock says" in answer["reason"]
    assert faults(daemon.journal, "operator-signature-expired")
    assert event.event_id not in {row["event_id"] for row in rows(daemon.journal)}


def test_bad_requests_are_answered_counted_and_journaled(daemon: Running) -> None:
    too_large = raw(daemon.socket, LENGTH.pack(MAX_REQUEST + 1))
    assert too_large == {**too_large, "ok": False}
    assert f"at most {MAX_REQUEST:,}" in too_large["reason"]
    junk = raw(daemon.socket, LENGTH.pack(5) + b"{nope")
    assert "not an operator request" in junk["reason"]
    word = BetSensed(f"bet-{uuid.uuid4()}", utc_iso(datetime.now(UTC)), "T1", "sensor", 1, 1,
                     "progressive", True)  # fmt: skip
    table = submit(daemon.socket, word)
    assert "is not an operator's action" in table["reason"]
    for reason in ("operator-too-large", "operator-malformed", "operator-not-an-action"):
        assert faults(daemon.journal, reason), reason


def test_a_flood_of_connections_is_answered_busy_and_the_table_is_still_journaled(
    daemon: Running,
) -> None:
    before = len(rows(daemon.journal))
    asyncio.run(_flood_while_playing(daemon))
    played = [row for row in rows(daemon.journal)[before:] if row["kind"] == "bet-sensed"]
    assert played
    assert faults(daemon.journal, "operator-busy")
    assert SocketDesk(daemon.socket).head[0] > before  # it answers again


async def _flood_while_playing(daemon: Running) -> None:
    stop = asyncio.Event()
    async with AsyncExitStack() as stack:
        reader, writer = await daemon.line.open()
        link = await stack.enter_async_context(SerialTableLink("T1", reader, writer))
        table = simulated("T1", link, seed=5)
        play = asyncio.create_task(keep_playing(table, stop))
        held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        try:
            held += [await asyncio.open_unix_connection(str(daemon.socket)) for _ in range(200)]
            busy = 0
            for flood_reader, _ in held:
                try:
                    with_answer = await within(flood_reader.read(1 << 16), "an answer or a close")
                except OSError:  # closed under it before it read: not an answer
                    continue
                busy += b"busy" in with_answer
            assert busy >= 100  # the cap is 16: the rest are answered busy or closed
        finally:
            for _, flood_writer in held:
                flood_writer.close()
            stop.set()
            await within(play, "the round in play to end")
    daemon.line.close()  # its pipes are this loop's: closed while it runs (the last test)
