"""Each device's highest journaled ``seq``, kept in ``device_seqs`` up to a mark, the rest read.

controller/journal/devices.py; docs/faults.md, "Lost events"; docs/benchmarks.md, "Writes per
event". The table is written every so many rows, not with every commit; whoever reads the
highs (this process, another one, after a restart, after an archive) gets what a table written
with every commit would have held.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import TABLE, opened_journal
from support.journal.legacy_journal import legacy_copy

from controller.events import BetSensed
from controller.journal import devices
from controller.journal.devices import MARK
from controller.journal.sqlite.devices import read_highs
from controller.ledger_journal.sqlite import Journal, archive

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-01-01T00:00:00Z"
NOW = "2026-06-01T00:00:00.000Z"
DEVICE_SEQS_MARKED = 15
"""The schema that writes ``device_seqs`` every so many rows, marked by ``device_seqs_through``."""


def bet(seq: int, device: str = "sensor-1") -> BetSensed:
    return BetSensed(
        f"{TABLE}/{device}/{seq}", AT, TABLE, device, seq, seat=1, spot="progressive", present=True
    )


def stored(path: Path) -> tuple[dict[tuple[str, str], int], str | None]:
    """The table as written, and the mark, read from the file by another connection."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as raw:
        table = {
            (t, d): h for t, d, h in raw.execute("SELECT table_id, device, high FROM device_seqs")
        }
        mark = raw.execute("SELECT value FROM meta WHERE key = ?", [MARK]).fetchone()
    return table, None if mark is None else str(mark[0])


def highs_read_elsewhere(path: Path) -> dict[tuple[str, str], int]:
    """What another process (a command, a benchmark) reads: the table and the rows after it."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as raw:
        return read_highs(raw)


def test_lost_events_device_highs_are_not_written_with_every_commit_yet_read_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(devices, "FLUSH_ROWS", 7)
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:  # rows 1 and 2: a pool and a table
        for seq in (1, 3, 2):
            journal.append(bet(seq))
        journal.append(bet(7, device="sensor-2"))
        want = {(TABLE, "sensor-1"): 3, (TABLE, "sensor-2"): 7}
        assert journal.device_highs() == want
        assert stored(path) == ({}, "0")  # four commits, and not one wrote the table
        assert highs_read_elsewhere(path) == want
    with Journal(path) as reopened:  # after a restart, from the rows after the mark
        assert reopened.device_highs() == want
        reopened.append(bet(4))  # row 7: seven rows past the mark, the table is written
        assert stored(path) == (want | {(TABLE, "sensor-1"): 4}, "7")
        reopened.append(bet(9, device="sensor-2"))
        assert stored(path)[1] == "7"
        assert reopened.device_highs() == {(TABLE, "sensor-1"): 4, (TABLE, "sensor-2"): 9}
    assert highs_read_elsewhere(path) == {(TABLE, "sensor-1"): 4, (TABLE, "sensor-2"): 9}


def test_lost_events_device_highs_of_another_writers_rows_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A supervisor's command appends to the daemon's file: neither loses the other's highs."""
    monkeypatch.setattr(devices, "FLUSH_ROWS", 4)
    path = tmp_path / "journal.db"
    with opened_journal(path) as daemon:
        daemon.append(bet(5))
        with Journal(path) as command:
            # Row 4, four past the mark: the command writes the table, the daemon's row in it.
            command.append(bet(2, device="sensor-2"))
            assert stored(path) == ({(TABLE, "sensor-1"): 5, (TABLE, "sensor-2"): 2}, "4")
        assert daemon.device_highs() == {(TABLE, "sensor-1"): 5, (TABLE, "sensor-2"): 2}
        with Journal(path) as command:
            command.append(bet(3, device="sensor-2"))  # row 5, not written to the table
        # The daemon has not read the command's row yet, and still answers with it.
        assert daemon.device_highs() == {(TABLE, "sensor-1"): 5, (TABLE, "sensor-2"): 3}
        for seq in (6, 7, 8):  # it catches up at row 6, and writes the table at row 8
            daemon.append(bet(seq))
        assert stored(path) == ({(TABLE, "sensor-1"): 8, (TABLE, "sensor-2"): 3}, "8")
        assert daemon.device_highs() == {(TABLE, "sensor-1"): 8, (TABLE, "sensor-2"): 3}


def test_lost_events_device_highs_of_archived_rows_stay_after_the_rows_are_gone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        for seq in range(1, 6):
            journal.append(bet(seq))
        journal.append(bet(1, device="sensor-2"))
    assert stored(path) == ({}, "0")
    archive(path, tmp_path / "archive", rows=7, now=NOW)  # rows 1 to 7; row 8 stays
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("SELECT min(seq) FROM journal").fetchone()[0] == 8
    assert stored(path) == ({(TABLE, "sensor-1"): 5}, "7")
    want = {(TABLE, "sensor-1"): 5, (TABLE, "sensor-2"): 1}
    assert highs_read_elsewhere(path) == want
    with Journal(path) as reopened:
        assert reopened.device_highs() == want


@pytest.mark.parametrize("mark", ["not a number", "-1", "1000000"])
def test_lost_events_an_edited_mark_reads_the_whole_journal_instead(
    tmp_path: Path, mark: str
) -> None:
    """A mark that cannot be right costs a longer read, never a high lower than journaled."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        for seq in (1, 2, 8):
            journal.append(bet(seq))
    with closing(sqlite3.connect(path)) as raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = ?", [mark, MARK])
        raw.commit()
    assert highs_read_elsewhere(path) == {(TABLE, "sensor-1"): 8}
    with Journal(path) as reopened:
        assert reopened.device_highs() == {(TABLE, "sensor-1"): 8}


def test_lost_events_a_journal_of_the_schema_before_keeps_its_highs_up_to_its_last_row(
    tmp_path: Path,
) -> None:
    """Its table was written with every commit: migration 15 marks it complete to its last row."""
    source = tmp_path / "source.db"
    with opened_journal(source) as journal:
        for seq in (1, 4):
            journal.append(bet(seq))
        journal.append(bet(3, device="sensor-2"))
    old = tmp_path / "old.db"
    legacy_copy(source, old, DEVICE_SEQS_MARKED - 1)
    with closing(sqlite3.connect(old)) as raw:  # schema 14 wrote the table with every commit
        raw.execute("INSERT INTO device_seqs VALUES ('T1', 'sensor-1', 4), ('T1', 'sensor-2', 3)")
        raw.commit()
        assert raw.execute("PRAGMA user_version").fetchone()[0] == DEVICE_SEQS_MARKED - 1
    with Journal(old) as migrated:
        assert migrated.device_highs() == {(TABLE, "sensor-1"): 4, (TABLE, "sensor-2"): 3}
        assert migrated.verify().ok
    assert stored(old)[1] == "5"
