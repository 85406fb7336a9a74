"""``jackpotd journal copy``: an SQLite journal moved into an empty PostgreSQL database, and back.

The file is a real one (a site's signed history with a checkpoint and its snapshot, then
more rounds than one batch of the copy); the database is the test server's. The copy must
hold the same rows with the same hashes, the same materialized state and snapshots, verify
(checkpoint signatures under the controller's key), and ``jackpotd verify`` must print the
same head for both. A database that already holds a journal row, or other tables, is refused
and left as it was; so is a file that does not verify or is not a journal, a source that
holds no journal, and a copy onto itself. After the copy, the service's commands run on the
database as on the file, and the database copied back into a new file is the same journal.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from support.journal.journal_rig import rounds
from support.journal.twin_journals import database_fingerprint, played, site_history, write_config

from controller.cli import main
from controller.journal import JournalError, copying
from controller.journal.location import DatabaseUrl
from controller.journal.sqlite.rows import read_rows
from controller.ledger.domain import LEDGER
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

    from controller.security.controller_key import ControllerKey


@pytest.fixture
def copied_file(tmp_path: Path, key: ControllerKey) -> Path:
    """A site's signed history with a checkpoint, then 400 plain rounds (1,200 more rows)."""
    config = write_config(tmp_path)
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        site = site_history(journal, config, key)  # a journal appends as Twins do
        events = [site.sign(event, "sup1") for event in rounds(1, 400)]
        for first in range(0, len(events), 300):
            journal.append_many(events[first : first + 300])
    (tmp_path / "controller.pub").write_text(key.public_key + "\n")
    return path


