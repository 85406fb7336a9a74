"""The PostgreSQL journal keeps what the SQLite file keeps, and refuses what the file refuses.

controller/journal/postgres/ on a real server (tests/support/journal/postgres.py); docs/ha.md. The
port's contract runs on both backends in tests/journal/contract/; these are
what only a second backend raises: the same rows and hashes as the file, the checks that
find an edit, a server that would lose a commit, another writer, a commit cut off.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from support.journal.journal_rig import (
    AT,
    POOL,
    checkpoint,
    opened_journal,
    play,
    play_rounds,
    pool_opened,
    snapshot,
    table_configured,
    wager,
)

from controller.journal import JournalError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres.connection import NETWORK_BOUNDS, connect
from controller.journal.postgres.outbox import PostgresOutbox
from controller.journal.postgres.rows import read_rows
from controller.ledger_journal.postgres import PostgresJournal
from controller.ports import OutboxError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.security.controller_key import ControllerKey


@pytest.fixture
def pg_journal(database_url: DatabaseUrl) -> Iterator[PostgresJournal]:
    """A PostgreSQL journal holding one pool and one table."""
    opened = PostgresJournal(database_url)
    for event in (pool_opened(), table_configured()):
        assert opened.append(event).applied
    yield opened
    opened.close()


def _rows(database_url: DatabaseUrl) -> list[dict[str, Any]]:
    with psycopg.connect(database_url.url) as connection:
        return [row.values for row in read_rows(connection)]


def _sql(database_url: DatabaseUrl, statement: str) -> None:
    with psycopg.connect(database_url.url, autocommit=True) as connection:
        connection.execute(statement)


def _edit_pool(database_url: DatabaseUrl, name: str, value: object) -> None:
    """Someone with the database's password sets a value of the pool's stored state."""
    with psycopg.connect(database_url.url, autocommit=True) as connection:
        connection.execute(
            "UPDATE pools SET state = "
            "(state::jsonb || jsonb_build_object(%s::text, %s::jsonb))::text",
            [name, json.dumps(value)],
        )


def test_the_same_events_make_the_same_rows_and_hashes_as_the_sqlite_file(
    tmp_path: Path, pg_journal: PostgresJournal, database_url: DatabaseUrl
) -> None:
    with opened_journal(tmp_path / "journal.db") as file:
        for both in (file, pg_journal):
            play_rounds(both)
            play(both, 1, 40)
        # A checkpoint of either signs the same head and state: the same rows before it.
        assert (file.head, snapshot(file.state)) == (pg_journal.head, snapshot(pg_journal.state))
        assert list(file.rows()) == _rows(database_url)


def test_verify_passes_a_played_journal_with_its_checkpoints_signed(
    pg_journal: PostgresJournal, key: ControllerKey
) -> None:
    play_rounds(pg_journal)
    first = checkpoint(pg_journal, key)
    play(pg_journal, 1, 10)
    checkpoint(pg_journal, key)
    report = pg_journal.verify(keys=[key.public_key])
    assert report.ok, report.problems
    assert [summary.row for summary in report.checkpoints] == [first, report.head[0]]
    assert {summary.signature for summary in report.checkpoints} == {"verified"}
    assert report.head == pg_journal.head
    assert report.pools == {POOL: pg_journal.state.pools[POOL].meter_cents}


def test_verify_finds_a_meter_edited_in_the_database(
    pg_journal: PostgresJournal, database_url: DatabaseUrl
) -> None:
    play_rounds(pg_journal)
    _edit_pool(database_url, "hits_count", 0)
    report = pg_journal.verify()
    assert not report.ok
    assert any("pools/pool-a" in problem for problem in report.problems), report.problems


def test_verify_finds_a_row_edited_or_removed_in_the_database(
    pg_journal: PostgresJournal, database_url: DatabaseUrl
) -> None:
    play_rounds(pg_journal)
    _sql(database_url, "UPDATE journal SET event = replace(event, '100', '900') WHERE seq = 3")
    problems = pg_journal.verify().problems
    assert any(problem.startswith("row 3: ") for problem in problems), problems
    _sql(
        database_url, "DELETE FROM journal WHERE seq = 5"
    )  # no reference holds it (archives remove rows)
    problems = pg_journal.verify().problems
    assert "row 6: expected row 5; rows are missing" in problems


def test_the_start_up_check_refuses_a_meter_edited_in_the_database(
    pg_journal: PostgresJournal, database_url: DatabaseUrl, key: ControllerKey
) -> None:
    play_rounds(pg_journal)
    checkpoint(pg_journal, key)
    play(pg_journal, 1, 3)
    assert pg_journal.check_state(key).ok
    check = pg_journal.check_state(key)
    # From the checkpoint: its own row and the nine after it.
    assert (check.checkpoint is not None, check.replayed) == (True, 10)
    meter = pg_journal.state.pools[POOL].meter
    _edit_pool(database_url, "meter", "250000000")
    with PostgresJournal(database_url) as reopened:
        problems = reopened.check_state(key).problems
    assert problems == [f"pools/{POOL}: meter 250000000 in the table, {meter} by the journal"]


def test_a_server_that_would_acknowledge_a_commit_it_has_not_flushed_is_refused(
    database_url: DatabaseUrl,
) -> None:
    _sql(database_url, f"ALTER DATABASE {database_url.database} SET synchronous_commit = off")
    with pytest.raises(JournalError, match=r"synchronous_commit is off for this database"):
        PostgresJournal(database_url)


def test_a_journal_connection_bounds_its_wait_on_a_network_that_stopped_answering(
    database_url: DatabaseUrl,
) -> None:
    """docs/ha.md: keepalives and ``tcp_user_timeout``, unless the journal URL sets its own."""
    with connect(database_url) as connection:
        parameters = connection.info.get_parameters()
    assert {name: parameters.get(name) for name in NETWORK_BOUNDS} == NETWORK_BOUNDS
    own = DatabaseUrl(f"{database_url.url}?tcp_user_timeout=30000")
    with connect(own) as connection:
        assert connection.info.get_parameters()["tcp_user_timeout"] == "30000"
        assert connection.info.get_parameters()["keepalives_idle"] == "5"


def test_a_database_that_holds_other_tables_is_not_made_a_journal(
    database_url: DatabaseUrl,
) -> None:
    _sql(database_url, "CREATE TABLE customers (name TEXT)")
    with pytest.raises(JournalError, match=r"not a journal: the database holds other tables"):
        PostgresJournal(database_url)


def test_another_writers_rows_are_replayed_and_its_tables_never_trusted(
    pg_journal: PostgresJournal, database_url: DatabaseUrl
) -> None:
    with PostgresJournal(database_url) as other:
        assert other.append(wager("r1-w1", "r1", 1)).seq == 3
    assert pg_journal.append(wager("r1-w2", "r1", 2)).seq == 4  # caught up first
    assert pg_journal.state.pools[POOL].wagers_count == 2
    with PostgresJournal(database_url) as other:
        other.append(wager("r1-w3", "r1", 3))
    _edit_pool(database_url, "wagers_count", 9)
    with pytest.raises(JournalError, match=r"another process wrote the journal, and the stored"):
        pg_journal.append(wager("r1-w4", "r1", 4))
    assert pg_journal.head[0] == 4


def test_a_commit_cut_off_fails_closed_and_the_next_write_finds_what_it_left(
    pg_journal: PostgresJournal, database_url: DatabaseUrl
) -> None:
    pg_journal.append(wager("r1-w1", "r1", 1))
    prepared = pg_journal.prepare([wager("r1-w2", "r1", 2)])
    (pid,) = pg_journal.db.execute("SELECT pg_backend_pid()").fetchone() or (0,)
    _sql(database_url, f"SELECT pg_terminate_backend({pid})")
    with pytest.raises(JournalError, match=r"cannot write the journal"):
        prepared.commit()
    assert pg_journal.head[0] == 3  # nothing adopted, nothing acknowledged
    (receipt,) = pg_journal.append_many([wager("r1-w2", "r1", 2)])  # the device resends
    assert (receipt.seq, receipt.duplicate) == (4, False)
    assert pg_journal.verify().ok


def test_a_sinks_outbox_keeps_its_messages_and_the_hits_it_announced(
    pg_journal: PostgresJournal, database_url: DatabaseUrl
) -> None:
    outbox = pg_journal.outbox("broker-a")
    other = pg_journal.outbox("broker-b")
    try:
        assert outbox.hits_stored_through() == pg_journal.head[0]  # a new sink starts at the end
        play_rounds(pg_journal)
        missed = outbox.missed_payouts(2)
        hit_seq = next(seq for seq, _, payout in missed if payout.from_meter_cents > 0)
        first = outbox.add("t/meters", b"1", qos=1, retain=True, created=AT)
        outbox.add_hit("t/hits", b"hit", qos=1, created=AT, seq=hit_seq)
        other.add("t/meters", b"other", qos=1, retain=False, created=AT)
        assert [(m.topic, m.payload, m.retain) for m in outbox.pending()] == [
            ("t/meters", b"1", True),
            ("t/hits", b"hit", False),
        ]
        assert outbox.hits_stored_through() == hit_seq
        outbox.remove(first)
        assert (len(outbox), len(other)) == (1, 1)
    finally:
        outbox.close()
        other.close()
    gone = DatabaseUrl(database_url.url.rsplit("/", 1)[0] + "/no_such_database")
    with pytest.raises(OutboxError, match=r"cannot open the MQTT outbox"):
        PostgresOutbox(gone, "broker-a")
