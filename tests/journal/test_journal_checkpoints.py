"""Signed checkpoints and anchors: ``jackpotd verify`` proves which history this is.

A checkpoint is the controller's signed statement of a row's hash and of the state there. With
the controller's public key, ``verify`` checks each one's signature and checks what it states
against the chain and the replay; with saved heads (``--anchor``) it checks that the anchored
rows are in the chain with their hashes. The attack of docs/faults.md ("A rebuilt journal"):
forge rows, then drop them and append the rest again into a new file, whose chain verifies.
The anchors and the checkpoints refuse it.

Every journal is a real SQLite file; the commands run as ``python -m controller``.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import AT, NOTHING, OTHER, POOL, rows_of, settle, wager

from controller.events import CheckpointRecorded, MeterAdjusted, encode_event
from controller.journal.anchors import AnchorError, read_anchors
from controller.journal.checkpoint_audit import VERIFIED
from controller.journal.checkpoints import KEEP, seal, signed_bytes
from controller.ledger_journal.sqlite import Journal, verify
from controller.security.controller_key import ControllerKey, key_id

if TYPE_CHECKING:
    from controller.ports import Receipt

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0
CONTROLLER = "pit-2"


def jackpotd(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *map(str, argv)],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def checkpoint(journal: Journal, key: ControllerKey) -> Receipt:
    """What the running controller does every so many rows: a signed checkpoint, journaled."""
    sealed = seal(key, CONTROLLER, journal.state, journal.head, AT, domain=journal.domain)
    (receipt,) = journal.append_many([sealed.event], snapshot=sealed)
    assert receipt.applied
    return receipt


def play(journal: Journal, first: int, rounds: int) -> None:
    for number in range(first, first + rounds):
        round_id = f"x{number}"
        journal.append(wager(f"{round_id}-w1", round_id, 1))
        journal.append(wager(f"{round_id}-w2", round_id, 2))
        journal.append(settle(f"{round_id}-settle", round_id, {1: NOTHING, 2: OTHER}))


def public_key_file(folder: Path, key: ControllerKey) -> Path:
    path = folder / "controller.pub"
    path.write_text(key.public_key + "\n")
    return path


def test_a_checkpoint_states_the_head_and_the_state_and_its_signature_verifies(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        head = journal.head
        receipt = checkpoint(journal, key)
        meter = journal.state.pools[POOL].meter_cents
    assert receipt.seq == head[0] + 1
    report = verify(played, keys=[key.public_key])
    assert report.ok, report.problems
    (found,) = report.checkpoints
    assert (found.row, found.head_seq, found.head_hash) == (receipt.seq, *head)
    assert (found.key_id, found.signature) == (key.key_id, VERIFIED)
    event = msgspec.json.decode(rows_of(played)[-1]["event"], type=CheckpointRecorded)
    assert event.meters == {POOL: meter}
    assert event.controller == CONTROLLER
    # Without a key the checkpoints are still checked against the chain and the replay.
    assert verify(played).ok
    assert verify(played).checkpoints[0].signature == "not checked"


def test_verify_json_prints_the_head_and_the_last_checkpoint(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    with Journal(played) as journal:
        receipt = checkpoint(journal, key)
        play(journal, 1, 2)
        head = journal.head
    public = public_key_file(tmp_path, key)
    done = jackpotd("verify", "--db", played, "--json", "--controller-key", public)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["ok"] is True
    assert document["head"] == {"seq": head[0], "hash": head[1]}
    assert document["checkpoint"]["row"] == receipt.seq
    assert document["checkpoint"]["signature"] == VERIFIED
    assert (document["checkpoints"], document["controller_keys"]) == (1, 1)
    text = jackpotd("verify", "--db", played, "--controller-key", public)
    assert text.returncode == 0, text.stderr
    assert f"head: row {head[0]} {head[1]}" in text.stdout
    assert f"the last at row {receipt.seq} covers row {receipt.seq - 1}" in text.stdout
    # What verify --json prints is an anchor as it is.
    saved = tmp_path / "verify.json"
    saved.write_text(done.stdout)
    again = jackpotd("verify", "--db", played, "--anchor", saved)
    assert again.returncode == 0, again.stderr
    assert "anchors: 1 saved heads are in the chain" in again.stdout


def forged_checkpoint(journal: Journal, signer: ControllerKey, *, claimed: str) -> str:
    """A checkpoint signed with ``signer`` under the key id ``claimed``, as a JSON line."""
    sealed = seal(signer, CONTROLLER, journal.state, journal.head, AT, domain=journal.domain)
    event = msgspec.structs.replace(sealed.event, key_id=claimed)
    event = msgspec.structs.replace(event, signature=signer.sign(signed_bytes(event)))
    return encode_event(event).decode() + "\n"


@pytest.mark.parametrize("claims_the_controllers_key", [False, True], ids=["own-key", "its-id"])
def test_a_checkpoint_the_controller_did_not_sign_is_refused(
    played: Path, key: ControllerKey, tmp_path: Path, *, claims_the_controllers_key: bool
) -> None:
    intruder = ControllerKey.generate()
    claimed = key.key_id if claims_the_controllers_key else intruder.key_id
    with Journal(played) as journal:
        checkpoint(journal, key)
        line = forged_checkpoint(journal, intruder, claimed=claimed)
    forged = tmp_path / "forged.jsonl"
    forged.write_text(line)
    applied = jackpotd("apply", "--db", played, forged)
    assert applied.returncode == 0, applied.stderr  # a checkpoint changes nothing: journaled
    row = len(rows_of(played))
    report = verify(played, keys=[key.public_key])
    expected = (
        f"row {row}: the checkpoint's signature does not verify (key {key.key_id})"
        if claims_the_controllers_key
        else f"row {row}: checkpoint signed by key {intruder.key_id}, not a key given"
    )
    assert report.problems == [expected]


def test_a_checkpoint_whose_state_is_not_the_replays_is_refused(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        # The controller's own key, signing a state the journal does not give.
        pool = journal.state.pools[POOL]
        lie = replace(journal.state, pools={POOL: replace(pool, meter=pool.meter + 5_000_000)})
        sealed = seal(key, CONTROLLER, lie, journal.head, AT, domain=journal.domain)
        journal.append_many([sealed.event], snapshot=sealed)
        row = journal.head[0]
    report = verify(played, keys=[key.public_key])
    assert report.problems == [
        f"row {row}: the checkpoint's state differs from the replay at row {row - 1}",
        f"row {row}: the checkpoint's meters differ from the replay at row {row - 1}",
    ]


def test_an_edited_snapshot_is_refused(played: Path, key: ControllerKey) -> None:
    with Journal(played) as journal:
        row = checkpoint(journal, key).seq
    with closing(sqlite3.connect(played)) as raw, raw:
        raw.execute("UPDATE snapshots SET state = replace(state, '\"revision\"', '\"revision\" ')")
    assert verify(played, keys=[key.public_key]).problems == [
        f"snapshot of row {row}: not the state its checkpoint signed"
    ]


def test_the_checkpoints_of_a_rotated_key_verify_with_both_public_keys(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    new = ControllerKey.generate()
    with Journal(played) as journal:
        checkpoint(journal, key)
        play(journal, 1, 1)
        checkpoint(journal, new)  # after the rotation (docs/operations.md)
    anchors = tmp_path / "anchors.jsonl"
    anchors.write_text(
        "".join(json.dumps({"controller_key": k.public_key}) + "\n" for k in (key, new))
    )
    done = jackpotd("verify", "--db", played, "--anchor", anchors)
    assert done.returncode == 0, done.stderr
    assert "checkpoints: 2, signatures verified" in done.stdout
    both = verify(played, keys=[key.public_key, new.public_key])
    assert [summary.key_id for summary in both.checkpoints] == [key.key_id, new.key_id]
    only_new = verify(played, keys=[new.public_key])
    assert only_new.problems == [
        f"row {both.checkpoints[0].row}: checkpoint signed by key {key.key_id}, not a key given"
    ]


def test_only_the_last_snapshots_are_kept(played: Path, key: ControllerKey) -> None:
    rows = []
    with Journal(played) as journal:
        for number in range(KEEP + 2):
            play(journal, number * 10, 1)
            rows.append(checkpoint(journal, key).seq)
    with closing(sqlite3.connect(played)) as raw:
        kept = [seq for (seq,) in raw.execute("SELECT seq FROM snapshots ORDER BY seq")]
    assert kept == rows[-KEEP:]
    report = verify(played, keys=[key.public_key])
    assert report.ok, report.problems
    assert [summary.row for summary in report.checkpoints] == rows


def events_of(path: Path, dropped: set[str]) -> str:
    """The journal's events but ``dropped``, as ``jackpotd apply`` takes them."""
    return "".join(
        f"{row['event']}\n" for row in rows_of(path) if str(row["event_id"]) not in dropped
    )