def _copy(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["journal", "copy", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _verify(location: str, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["verify", "--db", location, "--json", *argv]) == 0
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


def test_a_copy_holds_the_same_rows_hashes_state_and_snapshots_and_verifies_with_the_same_head(
    copied_file: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = str(copied_file.parent / "controller.pub")
    status, out, err = _copy(
        capsys, "--from", str(copied_file), "--to", postgres_url, "--controller-key", key
    )
    assert status == 0, err
    with closing(sqlite3.connect(copied_file)) as raw:
        rows = [row.values for row in read_rows(raw)]
        snapshots = raw.execute("SELECT seq, head_seq, state FROM snapshots").fetchall()
    head = (rows[-1]["seq"], rows[-1]["hash"])
    assert out.splitlines()[:2] == [
        f"copied {len(rows):,} rows from {copied_file} to {postgres_url}",
        f"head: row {head[0]} {head[1]} in both",
    ]
    assert "checkpoints: 1 in both, signatures verified" in out
    with PostgresJournal(DatabaseUrl(postgres_url)) as copied, Journal(copied_file) as original:
        assert copied.head == original.head == head
        assert copied.state.pools == original.state.pools
        assert copied.state.operators == original.state.operators
        assert copied.state.pending == original.state.pending
        assert copied.verification_records() == original.verification_records()
        assert copied.device_highs() == original.device_highs()
        assert copied.payouts_since(0) == original.payouts_since(0)
    with psycopg.connect(postgres_url) as connection:
        stored = connection.execute("SELECT seq, head_seq, state FROM snapshots").fetchall()
        hashes = connection.execute("SELECT encode(hash, 'hex') FROM journal ORDER BY seq")
        assert [digest for (digest,) in hashes] == [row["hash"] for row in rows]
    assert stored == snapshots
    on_file = _verify(str(copied_file), capsys, "--controller-key", key)
    on_database = _verify(postgres_url, capsys, "--controller-key", key)
    assert on_file["head"] == on_database["head"] == {"seq": head[0], "hash": head[1]}
    assert on_file["ok"] is on_database["ok"] is True
    # The service's commands then work on the database as they did on the file.
    for argv in (("meters", "--json"), ("hits", "--kind", "all", "--json"), ("report", "--json")):
        assert main([*argv, "--db", str(copied_file)]) == 0
        file_out = capsys.readouterr().out
        assert main([*argv, "--db", postgres_url]) == 0
        database_out = capsys.readouterr().out
        if argv[0] == "report":  # the copy wrote the rows whose writer the file never recorded
            assert _copied_writers(database_out) == _copied_writers(file_out), argv
        else:
            assert database_out == file_out, argv


def _copied_writers(report: str) -> dict[str, object]:
    """The report, its rows with no recorded writer and those ``journal copy`` wrote as one."""
    document: dict[str, Any] = json.loads(report)
    writers: dict[str, int] = document["provenance"]["writers"]
    writers["copy"] = writers.pop("copy", 0) + writers.pop("unrecorded", 0)
    return document


def test_a_database_copied_back_into_a_file_is_the_same_journal(
    copied_file: Path, postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A migration backed out: the database's journal moved into a new file, verified."""
    key = str(copied_file.parent / "controller.pub")
    assert _copy(capsys, "--from", str(copied_file), "--to", postgres_url)[0] == 0
    back = tmp_path / "back" / "journal.db"
    back.parent.mkdir()
    status, out, err = _copy(
        capsys, "--from", postgres_url, "--to", str(back), "--controller-key", key
    )
    assert status == 0, err
    assert "checkpoints: 1 in both, signatures verified" in out
    with Journal(back) as returned, Journal(copied_file) as original:
        assert returned.head == original.head
        assert returned.state.pools == original.state.pools
        assert returned.verification_records() == original.verification_records()
    on_file, on_copy = _verify(str(copied_file), capsys), _verify(str(back), capsys)
    assert on_file["head"] == on_copy["head"]


def test_copy_json_gives_both_verifications(
    copied_file: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _copy(capsys, "--from", str(copied_file), "--to", postgres_url, "--json")
    assert status == 0, err
    document = json.loads(out)
    assert document["source"]["head"] == document["target"]["head"] == document["head"]
    assert document["rows"] == document["head"]["seq"] == 1_216
    assert document["source"]["ok"] is document["target"]["ok"] is True


def test_a_database_that_holds_a_journal_row_is_refused_and_left_as_it_was(
    copied_file: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with PostgresJournal(DatabaseUrl(postgres_url)) as other:
        assert other.append_many(played("X1", ["2c"] * 7))
    before = database_fingerprint(postgres_url)
    status, out, err = _copy(capsys, "--from", str(copied_file), "--to", postgres_url)
    assert (status, out) == (1, "")
    assert err == (
        f"jackpotd: {postgres_url}: it already holds a journal (row 2): a journal is copied "
        "into an empty one only\n"
    )
    assert database_fingerprint(postgres_url) == before


def test_a_database_of_other_tables_is_refused_and_left_as_it_was(
    copied_file: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("CREATE TABLE chips (colour TEXT)")
    before = database_fingerprint(postgres_url)
    status, _, err = _copy(capsys, "--from", str(copied_file), "--to", postgres_url)
    assert status == 1
    assert err.startswith(f"jackpotd: {postgres_url}: not a journal")
    assert err.count("\n") == 1
    assert database_fingerprint(postgres_url) == before


def test_a_file_that_does_not_verify_is_not_copied(
    copied_file: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with closing(sqlite3.connect(copied_file, isolation_level=None)) as raw:
        raw.execute("UPDATE journal SET reason = 'edited' WHERE seq = 7")
    status, _, err = _copy(capsys, "--from", str(copied_file), "--to", postgres_url)
    assert status == 1
    assert err.startswith(
        f"jackpotd: {copied_file}: the journal does not verify, so it is not copied: row 7"
    )
    assert database_fingerprint(postgres_url) == {}


def test_a_copy_of_no_journal_of_a_file_that_is_not_one_or_onto_itself_is_refused(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _copy(capsys, "--from", postgres_url, "--to", str(tmp_path / "new.db"))
    assert status == 1
    assert err.startswith(f"jackpotd: {postgres_url}: ")  # an empty database holds none
    assert err.count("\n") == 1
    assert not (tmp_path / "new.db").exists()
    status, _, err = _copy(capsys, "--from", postgres_url, "--to", postgres_url)
    assert (status, err) == (
        1, f"jackpotd: {postgres_url}: a journal is copied into another, not onto itself\n"
    )  # fmt: skip
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n" * 100)
    status, _, err = _copy(capsys, "--from", str(notes), "--to", postgres_url)
    assert (status, err) == (
        1,
        f"jackpotd: {notes}: not a jackpotd journal (file is not a database)\n",
    )
    assert database_fingerprint(postgres_url) == {}


def test_each_batch_is_checked_against_the_files_row(
    copied_file: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer slips a row into the database between two batches: the copy's next
    # row is then not the file's, and the copy stops rather than carry on beside it.
    flush = copying._Copy.flush
    calls = 0

    def drifting(self: copying._Copy) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            with PostgresJournal(DatabaseUrl(postgres_url)) as intruder:
                intruder.append_many(played("Z9", ["2c"] * 7))
        flush(self)

    monkeypatch.setattr(copying._Copy, "flush", drifting)
    with pytest.raises(JournalError, match="of the copy is not the file's"):
        copying.copy_journal(copied_file, DatabaseUrl(postgres_url), domain=LEDGER)
