"""Every file the service and the command line write is 0640, whatever the process umask.

docs/operations.md, "Files and their modes". Each writer runs for real under umask 000 (which
would leave a file world-writable) and 077 (which would hide it from the auditors' group): a
new journal with its -wal and -shm through :class:`~controller.journal.sqlite.Journal`, archive
segments (``jackpotd archive`` as a child process, which inherits the umask), anchors files,
a table agent's outbox and state file, and the analyzer's chart. Keys (0600) are in
tests/security/test_key_file_modes.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.file_modes import UMASKS, mode_of, process_umask
from support.journal.journal_rig import opened_journal, play, play_rounds

from controller.files import RECORD, append_file, create_file, prepare_database
from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from controller.ledger_journal.sqlite import Journal, archive, verify
from drivers.agent.state import FaultLog, TableStateView

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[3]
NOW = "2026-12-01T00:00:00.000Z"
WAIT_S = 60.0


pytestmark = pytest.mark.usefixtures("journal_umask")


@pytest.fixture(params=UMASKS, ids=lambda mask: f"umask-{mask:03o}")
def journal_umask(request: pytest.FixtureRequest) -> Iterator[int]:
    with process_umask(request.param) as mask:
        yield mask


def _journal(tmp_path: Path) -> Path:
    """A journal of a few rounds, made under the test's umask."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        play_rounds(journal)
    return path


def test_a_new_journal_and_its_wal_and_shm_are_0640(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        play(journal, 0, 2)  # the WAL written, the shared memory in use
        files = [path, path.with_name("journal.db-wal"), path.with_name("journal.db-shm")]
        assert {file.name: mode_of(file) for file in files} == {file.name: RECORD for file in files}
    assert mode_of(path) == RECORD


def test_a_journal_made_by_the_rig_verifies_and_is_0640(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    assert verify(path).ok
    assert mode_of(path) == RECORD


def test_archive_segments_are_0640(tmp_path: Path) -> None:
    path, out = _journal(tmp_path), tmp_path / "archive"
    (record,) = archive(path, out, rows=4, now=NOW)
    assert [(file.name, mode_of(file)) for file in out.iterdir()] == [(record.segment, RECORD)]
    assert verify(path, archives=out).ok


def test_a_stale_partial_segment_left_open_to_all_becomes_a_0640_segment(tmp_path: Path) -> None:
    """A partial file an interrupted archive left (at any mode) is rewritten at 0640."""
    path, out = _journal(tmp_path), tmp_path / "archive"
    out.mkdir()
    stale = out / ".journal-000000000001.partial"
    stale.write_bytes(b"half a segment")
    stale.chmod(0o666)
    (record,) = archive(path, out, rows=4, now=NOW)
    assert mode_of(out / record.segment) == RECORD
    assert not stale.exists()


def test_jackpotd_archive_writes_0640_segments_under_the_callers_umask(tmp_path: Path) -> None:
    path, out = _journal(tmp_path), tmp_path / "archive"
    done = subprocess.run(
        [sys.executable, "-m", "controller", "archive", "--db", str(path), "--rows", "4",
         "--out", str(out)],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (segment,) = out.iterdir()
    assert mode_of(segment) == RECORD


def test_a_new_anchors_file_is_0640_and_one_appended_to_keeps_its_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, anchors = _journal(tmp_path), tmp_path / "pit-1.anchors"
    status, _, err = run(capsys, "anchor", "save", "--db", str(path), "--to", str(anchors))
    assert status == 0, err
    assert mode_of(anchors) == RECORD
    anchors.chmod(0o600)  # the operator's choice for the file it keeps
    status, _, err = run(capsys, "anchor", "save", "--db", str(path), "--to", str(anchors))
    assert status == 0, err
    assert mode_of(anchors) == 0o600
    assert len(anchors.read_text().splitlines()) == 2


def test_a_table_agents_outbox_and_its_state_file_are_0640(tmp_path: Path) -> None:
    path, state = tmp_path / "agent.db", tmp_path / "table.state"
    outbox = AgentOutboxStore(path, "t1")
    try:
        view = TableStateView("t1", FaultLog(outbox), state)
        view.show(table_open=True, reason="the controller acknowledged")
        files = [path, path.with_name("agent.db-wal"), path.with_name("agent.db-shm"), state]
        assert {file.name: mode_of(file) for file in files} == {file.name: RECORD for file in files}
    finally:
        outbox.close()


def test_the_analyzers_chart_is_0640(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "return.png"
    status, _, err = run(capsys, "analyze", "progressive-1", "--plot", str(target), "--quiet")
    assert status == 0, err
    assert target.read_bytes().startswith(b"\x89PNG")
    assert mode_of(target) == RECORD


def test_a_file_written_whole_over_one_open_to_all_ends_at_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "report"
    path.write_bytes(b"old")
    path.chmod(0o666)
    with create_file(path, RECORD) as file:
        file.write(b"new")
    assert (path.read_bytes(), mode_of(path)) == (b"new", RECORD)
    with pytest.raises(FileExistsError):
        create_file(path, RECORD, exclusive=True)
    with append_file(tmp_path / "log", RECORD) as file:
        file.write(b"one\n")
    assert mode_of(tmp_path / "log") == RECORD


def test_an_sqlite_file_that_exists_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    path.write_bytes(b"")
    path.chmod(0o600)
    prepare_database(path)
    assert mode_of(path) == 0o600
