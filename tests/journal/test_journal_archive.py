"""Archiving old rows to sealed segments: one chain across them, replayable from empty.

docs/journal.md, "Archives"; docs/operations.md, "Archiving".

Every test works on a real journal file and real gzip segments; tampering is done on the files
as someone with the archive folder would (a segment rewritten, deleted, or two swapped).
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import (
    AT,
    FIVE_ACES,
    NOTHING,
    POOL,
    TABLE,
    checkpoint,
    opened_journal,
    play,
    rows_of,
    settle,
    wager,
)

from controller.cli.archive import archived_document, archived_lines
from controller.events import HitVerified, WagerLocked
from controller.journal import JournalError
from controller.journal import archive as archive_module
from controller.journal.anchors import Anchor
from controller.journal.archive import parse_moment
from controller.journal.sqlite.archive_records import archive_records
from controller.journal.sqlite.state_check import check_state
from controller.ledger_journal.sqlite import Journal, archive, verify

if TYPE_CHECKING:
    from pathlib import Path

    from controller.security.controller_key import ControllerKey

NOW = "2026-12-01T00:00:00.000Z"


def _records(path: Path) -> list[archive_module.ArchiveRecord]:
    with closing(sqlite3.connect(path)) as raw:
        return archive_records(raw)


def _count(path: Path, query: str, *params: object) -> int:
    with closing(sqlite3.connect(path)) as raw:
        return int(raw.execute(query, params).fetchone()[0])


@pytest.fixture
def checkpointed(tmp_path: Path, key: ControllerKey) -> Path:
    """Rounds, a checkpoint, rounds, a checkpoint, rounds: a journal the controller signed."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        play(journal, 0, 4)
        checkpoint(journal, key)
        play(journal, 4, 4)
        checkpoint(journal, key)
        play(journal, 8, 3)
    return path


