"""The signer process keeps the mystery levels' sealed triggers: drawn, kept, probed, restarted.

A real ``jackpotd signer`` on a Unix socket (tests/support/runtime/signer_process.py) and the
daemon's client (controller/runtime/remote_signer.py). docs/security.md, "Mystery levels: the sealed
trigger": the trigger is drawn and kept by the signer, in its own state folder at mode 0600;
nothing the daemon receives before the hit holds it; a shell as the service user talking to
the socket can neither ask below the meter already asked nor ask twice for a draw, and what it
can do (advance the signer's view, or spend the draw) is an alarm for the daemon; a restart of
the signer, even a SIGKILL, keeps the sealed draw and its view of the meter.
"""

from __future__ import annotations

import re
import selectors
import socket
import stat
import subprocess
import sys
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.runtime.controller_keys import write_controller_key
from support.runtime.signer_process import CHILD, ROOT, WAIT_S, running, start_signer

from controller.mystery.core import DrawRequest, Meter, MysteryRefusedError, reveal_holds, seal
from controller.mystery.envelope import SealingKey, seal_envelope
from controller.mystery.keeper import Keeper, MysteryAlarmError, Query
from controller.runtime.remote_signer import RemoteSigner
from controller.security.controller_key import ControllerKey
from controller.security.sealing_key import write_sealing_key
from controller.security.signer import LENGTH, Answer, Request, frame, frame_length

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.runtime.signer_process import SignerProcess

AT = "2026-12-01T12:00:00+00:00"
FLOOR, CEILING = 100_000, 200_000
"""A meter below the floor never reaches the trigger, one at the ceiling always does."""


@pytest.fixture
def keeper_signer(tmp_path: Path) -> Iterator[SignerProcess]:
    write_controller_key(tmp_path)
    yield from running(tmp_path / "controller.key", tmp_path)


def remote(keeper_signer: SignerProcess) -> RemoteSigner:
    return RemoteSigner(keeper_signer.socket, timeout_s=5.0)


def draw_request(client: RemoteSigner, draw: int = 1, controller: str = "c1") -> DrawRequest:
    return DrawRequest(
        controller, "journal-a", "grand", "mystery", draw, FLOOR, CEILING, client.key_id, AT
    )


def query(cents: int, draw: int = 1) -> Query:
    return Query("c1", "journal-a", "grand", "mystery", draw, Meter(cents))


