"""Archiving a PostgreSQL journal: the file's segments, the file's rules, the file's checks.

docs/ha.md, "Archives on PostgreSQL"; docs/journal.md, "Archives". One history is journaled,
event for event, into an SQLite file and a database of the test's own server
(tests/support/journal/twin_journals.py, tests/support/journal/postgres.py); both are archived and
must give the same segment files byte for byte, and verify the same with and without the segments.
Tampering is done as someone with the database's password or the archive folder would: a
segment rewritten, an archive record deleted. The crash is a real SIGKILL of ``jackpotd
archive`` between its segment and its record, and the race is with a real fenced writer in a
process of its own.
"""

from __future__ import annotations

import gzip
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import psycopg
import pytest
from support.journal.journal_rig import (
    AT,
    FIVE_ACES,
    pool_opened,
    rounds,
    settle,
    table_configured,
    wager,
)
from support.journal.twin_journals import Twins

from controller.events import HitVerified
from controller.journal import JournalError
from controller.journal.checkpoints import seal
from controller.journal.location import DatabaseUrl
from controller.journal.postgres.archive_records import archive_records
from controller.journal.postgres.rows import read_rows
from controller.journal.segments import SegmentReader
from controller.journal.sqlite.rows import read_rows as file_rows
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.postgres import archive as archive_database
from controller.ledger_journal.postgres import verify as verify_database
from controller.ledger_journal.sqlite import Journal, archive, verify
from controller.security.controller_key import write_key

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.row_checks import VerifyReport
    from controller.security.controller_key import ControllerKey

NOW: Final = "2026-12-01T00:00:00.000Z"
ROOT: Final = Path(__file__).resolve().parents[3]
WAIT_S: Final = 60.0
"""The longest any step of a test waits for a process or the server."""


def _checkpoint(twins: Twins, key: ControllerKey) -> None:
    sealed = seal(key, "c1", twins.state, twins.head, AT, domain=twins.domain)
    twins.append_many([sealed.event], snapshot=sealed)


@pytest.fixture
def twins(tmp_path: Path, postgres_url: str, key: ControllerKey) -> tuple[Path, DatabaseUrl]:
    """One signed history in a file and a database; a jackpot pending across the first cut.

    Rows 1-2 the pool and table, 3-4 a five-aces hit left pending, then rounds of three rows, a
    checkpoint covering row 16, more rounds, a checkpoint covering row 29, the verification of
    the hit, and more rounds.
    """
    path = tmp_path / "journal.db"
    pair = Twins.open(path, postgres_url)
    try:
        pair.append_many([pool_opened(), table_configured()])
        pair.append(wager("h-w1", "h", 1))
        pair.append(settle("h-settle", "h", {1: FIVE_ACES}))
        pair.append_many(rounds(0, 4))
        _checkpoint(pair, key)
        pair.append_many(rounds(4, 4))
        _checkpoint(pair, key)
        pair.append(HitVerified("h-verify", AT, "h-settle/1/progressive", "supervisor-7"))
        pair.append_many(rounds(8, 3))
    finally:
        pair.close()
    return path, DatabaseUrl(postgres_url)


def _database_rows(url: DatabaseUrl) -> list[dict[str, Any]]:
    with psycopg.connect(url.url) as connection:
        return [row.values for row in read_rows(connection)]


def _file_rows(path: Path) -> list[dict[str, Any]]:
    import sqlite3  # noqa: PLC0415 - the file read as a reader would

    with sqlite3.connect(path) as connection:
        return [row.values for row in file_rows(connection)]


def _records(url: DatabaseUrl) -> list[ArchiveRecord]:
    with psycopg.connect(url.url) as connection:
        return archive_records(connection)


def _sql(url: DatabaseUrl, statement: str, *params: object) -> None:
    with psycopg.connect(url.url, autocommit=True) as connection:
        connection.execute(statement, list(params))


def _sealed(record: ArchiveRecord) -> tuple[object, ...]:
    """What a record says of its segment and cut; not when it was made."""
    return (record.segment, record.first_seq, record.last_seq, record.prev_hash,
            record.last_hash, record.rows, record.sha256, record.checkpoint_seq,
            record.state)  # fmt: skip


