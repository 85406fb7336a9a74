"""Start-up never trusts the stored state (docs/faults.md, "Edited state").

Before the daemon builds on the materialized tables it rebuilds the state from the last
checkpoint that verifies (its snapshot, then the rows after it) and compares: a meter edited
by hand in the ``pools`` table stops the start, named with both values, and the refusal is
journaled. The check replays only the rows after the last checkpoint, whatever the journal's
length (the tests count the rows replayed). A checkpoint someone else signed, a snapshot
edited, a row edited after the checkpoint or a history rewritten before it are each found.

Every journal is a real SQLite file, edited as an intruder with the file would edit it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest
from support.journal.journal_rig import (
    AT,
    POOL,
    checkpoint,
    opened_journal,
    play,
    rows_of,
    wager,
)
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

from controller.config.load import parse_config
from controller.events import MeterAdjusted, decode_event
from controller.journal import JournalError
from controller.journal.chain import row_hash
from controller.journal.checkpoints import seal, signed_bytes
from controller.journal.sqlite.rows import read_rows
from controller.journal.sqlite.state_check import check_state
from controller.ledger.snapshot import digest, snapshot_text
from controller.ledger_journal.sqlite import Journal
from controller.ports import ControllerUnavailableError
from controller.runtime.broadcast import Broadcast
from controller.runtime.checkpointing import (
    CheckpointSchedule,
    StoredStateError,
    resume_checkpoints,
)
from controller.runtime.sequencer import Sequencer
from controller.security.controller_key import ControllerKey
from controller.service.wiring import build_runtime

ROOT = Path(__file__).resolve().parents[3]


def config_text(journal: Path) -> str:
    return (
        f'[controller]\nsite = "s"\nid = "c1"\njournal = "{journal}"\n\n'
        '[[pools]]\nid = "pool-a"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        'pool = "pool-a"\n\n[web]\nport = 1\n'
    )


def start(journal: Path, key: ControllerKey) -> None:
    """The daemon's start-up (build_runtime), then its journal closed again."""
    config = parse_config(config_text(journal), "test.toml", journal.parent)
    runtime = build_runtime(config, key=key)
    runtime.journal.close()


def schedule(key: ControllerKey) -> CheckpointSchedule:
    return CheckpointSchedule(key, "c1")


def set_meter(path: Path, cents: str) -> None:
    """Edit the pool's meter in the materialized ``pools`` table, as an intruder would."""
    with closing(sqlite3.connect(path)) as raw, raw:
        (text,) = raw.execute("SELECT state FROM pools WHERE pool_id = ?", [POOL]).fetchone()
        document = json.loads(text)
        document["meter"] = cents
        raw.execute("UPDATE pools SET state = ? WHERE pool_id = ?", [json.dumps(document), POOL])


def test_the_daemon_refuses_to_start_on_an_edited_meter(played: Path, key: ControllerKey) -> None:
    start(played, key)  # once as it was: the check passes and a checkpoint is written
    with Journal(played) as journal:
        meter = journal.state.pools[POOL].meter
        rows = journal.head[0]
    set_meter(played, "250000000")  # $2,500,000
    with pytest.raises(StoredStateError) as refused:
        start(played, key)
    assert f"pools/{POOL}: meter 250000000 in the table, {meter} by the journal" in str(
        refused.value
    )
    assert str(refused.value).startswith(f"{played}: the stored state is not what the journal")
    last = rows_of(played)[-1]
    assert last["seq"] == rows + 1
    assert (last["kind"], json.loads(str(last["event"]))["source"]) == ("fault", "start-up check")
    assert "meter 250000000 in the table" in json.loads(str(last["event"]))["detail"]
    # It stays refused, start after start, until the table is put right.
    with pytest.raises(StoredStateError):
        start(played, key)
    set_meter(played, str(meter))
    start(played, key)


@pytest.mark.slow
def test_jackpotd_run_refuses_an_edited_meter_in_one_line(tmp_path: Path) -> None:
    """The same through the command the service runs, on an approved site."""
    write_controller_key(tmp_path)
    config = tmp_path / "jackpotd.toml"
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c1"\njournal = "journal.db"\n{KEY_LINE}\n'
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        'pool = "P1"\n\n[web]\nport = 1\n'
    )
    approved_site(config)  # the manager's keys, the configuration and the software approved
    journal = tmp_path / "journal.db"
    with Journal(journal) as opened:
        meter = opened.state.pools["P1"].meter
    with closing(sqlite3.connect(journal)) as raw, raw:
        (text,) = raw.execute("SELECT state FROM pools WHERE pool_id = 'P1'").fetchone()
        raw.execute(
            "UPDATE pools SET state = ? WHERE pool_id = 'P1'",
            [json.dumps(json.loads(text) | {"meter": "250000000"})],
        )
    done = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 1
    refusal = [line for line in done.stderr.splitlines() if line.startswith("jackpotd: ")]
    assert refusal == [
        (
            f"jackpotd: {journal}: the stored state is not what the journal gives, refusing to "
            f"start: pools/P1: meter 250000000 in the table, {meter} by the journal"
        )
    ], done.stderr
    assert "meter display" not in done.stdout