def test_archived_segments_and_the_live_rows_verify_as_one_chain_replayed_from_empty(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    rows = rows_of(checkpointed)
    with Journal(checkpointed) as journal:
        meters = {pool: p.meter_cents for pool, p in journal.state.pools.items()}
    (first,) = archive(checkpointed, out, rows=20, keys=[key.public_key], now=NOW)
    (second,) = archive(checkpointed, out, rows=1000, keys=[key.public_key], now=NOW)
    # Each cut is the row a checkpoint covers: 4 rounds of 3 rows after the configuration.
    assert (first.first_seq, first.last_seq) == (1, 14)
    assert (second.first_seq, second.last_seq) == (15, 27)
    assert first.checkpoint_seq == 15
    assert second.checkpoint_seq == 28
    assert sorted(path.name for path in out.iterdir()) == [first.segment, second.segment]
    assert _count(checkpointed, "SELECT count(*) FROM journal WHERE seq <= 27") == 0
    assert rows_of(checkpointed) == rows[27:]  # the live rows as they were, chain included

    report = verify(checkpointed, archives=out, keys=[key.public_key])
    assert report.ok, report.problems
    assert (report.rows, report.head) == (len(rows), (len(rows), rows[-1]["hash"]))
    assert (report.archived, report.segments, report.segments_checked) == (27, 2, True)
    assert report.pools == meters  # the meters replayed from empty are the live ones
    assert [summary.signature for summary in report.checkpoints] == ["verified", "verified"]


def test_without_the_segments_verify_says_which_rows_are_archived_and_starts_from_the_cut(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    rows = rows_of(checkpointed)
    archive(checkpointed, tmp_path / "archive", rows=1000, keys=[key.public_key], now=NOW)
    report = verify(checkpointed, keys=[key.public_key])
    assert report.ok, report.problems
    assert (report.archived, report.segments, report.segments_checked) == (27, 1, False)
    assert report.rows == len(rows) - 27
    assert report.head == (len(rows), rows[-1]["hash"])
    assert report.checkpoints[-1].head_seq == 27  # the signed cut
    assert report.notes == []  # the live checkpoints cover live rows and the cut


def test_an_anchor_of_an_archived_row_needs_the_segments(
    checkpointed: Path, tmp_path: Path
) -> None:
    rows = rows_of(checkpointed)
    anchor = Anchor(5, str(rows[4]["hash"]), "anchors:1")
    out = tmp_path / "archive"
    archive(checkpointed, out, rows=1000, now=NOW)
    unread = verify(checkpointed, anchors=[anchor])
    assert unread.problems == [
        (
            "anchor anchors:1: row 5 is archived (rows 1 to 27): verify with the segments "
            "(--archives DIR) to check it"
        )
    ]
    assert verify(checkpointed, anchors=[anchor], archives=out).ok
    forged = Anchor(5, "0" * 64, "anchors:2")
    assert not verify(checkpointed, anchors=[forged], archives=out).ok


def _rewrite(segment: Path, change: object) -> None:
    """Decompress a segment, let ``change`` edit its lines (JSON documents), compress it again."""
    with gzip.open(segment, "rb") as file:
        lines = [json.loads(line) for line in file]
    change(lines)  # type: ignore[operator]
    with gzip.open(segment, "wb") as file:
        file.writelines(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def _archived_twice(
    path: Path, key: ControllerKey, out: Path
) -> list[archive_module.ArchiveRecord]:
    archive(path, out, rows=20, keys=[key.public_key], now=NOW)
    archive(path, out, rows=1000, keys=[key.public_key], now=NOW)
    return _records(path)


def test_a_tampered_segment_fails_with_its_name_and_the_row(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    first, _ = _archived_twice(checkpointed, key, out)

    def raise_a_wager(lines: list[dict[str, object]]) -> None:
        row = next(line for line in lines if line.get("seq") == 4)
        row["event"] = str(row["event"]).replace('"amount_cents":100', '"amount_cents":500')

    _rewrite(out / first.segment, raise_a_wager)
    report = verify(checkpointed, archives=out, keys=[key.public_key])
    assert not report.ok
    assert (
        f"segment {first.segment}: its SHA-256 is not the one recorded when it was archived: "
        "the file was changed or is another segment"
    ) in report.problems
    assert (
        f"segment {first.segment}: its lines are not those its trailer sealed (SHA-256 differs)"
    ) in report.problems
    assert "row 4: the row's contents do not match its hash" in report.problems


def test_a_missing_segment_fails_and_says_which_rows_are_not_verified(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    first, second = _archived_twice(checkpointed, key, out)
    (out / first.segment).unlink()
    report = verify(checkpointed, archives=out, keys=[key.public_key])
    assert report.problems == [
        f"segment {first.segment} (rows 1 to 14) is missing from {out}: those rows are not verified"
    ]
    assert (out / second.segment).exists()


def test_segments_swapped_fail_with_the_rows_each_holds(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    first, second = _archived_twice(checkpointed, key, out)
    one, two = out / first.segment, out / second.segment
    held = one.read_bytes()
    one.write_bytes(two.read_bytes())
    two.write_bytes(held)
    report = verify(checkpointed, archives=out, keys=[key.public_key])
    assert not report.ok
    assert (
        f"segment {first.segment}: holds rows 15 to 27, the journal archived rows 1 to 14 under "
        "that name"
    ) in report.problems
    assert (
        f"segment {second.segment}: holds rows 1 to 14, the journal archived rows 15 to 27 under "
        "that name"
    ) in report.problems


def test_rows_reordered_inside_a_segment_break_the_chain(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    first, _ = _archived_twice(checkpointed, key, out)

    def swap(lines: list[dict[str, object]]) -> None:
        lines[3], lines[4] = lines[4], lines[3]

    _rewrite(out / first.segment, swap)
    report = verify(checkpointed, archives=out)
    assert "row 4: expected row 3; rows are missing" in report.problems
    assert "row 3: the row's contents do not match its hash" in report.problems


def test_the_live_journal_keeps_working_after_an_archive(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    archive(checkpointed, out, rows=1000, keys=[key.public_key], now=NOW)
    with Journal(checkpointed) as journal:
        assert check_state(journal, key).ok  # the start-up check, from the signed cut
        play(journal, 20, 2)
        checkpoint(journal, key)
        assert check_state(journal, key).ok
    assert verify(checkpointed, keys=[key.public_key]).ok
    assert verify(checkpointed, archives=out, keys=[key.public_key]).ok


def test_a_journal_without_checkpoints_is_cut_where_asked_and_verifies_both_ways(
    played: Path, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    rows = rows_of(played)
    (record,) = archive(played, out, rows=4, now=NOW)
    assert (record.last_seq, record.checkpoint_seq) == (4, None)
    assert verify(played).ok
    report = verify(played, archives=out)
    assert report.ok, report.problems
    assert report.rows == len(rows)
    unsigned = verify(played, keys=[_other_key()])
    assert (
        "rows 1 to 4 are archived and no checkpoint signed by a controller key given covers "
        "the last of them: verify with the segments (--archives DIR)"
    ) in unsigned.problems


def _other_key() -> str:
    from controller.security.controller_key import ControllerKey  # noqa: PLC0415

    return ControllerKey.generate().public_key


def test_a_payout_pending_at_the_cut_stays_live_and_is_verified_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    out = tmp_path / "archive"
    with opened_journal(path) as journal:
        journal.append(wager("h-w1", "h", 1))
        journal.append(settle("h-settle", "h", {1: FIVE_ACES}))
        play(journal, 0, 2)
        assert set(journal.state.pending) == {"h-settle/1/progressive"}
    archive(path, out, rows=8, now=NOW)
    assert _count(path, "SELECT count(*) FROM payouts WHERE seq <= 8") == 1  # the pending hit
    assert verify(path).ok
    with Journal(path) as journal:
        journal.append(HitVerified("h-verify", AT, "h-settle/1/progressive", "supervisor-7"))
        assert not journal.state.pending
        play(journal, 10, 1)
    for report in (verify(path), verify(path, archives=out)):
        assert report.ok, report.problems
    # And a later archive takes it, verified, with its rows.
    archive(path, out, rows=1000, now=NOW)
    query = "SELECT count(*) FROM payouts WHERE payout_id = 'h-settle/1/progressive'"
    assert _count(path, query) == 0
    assert verify(path).ok
    assert verify(path, archives=out).ok


def test_a_pending_payout_edited_after_the_cut_is_found_without_the_segments(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("h-w1", "h", 1))
        journal.append(settle("h-settle", "h", {1: FIVE_ACES}))
        play(journal, 0, 2)
    archive(path, tmp_path / "archive", rows=8, now=NOW)
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        raw.execute("UPDATE payouts SET win_cents = win_cents + 100000")
    assert "payout h-settle/1/progressive: the stored payout differs from the replay" in (
        verify(path).problems
    )


def test_a_journal_that_does_not_verify_is_not_archived(played: Path, tmp_path: Path) -> None:
    with closing(sqlite3.connect(played, isolation_level=None)) as raw:
        raw.execute(
            "UPDATE pools SET state = replace(state, '\"hits_count\":2', '\"hits_count\":1')"
        )
    out = tmp_path / "archive"
    with pytest.raises(JournalError, match="the journal does not verify"):
        archive(played, out, rows=4, now=NOW)
    assert not out.exists() or not list(out.iterdir())
    assert _records(played) == []


def test_nothing_is_archived_when_no_checkpoint_covers_a_row_in_the_range(
    checkpointed: Path, tmp_path: Path
) -> None:
    with pytest.raises(JournalError, match="no checkpoint covers a row from 1 to 10"):
        archive(checkpointed, tmp_path / "archive", rows=10, now=NOW)
    assert _records(checkpointed) == []


def test_before_a_date_stops_at_the_first_row_dated_later(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:  # rows 1 and 2 at AT (2024-05-01T12:00:00Z)
        journal.append(wager("w1", "r1", 1))
        later = "2024-05-03T00:00:00Z"
        journal.append(WagerLocked("w2", later, TABLE, "r1", 2, "progressive", 100))
        journal.append(wager("w3", "r2", 3))  # dated AT again, after a later row: not taken
    (record,) = archive(path, tmp_path / "archive", before=parse_moment("2024-05-02"), now=NOW)
    assert record.last_seq == 3
    assert verify(path, archives=tmp_path / "archive").ok


def test_an_archive_that_cannot_be_recorded_leaves_the_journal_as_it_was_and_can_be_run_again(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    rows = rows_of(checkpointed)
    with closing(sqlite3.connect(checkpointed, isolation_level=None)) as raw:
        raw.execute(
            "CREATE TRIGGER no_archive BEFORE DELETE ON journal "
            "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
        )
    with pytest.raises(JournalError, match=r"could not be recorded .*disk full.*left as it was"):
        archive(checkpointed, out, rows=20, keys=[key.public_key], now=NOW)
    assert (_records(checkpointed), rows_of(checkpointed)) == ([], rows)
    assert len(list(out.iterdir())) == 1  # the segment written, never recorded
    with closing(sqlite3.connect(checkpointed, isolation_level=None)) as raw:
        raw.execute("DROP TRIGGER no_archive")
    (record,) = archive(checkpointed, out, rows=20, keys=[key.public_key], now=NOW)
    assert sorted(path.name for path in out.iterdir()) == [record.segment]
    assert verify(checkpointed, archives=out, keys=[key.public_key]).ok


def test_rows_put_back_into_an_archived_range_are_reported(
    checkpointed: Path, tmp_path: Path
) -> None:
    (record,) = archive(checkpointed, tmp_path / "archive", rows=20, now=NOW)
    with closing(sqlite3.connect(checkpointed, isolation_level=None)) as raw:
        raw.execute(
            "INSERT INTO journal SELECT 3, 'forged', kind, at, event, reason, effects, hash, NULL "
            "FROM journal WHERE seq = 16"
        )
    assert (
        f"the file holds 1 rows of the archived rows 1 to {record.last_seq}, which an archive "
        "removes with its record: they were put back"
    ) in verify(checkpointed).problems


def test_a_different_segment_of_the_same_rows_is_never_overwritten(
    checkpointed: Path, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(checkpointed)) as raw, closing(sqlite3.connect(other)) as copy:
        raw.backup(copy)
    (record,) = archive(other, out, rows=20, now=NOW)
    _rewrite(out / record.segment, lambda lines: lines[-1].update(state_digest="0" * 64))
    with pytest.raises(JournalError, match="another segment of these rows is there"):
        archive(checkpointed, out, rows=20, now=NOW)
    assert _records(checkpointed) == []


def test_jackpotd_archive_writes_the_segment_and_says_where_the_journal_continues(
    checkpointed: Path, tmp_path: Path
) -> None:
    out = tmp_path / "archive"
    command = [sys.executable, "-m", "controller", "archive", "--db", str(checkpointed)]
    done = subprocess.run(
        [*command, "--rows", "20", "--out", str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "archived rows 1 to 14 (14 rows)" in done.stdout
    assert "signed by the checkpoint at row 15" in done.stdout
    assert "the live journal continues at row 15" in done.stdout
    as_json = subprocess.run(
        [*command, "--rows", "100", "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert as_json.returncode == 0, as_json.stderr
    (document,) = json.loads(as_json.stdout)
    assert (document["first_seq"], document["last_seq"], document["checkpoint_row"]) == (15, 27, 28)
    refused = subprocess.run(
        [*command, "--rows", "0", "--out", str(out)], capture_output=True, text=True, check=False
    )
    assert refused.returncode == 1
    assert "--rows: give a number of rows, 1 or more" in refused.stderr


def test_the_meters_replayed_across_segments_equal_the_live_state_after_hits(
    tmp_path: Path, key: ControllerKey
) -> None:
    path = tmp_path / "journal.db"
    out = tmp_path / "archive"
    with opened_journal(path) as journal:
        for number in range(3):
            journal.append(wager(f"j{number}-w1", f"j{number}", 1))
            journal.append(settle(f"j{number}-s", f"j{number}", {1: FIVE_ACES}))
            journal.append(HitVerified(f"j{number}-v", AT, f"j{number}-s/1/progressive", "s7"))
            play(journal, number * 10, 3)
            checkpoint(journal, key)
        state = journal.state
    while True:
        try:
            archive(path, out, rows=14, keys=[key.public_key], now=NOW)
        except JournalError:
            break
    assert [record.last_seq for record in _records(path)] == [14, 27, 40]
    report = verify(path, archives=out, keys=[key.public_key])
    assert report.ok, report.problems
    assert report.pools == {POOL: state.pools[POOL].meter_cents}
    assert NOTHING  # the rig's losing hand played in every plain round


def test_what_verify_says_of_the_archived_rows_with_and_without_the_segments(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    """The lines and JSON ``jackpotd verify`` adds for an archived journal (controller/cli)."""
    out = tmp_path / "archive"
    assert archived_lines(verify(checkpointed)) == []
    _archived_twice(checkpointed, key, out)
    checked = verify(checkpointed, archives=out)
    assert archived_lines(checked) == [
        "archived: rows 1 to 27 in 2 segments, verified with the journal"
    ]
    unread = verify(checkpointed)
    assert archived_lines(unread) == [
        (
            "archived: rows 1 to 27 in 2 segments, not read: verified from the state and hash "
            "recorded at row 27 (give --archives DIR to verify them)"
        )
    ]
    assert archived_document(unread) == {
        "archived": {"rows": 27, "segments": 2, "verified": False},
        "notes": [],
    }


def test_jackpotd_verify_with_archives_checks_the_segments_and_fails_on_a_changed_one(
    checkpointed: Path, key: ControllerKey, tmp_path: Path
) -> None:
    """``jackpotd verify --archives DIR`` as an operator runs it (docs/operations.md)."""
    out = tmp_path / "archive"
    first, _ = _archived_twice(checkpointed, key, out)
    command = [sys.executable, "-m", "controller", "verify", "--db", str(checkpointed)]
    done = subprocess.run(
        [*command, "--archives", str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "archived: rows 1 to 27 in 2 segments, verified with the journal" in done.stdout
    as_json = subprocess.run(
        [*command, "--archives", str(out), "--json"], capture_output=True, text=True, check=False
    )
    assert json.loads(as_json.stdout)["archived"] == {"rows": 27, "segments": 2, "verified": True}

    def drop_a_row(lines: list[dict[str, object]]) -> None:
        lines[:] = [line for line in lines if line.get("seq") != 4]

    _rewrite(out / first.segment, drop_a_row)
    failed = subprocess.run(
        [*command, "--archives", str(out)], capture_output=True, text=True, check=False
    )
    assert failed.returncode == 1
    assert f"segment {first.segment}" in failed.stderr