FORGED = MeterAdjusted("forged-1", AT, POOL, "reserve", 5_000_000, "intruder", "top-up")


def forged_and_anchored(played: Path, key: ControllerKey, folder: Path) -> tuple[Path, int]:
    """A forged row, checkpoints and an anchor saved after it: the anchors file, the reserve."""
    public = public_key_file(folder, key)
    anchors = folder / "anchors.jsonl"  # kept off the box
    with Journal(played) as journal:
        play(journal, 1, 3)
        # Someone who can write the journal file journals a forged adjustment...
        feed = folder / "forged.jsonl"
        feed.write_text(encode_event(FORGED).decode() + "\n")
        assert jackpotd("apply", "--db", played, feed).returncode == 0
        play(journal, 10, 2)  # the daemon catches up with the other writer's row
        assert journal.state.pools[POOL].reserve_cents > 5_000_000
        # ...the controller checkpoints the head as it goes, and the operators save anchors.
        checkpoint(journal, key)
    saved = jackpotd("anchor", "save", "--db", played, "--to", anchors, "--controller-key", public)
    assert saved.returncode == 0, saved.stderr
    assert read_anchors(anchors).keys == [key.public_key]
    with Journal(played) as journal:
        play(journal, 20, 4)
        checkpoint(journal, key)
        return anchors, journal.state.pools[POOL].reserve_cents


