"""Commands that read the journal never write it, nor any file they are pointed at.

``meters``, ``hits``, ``report``, ``verify``, ``operator list``, ``manifest check`` and ``anchor
save`` (which writes its anchors file, never the journal) open the journal read only
(controller/journal/readonly.py): after each, the journal's bytes, size and modification time
are what they were, and so is its WAL while the service holds it open. An SQLite file that is
not a journal is refused in one line and left byte for byte as it was: a command used to
migrate it, adding the journal's tables to somebody's database. A journal left at an older
schema is not migrated by a reader either. Without ``--db``, the journal is the one the
configuration names (``--config FILE``, else /etc/jackpotd/jackpotd.toml when it exists).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
import sqlite_utils
from support.cli.cli_runs import run
from support.deploy.software_rig import write_config
from support.journal.journal_rig import opened_journal, play_rounds, wager

from controller.cli import common
from controller.journal.sqlite.readonly import LATEST
from controller.journal.sqlite.schema import migrate
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path


def fingerprint(path: Path) -> tuple[str, int, int] | None:
    """The file's sha256, size and modification time, or None if there is no such file."""
    if not path.exists():
        return None
    status = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), status.st_size, status.st_mtime_ns


def read_only_commands(config: Path, anchors: Path) -> list[tuple[str, ...]]:
    return [
        ("meters",),
        ("meters", "--json"),
        ("hits",),
        ("hits", "--json"),
        ("hits", "--pending"),
        ("report",),
        ("report", "--json"),
        ("verify",),
        ("operator", "list"),
        ("manifest", "check", "--config", str(config)),
        ("anchor", "save", "--to", str(anchors)),
    ]


@pytest.fixture
def unrelated(tmp_path: Path) -> Path:
    """Somebody's SQLite database, in the WAL mode a journal uses too."""
    path = tmp_path / "inventory.db"
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("CREATE TABLE chips (colour TEXT, cents INTEGER)")
        connection.execute("INSERT INTO chips VALUES ('red', 500), ('green', 2500)")
    return path


def test_an_sqlite_file_that_is_not_a_journal_is_refused_and_left_unchanged(
    unrelated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path)
    before = fingerprint(unrelated)
    for argv in read_only_commands(config, tmp_path / "anchors.jsonl"):
        status, out, err = run(capsys, *argv, "--db", str(unrelated))
        assert (status, out, err) == (1, "", f"jackpotd: {unrelated}: not a jackpotd journal\n"), (
            argv
        )
        assert fingerprint(unrelated) == before, argv
    with closing(sqlite3.connect(unrelated)) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("chips",)]
    assert not (tmp_path / "anchors.jsonl").exists()


def test_a_file_that_is_not_sqlite_at_all_is_not_a_journal_either(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "notes.txt"
    garbage.write_text("pit boss notes, not a database\n" * 200)
    before = fingerprint(garbage)
    for argv in (("meters",), ("verify",), ("apply", "-")):
        status, _, err = run(capsys, *argv, "--db", str(garbage))
        assert (status, err) == (
            1,
            f"jackpotd: {garbage}: not a jackpotd journal (file is not a database)\n",
        ), argv
    assert fingerprint(garbage) == before


def test_a_command_that_writes_refuses_an_sqlite_file_that_is_not_a_journal(
    unrelated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    feed = tmp_path / "events.jsonl"
    feed.write_text("")
    before = fingerprint(unrelated)
    status, _, err = run(capsys, "apply", str(feed), "--db", str(unrelated))
    assert (status, err) == (1, f"jackpotd: {unrelated}: not a jackpotd journal\n")
    assert fingerprint(unrelated) == before


def test_a_closed_journal_is_unchanged_by_every_read_only_command(
    played: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path)
    wal = played.with_name(played.name + "-wal")
    before = fingerprint(played)
    for argv in read_only_commands(config, tmp_path / "anchors.jsonl"):
        status, _, err = run(capsys, *argv, "--db", str(played))
        assert status in {0, 1}, (argv, err)  # manifest check: nothing approved in this journal
        assert "Traceback" not in err
        assert fingerprint(played) == before, argv
        # Read immutable: no -wal nor -shm beside it (controller/journal/sqlite/read_only_file.py).
        assert not wal.exists(), argv
        assert not played.with_name(played.name + "-shm").exists(), argv


def test_a_journal_the_service_holds_open_is_unchanged_and_so_is_its_wal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path)
    path = tmp_path / "live.db"
    with opened_journal(path) as writer:
        play_rounds(writer)
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size > 0  # committed rows not yet checkpointed into the file
        before, wal_before = fingerprint(path), fingerprint(wal)
        for argv in read_only_commands(config, tmp_path / "anchors.jsonl"):
            status, _, err = run(capsys, *argv, "--db", str(path))
            assert status in {0, 1}, (argv, err)
            assert (fingerprint(path), fingerprint(wal)) == (before, wal_before), argv
        status, out, _ = run(capsys, "meters", "--json", "--db", str(path))
        assert json.loads(out)["pools"][0]["hits"] == writer.state.pools["pool-a"].hits_count


def test_a_reader_never_migrates_a_journal_of_an_older_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        migrate(sqlite_utils.Database(connection), target=5)
    before = fingerprint(path)
    status, _, err = run(capsys, "meters", "--db", str(path))
    assert status == 1
    assert err == (
        f"jackpotd: {path}: the journal is at schema version 5, this controller reads {LATEST}; "
        "the service brings it up to date when it starts\n"
    )
    assert fingerprint(path) == before


def test_without_db_the_journal_is_the_one_the_configuration_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JACKPOTD_DB", raising=False)
    config = write_config(tmp_path)  # its journal: journal.db beside it
    with opened_journal(tmp_path / "journal.db") as journal:
        play_rounds(journal)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status, out, _ = run(capsys, "meters", "--json", "--config", str(config))
    assert status == 0
    assert [pool["pool"] for pool in json.loads(out)["pools"]] == ["pool-a"]
    # The installed configuration, when there is one, names the journal of every command.
    monkeypatch.setattr(common, "INSTALLED_CONFIG", config)
    status, out, _ = run(capsys, "meters", "--json")
    assert status == 0
    assert [pool["pool"] for pool in json.loads(out)["pools"]] == ["pool-a"]
    monkeypatch.setattr(common, "INSTALLED_CONFIG", tmp_path / "none.toml")
    status, _, err = run(capsys, "meters")
    assert (status, err) == (1, "jackpotd: var/journal.db: no such journal\n")
    assert list(elsewhere.iterdir()) == []


def test_a_journal_opened_by_a_reader_still_takes_the_writers_appends(
    played: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "verify", "--db", str(played))[0] == 0
    with Journal(played) as journal:
        rows = journal.head[0]
        play = journal.append(wager("after-readers", "r9", 1))
    assert play.applied
    assert play.seq == rows + 1
    assert run(capsys, "verify", "--db", str(played))[0] == 0