def _rewrite(segment: Path, change: Any) -> None:
    """Decompress a segment, let ``change`` edit its lines (JSON documents), compress it again."""
    with gzip.open(segment, "rb") as file:
        lines = [json.loads(line) for line in file]
    change(lines)
    with gzip.open(segment, "wb") as file:
        file.writelines(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def _same_reports(on_file: VerifyReport, on_database: VerifyReport) -> None:
    assert on_file.ok, on_file.problems
    assert on_database.ok, on_database.problems
    assert (on_database.rows, on_database.head, on_database.pools) == (
        on_file.rows, on_file.head, on_file.pools,
    )  # fmt: skip
    assert (on_database.archived, on_database.segments, on_database.segments_checked) == (
        on_file.archived, on_file.segments, on_file.segments_checked,
    )  # fmt: skip
    assert on_database.checkpoints == on_file.checkpoints


def test_the_file_and_the_database_of_one_history_archive_to_the_same_segments_byte_for_byte(
    twins: tuple[Path, DatabaseUrl], key: ControllerKey, tmp_path: Path
) -> None:
    path, url = twins
    keys = [key.public_key]
    rows = _database_rows(url)
    assert rows == _file_rows(path)
    out_file, out_database = tmp_path / "file-archive", tmp_path / "database-archive"
    written_file = archive(path, out_file, rows=20, keys=keys, now=NOW)
    written_file += archive(path, out_file, rows=1000, keys=keys, now=NOW)
    written = archive_database(url, out_database, rows=20, keys=keys, now=NOW)
    written += archive_database(url, out_database, rows=1000, keys=keys, now=NOW)

    # Cut where the checkpoints are, the pending hit carried over the first cut.
    assert [(r.first_seq, r.last_seq, r.checkpoint_seq) for r in written] == [
        (1, 16, 17),
        (17, 29, 30),
    ]
    assert [_sealed(record) for record in written] == [_sealed(r) for r in written_file]
    assert [_sealed(record) for record in _records(url)] == [_sealed(r) for r in written]
    for record in written:
        assert (out_database / record.segment).read_bytes() == (
            out_file / record.segment
        ).read_bytes()
    # The archived rows are out of the database, the live ones as they were, chain included.
    assert _database_rows(url) == rows[29:] == _file_rows(path)
    with psycopg.connect(url.url) as connection:
        left = connection.execute(
            "SELECT (SELECT count(*) FROM journal WHERE seq <= 29), "
            "(SELECT count(*) FROM snapshots WHERE seq <= 29), "
            "(SELECT count(*) FROM payouts WHERE seq <= 29)"
        ).fetchone()
    assert left == (0, 0, 1)  # the hit, pending at both cuts (verified at row 31), stays live

    _same_reports(
        verify(path, archives=out_file, keys=keys),
        verify_database(url, archives=out_database, keys=keys),
    )
    report = verify_database(url, archives=out_database, keys=keys)
    assert (report.rows, report.archived, report.segments_checked) == (len(rows), 29, True)
    assert [summary.signature for summary in report.checkpoints] == ["verified", "verified"]
    _same_reports(verify(path, keys=keys), verify_database(url, keys=keys))
    assert verify_database(url, keys=keys).rows == len(rows) - 29


def test_the_start_up_check_and_the_writer_go_on_from_the_cut(
    twins: tuple[Path, DatabaseUrl], key: ControllerKey, tmp_path: Path
) -> None:
    path, url = twins
    out = tmp_path / "archive"
    archive_database(url, out, rows=20, now=NOW)  # the hit pending at the cut
    with psycopg.connect(url.url) as connection:
        kept = connection.execute("SELECT payout_id, status FROM payouts").fetchall()
    assert ("h-settle/1/progressive", "paid") in kept  # verified since: kept, as in the file
    with PostgresJournal(url) as journal:
        assert journal.check_state(key).ok
        journal.append_many(rounds(20, 2))
        sealed = seal(key, "c1", journal.state, journal.head, AT, domain=journal.domain)
        journal.append_many([sealed.event], snapshot=sealed)
        assert journal.check_state(key).ok
    assert verify_database(url, keys=[key.public_key]).ok
    report = verify_database(url, archives=out, keys=[key.public_key])
    assert report.ok, report.problems
    archive(path, tmp_path / "file-archive", rows=20, now=NOW)
    with Journal(path) as journal:  # the file, archived alike, checks the same way
        assert journal.check_state(key).ok


def test_an_edited_segment_is_caught_by_verify_on_the_database(
    twins: tuple[Path, DatabaseUrl], key: ControllerKey, tmp_path: Path
) -> None:
    _, url = twins
    out = tmp_path / "archive"
    (first,) = archive_database(url, out, rows=1000, keys=[key.public_key], now=NOW)

    def raise_a_wager(lines: list[dict[str, object]]) -> None:
        row = next(line for line in lines if line.get("seq") == 5)
        row["event"] = str(row["event"]).replace('"amount_cents":100', '"amount_cents":500')

    _rewrite(out / first.segment, raise_a_wager)
    report = verify_database(url, archives=out, keys=[key.public_key])
    assert not report.ok
    assert (
        f"segment {first.segment}: its SHA-256 is not the one recorded when it was archived: "
        "the file was changed or is another segment"
    ) in report.problems
    assert "row 5: the row's contents do not match its hash" in report.problems
    (out / first.segment).unlink()
    missing = verify_database(url, archives=out)
    assert missing.problems == [
        f"segment {first.segment} (rows 1 to 29) is missing from {out}: those rows are not verified"
    ]


def test_a_deleted_archive_record_is_caught_by_verify_and_refused_at_start(
    twins: tuple[Path, DatabaseUrl], key: ControllerKey, tmp_path: Path
) -> None:
    _, url = twins
    out = tmp_path / "archive"
    first, second = archive_database(
        url, out, rows=20, keys=[key.public_key], now=NOW
    ) + archive_database(url, out, rows=1000, keys=[key.public_key], now=NOW)
    assert verify_database(url, archives=out, keys=[key.public_key]).ok
    # The first record gone: the segments read from the second one, which is not row 1.
    _sql(url, "DELETE FROM archives WHERE segment = %s", first.segment)
    report = verify_database(url, archives=out)
    assert "row 17: expected row 1; rows are missing" in report.problems
    assert "row 17: the chain is broken (previous hash differs)" in report.problems
    # The last record gone too: the live rows chain to nothing the database records.
    _sql(url, "DELETE FROM archives WHERE segment = %s", second.segment)
    for found in (verify_database(url), verify_database(url, archives=out)):
        assert "row 30: expected row 1; rows are missing" in found.problems
        assert "row 30: the row's contents do not match its hash" in found.problems
    with PostgresJournal(url) as journal:
        assert not journal.check_state(key).ok


def test_an_archive_that_cannot_be_recorded_leaves_the_database_as_it_was_and_runs_again(
    twins: tuple[Path, DatabaseUrl], key: ControllerKey, tmp_path: Path
) -> None:
    _, url = twins
    out = tmp_path / "archive"
    rows = _database_rows(url)
    _sql(
        url,
        "CREATE FUNCTION no_archive() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'disk full (simulated)'; END $$",
    )
    _sql(url, "CREATE TRIGGER no_archive BEFORE DELETE ON journal EXECUTE FUNCTION no_archive()")
    with pytest.raises(JournalError, match=r"could not be recorded .*disk full.*left as it was"):
        archive_database(url, out, rows=20, keys=[key.public_key], now=NOW)
    assert (_records(url), _database_rows(url)) == ([], rows)
    assert len(list(out.iterdir())) == 1  # the segment written, never recorded
    _sql(url, "DROP TRIGGER no_archive ON journal")
    (record,) = archive_database(url, out, rows=20, keys=[key.public_key], now=NOW)
    assert sorted(path.name for path in out.iterdir()) == [record.segment]
    assert verify_database(url, archives=out, keys=[key.public_key]).ok


def test_a_journal_that_does_not_verify_is_not_archived(
    twins: tuple[Path, DatabaseUrl], tmp_path: Path
) -> None:
    _, url = twins
    _sql(url, "UPDATE journal SET event = replace(event, '100', '900') WHERE seq = 5")
    out = tmp_path / "archive"
    with pytest.raises(JournalError, match="the journal does not verify"):
        archive_database(url, out, rows=20, now=NOW)
    assert not out.exists()
    assert _records(url) == []


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env


def _start(*argv: str) -> subprocess.Popen[str]:
    """``python -m ARGV`` from the repository, its output piped (tests/ on the path)."""
    return subprocess.Popen(
        [sys.executable, "-m", *argv],
        cwd=ROOT,
        env=_child_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _waiting_on_the_lock(url: DatabaseUrl, segment_folder: Path) -> bool:
    """Whether ``jackpotd archive`` has written its segment and waits for the journal's lock."""
    if not any(segment_folder.glob("journal-*.jsonl.gz")):
        return False
    with psycopg.connect(url.url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'jackpotd' AND wait_event_type = 'Lock' "
            "AND query LIKE 'LOCK TABLE journal%%'"
        ).fetchone()
    return bool(found and found[0])


def _until(condition: Any, what: str) -> None:
    """Wait for ``condition()``, :data:`WAIT_S` at most."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT_S:g} s for {what}")
        time.sleep(0.05)


def test_a_crash_between_the_segment_and_its_record_leaves_a_journal_that_verifies(
    twins: tuple[Path, DatabaseUrl], key: ControllerKey, tmp_path: Path
) -> None:
    """SIGKILL of ``jackpotd archive`` once its segment is synced, before its record commits."""
    _, url = twins
    out = tmp_path / "archive"
    rows = _database_rows(url)
    command = ("controller", "archive", "--db", url.url, "--rows", "20", "--out", str(out))
    with psycopg.connect(url.url) as holder:
        # A group commit in progress, as the sequencer holds it: the archive waits for it
        # after writing its segment.
        holder.execute("LOCK TABLE journal IN EXCLUSIVE MODE")
        child = _start(*command)
        try:
            _until(lambda: _waiting_on_the_lock(url, out), "the archive to wait on the lock")
        finally:
            child.send_signal(signal.SIGKILL)
            child.communicate(timeout=WAIT_S)
        holder.rollback()
    assert child.returncode == -signal.SIGKILL
    (segment,) = out.glob("journal-*.jsonl.gz")
    assert (_records(url), _database_rows(url)) == ([], rows)
    assert verify_database(url, keys=[key.public_key]).ok
    with PostgresJournal(url) as journal:
        assert journal.check_state(key).ok
    reader = SegmentReader(segment)
    assert [row["seq"] for row in reader.rows()] == list(range(1, 17))
    # Run again: the same segment, kept, now recorded; the rows removed.
    again = _start(*command)
    said, errors = again.communicate(timeout=WAIT_S)
    assert again.returncode == 0, errors
    assert "archived rows 1 to 16 (16 rows)" in said
    assert list(out.glob("journal-*.jsonl.gz")) == [segment]
    assert [record.segment for record in _records(url)] == [segment.name]
    report = verify_database(url, archives=out, keys=[key.public_key])
    assert report.ok, report.problems


def _lines(child: subprocess.Popen[str]) -> Iterator[int]:
    """The heads a writer prints, each waited for :data:`WAIT_S` at most; ends at its exit."""
    assert child.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        while True:
            if not selector.select(WAIT_S):
                pytest.fail(f"the writer printed nothing for {WAIT_S:g} s")
            line = child.stdout.readline()
            if not line:
                return
            yield int(line)


def test_archiving_while_a_fenced_writer_appends_loses_nothing_and_verifies(
    postgres_url: str, key: ControllerKey, tmp_path: Path
) -> None:
    """The archive's record takes the writers' lock: no group commit is lost or fenced out."""
    url = DatabaseUrl(postgres_url)
    out = tmp_path / "archive"
    key_file = tmp_path / "controller.key"
    write_key(key_file, key)
    batches = 600
    child = _start("support.journal.postgres_appender", url.url, str(key_file), str(batches))
    archived: list[ArchiveRecord] = []
    while_writing = 0
    try:
        for count, _head in enumerate(_lines(child), start=1):
            if count % 50:
                continue
            try:  # every fifty batches: cut at the checkpoints it has written so far
                archived += archive_database(url, out, rows=1000, keys=[key.public_key], now=NOW)
            except JournalError as error:  # no checkpoint, or no row, since the last cut
                # A busy machine's writer may not have written past the last cut yet.
                said = str(error)
                assert "no checkpoint covers" in said or "no row to archive" in said
                continue
            while_writing += child.poll() is None
        _, errors = child.communicate(timeout=WAIT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=WAIT_S)
    assert child.returncode == 0, errors
    assert while_writing >= 1, "no archive ran while the writer was writing"
    report = verify_database(url, archives=out, keys=[key.public_key])
    assert report.ok, report.problems
    assert report.segments == len(archived)
    # Every batch once: 2 configuration rows, 6 rows a batch, a checkpoint every fifth batch.
    total = 2 + 6 * batches + batches // 5
    assert report.rows == total
    ids = [str(row["event_id"]) for row in _database_rows(url)]
    for record in _records(url):
        ids += [str(row["event_id"]) for row in SegmentReader(out / record.segment).rows()]
    assert len(ids) == len(set(ids)) == total
    with PostgresJournal(url) as journal:
        assert journal.check_state(key).ok