def rebuilt(played: Path, dropped: set[str], path: Path) -> Path:
    """What the intruder makes: the journal's events but ``dropped``, applied to a new file."""
    feed = path.with_suffix(".jsonl")
    feed.write_text(events_of(played, dropped))
    assert jackpotd("apply", "--db", path, feed).returncode == 0
    return path


@pytest.mark.slow
def test_a_rebuilt_chain_is_refused_against_its_anchor(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    anchors, reserve = forged_and_anchored(played, key, tmp_path)
    (head,) = read_anchors(anchors).heads
    # Later the intruder hides the forgery: every other event (and, to avoid the checkpoints'
    # hashes giving them away, no checkpoint) appended again into a new file.
    checkpoints = {str(r["event_id"]) for r in rows_of(played) if r["kind"] == "checkpoint"}
    new = rebuilt(played, {FORGED.event_id} | checkpoints, tmp_path / "rebuilt.db")
    assert len(rows_of(new)) >= head.seq
    with Journal(new) as journal:
        assert journal.state.pools[POOL].reserve_cents == reserve - 5_000_000
    plain = jackpotd("verify", "--db", new)
    assert plain.returncode == 0, plain.stderr  # the chain alone cannot tell
    # The anchor can: the anchored row is not the one of this history.
    against = jackpotd("verify", "--db", new, "--anchor", anchors)
    assert against.returncode == 1
    found = rows_of(new)[head.seq - 1]["hash"]
    assert (
        f"anchor {anchors}:2: row {head.seq} has the hash {str(found)[:16]}..., the anchor "
        f"{head.hash[:16]}...: this is not the history that was anchored"
    ) in against.stderr
    # And so can the controller's key: the rebuilt file holds no checkpoint it signed.
    signed = jackpotd("verify", "--db", new, "--controller-key", tmp_path / "controller.pub")
    assert signed.returncode == 1
    assert "no checkpoint signed by a controller key given" in signed.stderr
    # And an anchor cannot be saved over the rebuilt history.
    before = anchors.read_text()
    refused = jackpotd("anchor", "save", "--db", new, "--to", anchors)
    assert refused.returncode == 1
    assert f"nothing saved to {anchors}" in refused.stderr
    assert anchors.read_text() == before


def test_a_rebuild_that_keeps_the_checkpoints_fails_on_their_hashes(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    forged_and_anchored(played, key, tmp_path)
    kept = rebuilt(played, {FORGED.event_id}, tmp_path / "kept.db")
    report = verify(kept, keys=[key.public_key])
    # Each checkpoint signed the hashes of the other history (or now stands where its row was).
    moved = ("the history before it was rewritten", "which is not before it")
    assert len(report.problems) == 2, report.problems  # one for each checkpoint
    assert all(any(why in p for why in moved) for p in report.problems), report.problems


def test_an_anchors_file_is_read_value_by_value_and_a_bad_one_named(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    rows = rows_of(played)
    anchors = tmp_path / "anchors.jsonl"
    anchors.write_text(
        json.dumps({"controller_key": key.public_key, "key_id": key.key_id}) + "\n"
        + json.dumps({"seq": 3, "hash": rows[2]["hash"]}) + "\n"
        + json.dumps({"ok": True, "head": {"seq": 5, "hash": rows[4]["hash"]}}, indent=2) + "\n"
    )  # fmt: skip
    read = read_anchors(anchors)
    assert read.keys == [key.public_key]
    assert [(head.seq, head.where) for head in read.heads] == [
        (3, f"{anchors}:2"),
        (5, f"{anchors}:3"),
    ]
    assert key_id(read.keys[0]) == key.key_id
    for text, reason in (
        ('{"seq": 3}\n', f"{anchors}:1: hash must be 64 hex digits"),
        ('{"seq": 0, "hash": "' + "0" * 64 + '"}\n', f"{anchors}:1: seq must be a row number"),
        ('\n\n{"ok": false, "head": {"seq": 1, "hash": "x"}}', f"{anchors}:3: a verification"),
        ("[1, 2]\n", f"{anchors}:1: an anchor is a JSON object"),
        ("{not json\n", f"{anchors}: line 1: not JSON"),
        ('{"controller_key": "abc"}\n', f"{anchors}:1: controller_key: not an Ed25519"),
        ('{"pools": {}}\n', f"{anchors}:1: neither a head"),
    ):
        anchors.write_text(text)
        with pytest.raises(AnchorError) as refused:
            read_anchors(anchors)
        assert str(refused.value).startswith(reason), refused.value
    anchors.write_text(json.dumps({"seq": len(rows) + 5, "hash": "ab" * 32}) + "\n")
    done = jackpotd("verify", "--db", played, "--anchor", anchors)
    assert done.returncode == 1
    assert f"row {len(rows) + 5} is not in the journal ({len(rows)} rows)" in done.stderr
    missing = jackpotd("verify", "--db", played, "--anchor", tmp_path / "absent.jsonl")
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"jackpotd: {tmp_path / 'absent.jsonl'}: cannot read")
    bad_key = tmp_path / "bad.pub"
    bad_key.write_text(base64.b64encode(b"short").decode())
    wrong = jackpotd("verify", "--db", played, "--controller-key", bad_key)
    assert wrong.returncode == 1
    assert wrong.stderr.startswith(f"jackpotd: {bad_key}: not an Ed25519 public key")