def raw_answer(keeper_signer: SignerProcess, request: Request) -> bytes:
    """The signer's answer as bytes on the wire (what a shell as the service user reads)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5.0)
        connection.connect(str(keeper_signer.socket))
        connection.sendall(frame(request))
        header = connection.recv(LENGTH.size, socket.MSG_WAITALL)
        return connection.recv(frame_length(header), socket.MSG_WAITALL)


def test_the_trigger_is_drawn_and_kept_by_the_signer_and_revealed_only_at_the_hit(
    keeper_signer: SignerProcess,
) -> None:
    client = remote(keeper_signer)
    keeper: Keeper = client  # the remote signer is a keeper
    drawn = keeper.draw(draw_request(client))
    assert drawn.key_id == client.key_id
    assert keeper.draw(draw_request(client)) == drawn  # asked again: the same draw, never redrawn
    sealed = keeper_signer.state.with_name("mystery.json")
    assert stat.S_IMODE(sealed.stat().st_mode) == 0o600
    before = sealed.read_bytes()
    wire = raw_answer(keeper_signer, Request(1, "mystery-check", _fields(query(50_000))))
    assert b'"reveal":null' in wire
    assert b"trigger" not in wire
    assert b"nonce" not in wire
    assert not keeper.check(query(60_000), Meter(50_000)).reached
    verdict = keeper.check(query(CEILING), Meter(60_000))
    assert verdict.reveal is not None
    assert reveal_holds(drawn, verdict.reveal, [client.public_key]) is None
    assert verdict.reveal.nonce.encode() in before  # kept in the signer's file from the draw
    assert verdict.reveal.hit == Meter(CEILING)
    log = keeper_signer.stop().replace(str(keeper_signer.socket.parent), "FOLDER")
    assert verdict.reveal.nonce not in log
    assert re.search(rf"(?<!\d){verdict.reveal.trigger}(?!\d)", log) is None


def _fields(statement: Query | DrawRequest) -> dict[str, msgspec.Raw]:
    return msgspec.json.decode(msgspec.json.encode(statement), type=dict[str, msgspec.Raw])


def test_a_shell_probing_the_signer_socket_is_refused_and_the_daemon_raises_an_alarm(
    keeper_signer: SignerProcess,
) -> None:
    daemon, shell = remote(keeper_signer), remote(keeper_signer)
    daemon.draw(draw_request(daemon))
    assert not daemon.check(query(50_000), None).reached
    with pytest.raises(MysteryRefusedError, match="below the 50000 cents already asked"):
        shell.check(query(10_000), None)  # below the meter asked: refused
    # The shell speaks as the daemon would (its own client's check passes: it knows 50,000).
    assert not shell.check(query(90_000), Meter(50_000)).reached  # it advances the signer's view
    with pytest.raises(MysteryAlarmError, match="ahead of the daemon"):
        daemon.check(query(60_000), Meter(50_000))  # the signer refuses: the daemon alarms
    with pytest.raises(MysteryAlarmError, match="someone else is asking"):
        daemon.check(query(95_000), Meter(50_000))  # answered, but not after the daemon's own
    with pytest.raises(MysteryRefusedError, match="has not hit yet"):
        shell.draw(draw_request(shell, draw=2))  # nor can a trigger be drawn again to suit it


def test_a_shell_that_spends_the_draw_learns_a_trigger_the_daemon_no_longer_plays(
    keeper_signer: SignerProcess,
) -> None:
    daemon, shell = remote(keeper_signer), remote(keeper_signer)
    drawn = daemon.draw(draw_request(daemon))
    assert not daemon.check(query(50_000), None).reached
    stolen = shell.check(query(CEILING), Meter(50_000)).reveal  # the shell spends the draw
    assert stolen is not None
    assert reveal_holds(drawn, stolen) is None
    with pytest.raises(MysteryAlarmError, match="ahead of the daemon"):
        daemon.check(query(60_000), Meter(50_000))


def test_a_shell_that_draws_first_with_a_range_of_its_own_is_an_alarm_for_the_daemon(
    keeper_signer: SignerProcess,
) -> None:
    daemon, shell = remote(keeper_signer), remote(keeper_signer)
    narrow = msgspec.structs.replace(draw_request(shell), ceiling=FLOOR + 1)  # trigger: FLOOR
    shell.draw(narrow)
    with pytest.raises(MysteryAlarmError, match="asked again from 100000 to 200000"):
        daemon.draw(draw_request(daemon))


async def test_the_daemon_asks_the_signer_on_the_event_loop_too(
    keeper_signer: SignerProcess,
) -> None:
    client = remote(keeper_signer)
    drawn = await client.draw_async(draw_request(client))
    assert not (await client.check_async(query(50_000), None)).reached
    with pytest.raises(MysteryAlarmError, match="ahead of the daemon"):
        await client.check_async(query(40_000), Meter(30_000))
    verdict = await client.check_async(query(CEILING), Meter(50_000))
    assert verdict.reveal is not None
    assert reveal_holds(drawn, verdict.reveal, [client.public_key]) is None
    await client.aclose()


def test_a_draw_for_another_controller_or_key_is_refused(keeper_signer: SignerProcess) -> None:
    client = remote(keeper_signer)
    with pytest.raises(MysteryRefusedError, match="not one this signer serves"):
        client.draw(draw_request(client, controller="c9"))
    with pytest.raises(MysteryRefusedError, match="not this signer's"):
        client.draw(msgspec.structs.replace(draw_request(client), key_id="0" * 16))
    with pytest.raises(MysteryRefusedError, match="no draw 1"):
        client.check(query(50_000), None)
    answer = msgspec.json.decode(
        raw_answer(keeper_signer, Request(1, "mystery-check", {"meter": msgspec.Raw(b"1")})),
        type=Answer,
    )
    assert not answer.ok
    assert client.draw(draw_request(client)).draw == 1  # the signer carried on


@pytest.mark.fault
@pytest.mark.slow
def test_a_signer_killed_and_restarted_keeps_the_sealed_draw_and_its_view_of_the_meter(
    tmp_path: Path,
) -> None:
    write_controller_key(tmp_path)
    keeper_signer = start_signer(tmp_path / "controller.key", tmp_path)
    try:
        client = remote(keeper_signer)
        drawn = client.draw(draw_request(client))
        assert not client.check(query(50_000), None).reached
        keeper_signer.process.kill()  # SIGKILL: no chance to write anything more
        keeper_signer.process.communicate()
        keeper_signer = start_signer(tmp_path / "controller.key", tmp_path)
        client = remote(keeper_signer)
        with pytest.raises(MysteryAlarmError, match="below the 50000 cents already asked"):
            client.check(query(40_000), Meter(30_000))
        assert client.draw(draw_request(client)) == drawn  # the same draw, not a new one
        verdict = client.check(query(CEILING), Meter(50_000))
        assert verdict.reveal is not None
        assert reveal_holds(drawn, verdict.reveal, [client.public_key]) is None
        sealed = keeper_signer.state.with_name("mystery.json")
        assert stat.S_IMODE(sealed.stat().st_mode) == 0o600
        assert not sealed.with_name(".mystery.json.new").exists()
    finally:
        if keeper_signer.process.poll() is None:
            keeper_signer.process.kill()
            keeper_signer.process.communicate()


def test_the_signer_keeps_its_sealed_draws_where_sealed_names(tmp_path: Path) -> None:
    write_controller_key(tmp_path)
    (tmp_path / "sealed").mkdir()
    sealed = tmp_path / "sealed" / "levels.json"
    socket_path = tmp_path / "signer.sock"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "controller", "signer", "--key", str(tmp_path / "controller.key"),
            "--socket", str(socket_path), "--state", str(tmp_path / "marks.json"),
            "--sealed", str(sealed), "--controller", "c1",
        ],
        env=CHILD, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=WAIT_S), "the signer never listened"
            assert process.stdout.readline().startswith("signing with key")
        client = RemoteSigner(socket_path, timeout_s=5.0)
        drawn = client.draw(draw_request(client))
        assert drawn.commitment.encode() in sealed.read_bytes()
        assert stat.S_IMODE(sealed.stat().st_mode) == 0o600
        assert not (tmp_path / "mystery.json").exists()
    finally:
        process.terminate()
        process.communicate(timeout=WAIT_S)


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[SignerProcess, SignerProcess]]:
    """Node a's and node b's signers: each its own controller key, one sealing key between them."""
    sealing = tmp_path / "sealing.key"
    write_sealing_key(sealing, SealingKey.generate())
    signers = []
    for name in ("a", "b"):
        write_controller_key(tmp_path / name)
        signers.append(start_signer(tmp_path / name / "controller.key", tmp_path / name,
                                    sealing=sealing))  # fmt: skip
    try:
        yield signers[0], signers[1]
    finally:
        for keeper_signer in signers:
            if keeper_signer.process.poll() is None:
                keeper_signer.process.kill()
                keeper_signer.process.communicate()


def test_the_next_nodes_signer_takes_the_draw_from_its_envelope_and_reveals_its_trigger(
    two_nodes: tuple[SignerProcess, SignerProcess],
) -> None:
    """docs/ha.md, "Mystery levels across a failover", through real signer processes."""
    first, second = remote(two_nodes[0]), remote(two_nodes[1])
    assert first.key_id != second.key_id
    drawn = first.draw(draw_request(first))
    envelope = first.envelope(drawn)
    assert envelope is not None
    assert not first.check(query(50_000), None).reached
    held = two_nodes[0].state.with_name("mystery.json").read_bytes()
    second.adopt(drawn, envelope, Meter(50_000))  # node a is gone; b goes on at its meter
    assert stat.S_IMODE(two_nodes[1].state.with_name("mystery.json").stat().st_mode) == 0o600
    verdict = second.check(query(CEILING), Meter(50_000))
    assert verdict.reveal is not None
    assert reveal_holds(drawn, verdict.reveal, [first.public_key]) is None
    assert verdict.reveal.nonce.encode() in held  # the very trigger node a's signer drew
    # Nothing is opened for a statement the envelope was not sealed with.
    forged = msgspec.structs.replace(drawn, draw=2)
    with pytest.raises(MysteryRefusedError, match="does not open with this draw"):
        remote(two_nodes[1]).adopt(forged, envelope, Meter(50_000))


def test_a_signer_without_the_sealing_key_seals_nothing_and_opens_nothing(
    keeper_signer: SignerProcess,
) -> None:
    client = remote(keeper_signer)
    drawn = client.draw(draw_request(client))
    assert client.envelope(drawn) is None  # no envelope: the journal records the draw alone
    sealing = SealingKey.generate()
    key = ControllerKey.generate()
    other = seal(draw_request(client, draw=1, controller="c1"), key.sign)
    envelope = seal_envelope(sealing, other)
    with pytest.raises(MysteryRefusedError, match="holds no sealing key"):
        remote(keeper_signer).adopt(other.drawn, envelope, Meter(50_000))
