"""The signer holds the controller key and signs only known statements, never below its mark.

A real ``jackpotd signer`` on a Unix socket (tests/support/runtime/signer_process.py), the daemon's
client (controller/runtime/remote_signer.py) and the journal's own signing functions: what it
signs verifies under the key; a head or checkpoint below the highest row it signed, at that row
with another hash, or of another journal, is refused, and stays refused after a restart (its
marks are on disk before it answers); a request of an unknown kind, or bytes of no known
statement, get no signature (docs/operations.md, "The signer").
"""

from __future__ import annotations

import socket
import stat
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.runtime.controller_keys import write_controller_key
from support.runtime.signer_process import running, start_signer

from controller.journal.checkpoints import seal, signature_holds
from controller.journal.high_water import head_verifies, sign_head
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState
from controller.runtime.remote_signer import HeadRefusedError, RemoteSigner
from controller.security.signer import (
    LENGTH,
    Answer,
    SignerRefusedError,
    SignerUnavailableError,
    as_controller_key,
    frame_length,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.runtime.signer_process import SignerProcess

AT = "2026-12-01T12:00:00+00:00"
ROW_5 = "5" * 64


@pytest.fixture
def signer(tmp_path: Path) -> Iterator[SignerProcess]:
    write_controller_key(tmp_path)
    yield from running(tmp_path / "controller.key", tmp_path)


def remote(signer: SignerProcess) -> RemoteSigner:
    return RemoteSigner(signer.socket, timeout_s=5.0)


def test_heads_and_checkpoints_signed_through_the_signer_verify_under_the_key(
    signer: SignerProcess,
) -> None:
    client = remote(signer)
    key = as_controller_key(client)
    head = sign_head(key, "c1", "journal-a", (5, ROW_5), AT)
    assert head_verifies(head, [client.public_key])
    sealed = seal(key, "c1", LedgerState(), (6, "6" * 64), AT, domain=LEDGER)
    assert signature_holds(sealed.event, [client.public_key])
    assert client.key_id == head.key_id == sealed.event.key_id


def test_a_head_below_the_mark_or_rewritten_or_of_another_journal_is_refused(
    signer: SignerProcess,
) -> None:
    key = as_controller_key(remote(signer))
    sign_head(key, "c1", "journal-a", (5, ROW_5), AT)
    sign_head(key, "c1", "journal-a", (5, ROW_5), AT)  # the same head again: still signed
    with pytest.raises(HeadRefusedError, match="below row 5"):
        sign_head(key, "c1", "journal-a", (4, "4" * 64), AT)
    with pytest.raises(HeadRefusedError, match="rewritten"):
        sign_head(key, "c1", "journal-a", (5, "f" * 64), AT)
    with pytest.raises(HeadRefusedError, match="another journal"):
        sign_head(key, "c1", "journal-b", (9, "9" * 64), AT)
    with pytest.raises(HeadRefusedError, match="below row 5"):
        seal(key, "c1", LedgerState(), (3, "3" * 64), AT, domain=LEDGER)  # the rolled-back head
    with pytest.raises(SignerRefusedError, match="not one this signer serves"):
        sign_head(key, "c2", "journal-a", (9, "9" * 64), AT)
    sign_head(key, "c1", "journal-a", (7, "7" * 64), AT)  # the journal moving on is signed


def test_the_mark_survives_a_restart_of_the_signer(tmp_path: Path, signer: SignerProcess) -> None:
    sign_head(as_controller_key(remote(signer)), "c1", "journal-a", (5, ROW_5), AT)
    signer.stop()
    assert stat.S_IMODE(signer.state.stat().st_mode) == 0o600
    again = start_signer(tmp_path / "controller.key", tmp_path)
    try:
        with pytest.raises(HeadRefusedError, match="below row 5"):
            sign_head(as_controller_key(remote(again)), "c1", "journal-a", (4, "4" * 64), AT)
    finally:
        again.stop()


def ask(path: Path, body: bytes) -> Answer:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5.0)
        connection.connect(str(path))
        connection.sendall(LENGTH.pack(len(body)) + body)
        length = frame_length(connection.recv(4, socket.MSG_WAITALL))
        return msgspec.json.decode(connection.recv(length, socket.MSG_WAITALL), type=Answer)


@pytest.mark.parametrize(
    "request_body",
    [
        b'{"v":1,"kind":"anything","statement":{"data":"aGVsbG8="}}',
        b'{"v":1,"kind":"head","statement":{"controller":"c1","data":"x"}}',
        b'{"v":2,"kind":"key"}',
        b"not json",
    ],
    ids=["unknown kind", "unknown fields", "unknown version", "not json"],
)
def test_a_request_of_no_known_kind_gets_no_signature(
    signer: SignerProcess, request_body: bytes
) -> None:
    answer = ask(signer.socket, request_body)
    assert not answer.ok
    assert not answer.signature
    assert answer.reason
    assert remote(signer).public_key  # and the signer carries on


def test_bytes_of_no_known_statement_are_refused_before_they_are_sent(
    signer: SignerProcess,
) -> None:
    with pytest.raises(SignerRefusedError, match="not a statement the signer signs"):
        remote(signer).sign(b"transfer $1,000,000")


def test_the_socket_is_its_owner_and_group_s_alone(signer: SignerProcess) -> None:
    assert stat.S_ISSOCK(signer.socket.stat().st_mode)
    assert stat.S_IMODE(signer.socket.stat().st_mode) == 0o660


def test_a_signer_that_is_not_there_is_unavailable_at_once(tmp_path: Path) -> None:
    with pytest.raises(SignerUnavailableError, match="cannot be reached"):
        RemoteSigner(tmp_path / "nobody.sock", timeout_s=1.0)


def test_the_daemon_s_client_connects_again_after_the_signer_restarts(
    tmp_path: Path, signer: SignerProcess
) -> None:
    client = remote(signer)
    sign_head(as_controller_key(client), "c1", "journal-a", (5, ROW_5), AT)
    signer.stop()
    with pytest.raises(SignerUnavailableError):  # meanwhile: unavailable, never a signature
        client.sign(b"jackpotd signed head v1\n{}")
    again = start_signer(tmp_path / "controller.key", tmp_path)
    try:
        head = sign_head(as_controller_key(client), "c1", "journal-a", (6, "6" * 64), AT)
        assert head_verifies(head, [client.public_key])
    finally:
        again.stop()