def test_the_check_replays_only_the_rows_after_the_last_checkpoint(
    tmp_path: Path, key: ControllerKey
) -> None:
    replayed = {}
    for size in (100, 2000):
        path = tmp_path / f"journal-{size}.db"
        with opened_journal(path) as journal:
            play(journal, 0, size)
            checkpoint(journal, key)
            play(journal, size, 3)  # nine rows after it, in both
            check = check_state(journal, key)
            assert check.ok, check.problems
            assert check.checkpoint is not None
            replayed[journal.head[0]] = check.replayed
    (short, long_) = sorted(replayed)
    assert long_ - short == 1900 * 3
    assert replayed[short] == replayed[long_] == 1 + 9  # the checkpoint's own row, and after


def test_a_journal_without_a_checkpoint_is_replayed_whole_then_checkpointed(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        rows = journal.head[0]
        assert check_state(journal, key).replayed == rows
        resumed = resume_checkpoints(journal, schedule(key), AT)
        assert resumed.last is not None
        assert resumed.last.row == rows + 1
        assert check_state(journal, key).replayed == 1
        # A start right after it (a clean shutdown's checkpoint is the last row) adds nothing.
        again = resume_checkpoints(journal, schedule(key), AT)
        assert again.last == resumed.last
        assert journal.head[0] == rows + 1


def test_a_checkpoint_signed_with_another_key_is_passed_over(
    played: Path, key: ControllerKey, caplog: pytest.LogCaptureFixture
) -> None:
    old = ControllerKey.generate()  # the key before a rotation
    with Journal(played) as journal:
        row = checkpoint(journal, old)
        with caplog.at_level(logging.WARNING):
            resumed = resume_checkpoints(journal, schedule(key), AT)
    assert f"checkpoint at row {row}: signed by another key ({old.key_id}), not used" in (
        caplog.text
    )
    assert resumed.last is not None
    assert resumed.last.event.key_id == key.key_id


def test_a_doctored_state_under_a_checkpoint_of_another_key_is_found(
    played: Path, key: ControllerKey
) -> None:
    """The intruder edits the meter, and writes a checkpoint and snapshot that agree with it."""
    with Journal(played) as journal:
        checkpoint(journal, key)
        pool = journal.state.pools[POOL]
        meter = pool.meter
        doctored = replace(journal.state, pools={POOL: replace(pool, meter=pool.meter * 100)})
        sealed = seal(
            ControllerKey.generate(), "c1", doctored, journal.head, AT, domain=journal.domain
        )
        journal.append_many([sealed.event], snapshot=sealed)
    set_meter(played, str(meter * 100))
    with Journal(played) as journal:
        check = check_state(journal, key)
    assert f"pools/{POOL}: meter {meter * 100} in the table, {meter} by the journal" in (
        check.problems
    )


def test_a_checkpoint_forged_under_the_controllers_key_id_stops_the_start(
    played: Path, key: ControllerKey
) -> None:
    intruder = ControllerKey.generate()
    with Journal(played) as journal:
        sealed = seal(intruder, "c1", journal.state, journal.head, AT, domain=journal.domain)
        event = msgspec.structs.replace(sealed.event, key_id=key.key_id)
        event = msgspec.structs.replace(event, signature=intruder.sign(signed_bytes(event)))
        row = journal.append_many([event], snapshot=replace(sealed, event=event))[0].seq
        check = check_state(journal, key)
    assert check.problems == [
        (
            f"checkpoint at row {row}: its signature under this controller's key does not verify: "
            "someone else wrote it"
        )
    ]


def test_an_edited_snapshot_is_passed_over_for_an_earlier_checkpoint(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        first = checkpoint(journal, key)
        play(journal, 0, 2)
        second = checkpoint(journal, key)
    with closing(sqlite3.connect(played)) as raw, raw:
        raw.execute("UPDATE snapshots SET state = ? WHERE seq = ?", ["{}", second])
    with Journal(played) as journal:
        check = check_state(journal, key)
    assert check.ok, check.problems
    assert check.checkpoint is not None
    assert check.checkpoint.row == first
    assert check.notes == [
        f"checkpoint at row {second}: its stored snapshot is not the state it signed, not used"
    ]


def test_a_row_edited_after_the_checkpoint_stops_the_start(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        checkpoint(journal, key)
        play(journal, 0, 1)
        seq = journal.head[0] - 1  # the second wager's row
    with closing(sqlite3.connect(played)) as raw, raw:
        raw.execute(
            "UPDATE journal SET event = replace(event, '\"amount_cents\":100', "
            "'\"amount_cents\":900') WHERE seq = ?",
            [seq],
        )
    with Journal(played) as journal:
        problems = check_state(journal, key).problems
    assert f"row {seq}: the row's contents do not match its hash" in problems


def test_a_history_rewritten_before_the_checkpoint_stops_the_start(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        row = checkpoint(journal, key)
    # Rewrite row 3 and every hash after it, so that the chain itself verifies again.
    with closing(sqlite3.connect(played)) as raw, raw:
        raw.execute("UPDATE journal SET at = '2024-05-01T12:00:01Z' WHERE seq = 3")
        previous = str(rows_of(played)[1]["hash"])
        for found in list(read_rows(raw, 2)):
            digest_ = row_hash(previous, found.values)
            raw.execute(
                "UPDATE journal SET hash = ? WHERE seq = ?",
                [bytes.fromhex(digest_), found.values["seq"]],
            )
            previous = digest_
    with Journal(played) as journal:
        problems = check_state(journal, key).problems
    assert problems == [
        (
            f"checkpoint at row {row}: row {row - 1} does not have the hash it signed: "
            "the journal was rewritten"
        )
    ]


def test_a_rebuild_keeping_the_controllers_checkpoints_stops_the_start(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    """The intruder drops a forged row and appends the rest again, checkpoints included."""
    with Journal(played) as journal:
        journal.append(MeterAdjusted("forged-1", AT, POOL, "reserve", 5_000_000, "x", "top-up"))
        play(journal, 0, 2)
        row = checkpoint(journal, key)
    kept = [decode_event(str(r["event"])) for r in rows_of(played) if r["event_id"] != "forged-1"]
    with Journal(tmp_path / "rebuilt.db") as rebuilt:
        rebuilt.append_many(kept)
        assert not rebuilt.db.conn.execute("SELECT * FROM snapshots").fetchall()
        check = check_state(rebuilt, key)
    assert check.problems == [
        (
            f"checkpoint at row {row - 1}: row {row - 1} does not have the hash it signed: "
            "the journal was rewritten"
        )
    ]


def test_a_running_controller_does_not_take_on_tables_edited_beside_it(played: Path) -> None:
    """An edited meter, then a supervisor's command appending on top of it: fail closed."""
    with Journal(played) as daemon:
        meter = daemon.state.pools[POOL].meter
        set_meter(played, "250000000")
        with Journal(played) as command:  # opens the edited tables and builds on them
            command.append(wager("cli-w1", "rx", 1))
        with pytest.raises(JournalError) as refused:
            daemon.append(wager("d-w1", "rx", 2))
        message = str(refused.value)
        assert message.startswith(f"{played}: another process wrote the journal, and the stored")
        assert f"pools/{POOL}: meter " in message
        assert "replay gives other effects than the journal records" in message
        assert daemon.state.pools[POOL].meter == meter  # nothing moved


async def test_the_sequencer_fails_closed_on_tables_edited_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        sequencer = Sequencer(journal, Broadcast())
        runner = asyncio.create_task(sequencer.run())
        await sequencer.submit(wager("d-w1", "rx", 1))
        set_meter(path, "250000000")
        with Journal(path) as command:
            command.append(wager("cli-w1", "rx", 2))
        with pytest.raises(ControllerUnavailableError):
            await sequencer.submit(wager("d-w2", "rx", 3))
        runner.cancel()
        assert sequencer.failed_reason is not None
        assert "another process wrote the journal" in sequencer.failed_reason
        assert f"pools/{POOL}: meter " in sequencer.failed_reason


def test_the_snapshot_stored_is_the_state_the_checkpoint_signed(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        state = journal.state
        row = checkpoint(journal, key)
    with closing(sqlite3.connect(played)) as raw:
        seq, head, text = raw.execute("SELECT seq, head_seq, state FROM snapshots").fetchone()
    event = json.loads(str(rows_of(played)[-1]["event"]))
    assert (seq, head) == (row, row - 1)
    assert text == snapshot_text(state)
    assert digest(text) == event["state_digest"]
