"""The sequencer's fence on a PostgreSQL journal: one writer per epoch, a takeover grows it.

controller/journal/postgres/fence.py on a real server (tests/support/journal/postgres.py);
docs/ha.md, "The fenced sequencer". Two journals on one database stand for two controller nodes.
What a fenced node's sequencer and process then do is in tests/runtime/test_sequencer_fence.py and
tests/runtime/test_fenced_processes.py.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from support.journal.journal_rig import pool_opened, table_configured, wager

from controller.journal import JournalError
from controller.journal.appending import append_events
from controller.journal.errors import FencedError
from controller.journal.postgres import fence
from controller.journal.postgres import store as postgres_store
from controller.journal.postgres.fence import Fence
from controller.journal.postgres.rows import read_rows
from controller.ledger_journal.postgres import PostgresJournal

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.journal.location import DatabaseUrl


@pytest.fixture
def first(database_url: DatabaseUrl) -> Iterator[PostgresJournal]:
    """Node ``a``'s journal, holding one pool and one table, its lease 30 s."""
    journal = PostgresJournal(database_url, fence=Fence("a", lease_s=30))
    journal.append_many([pool_opened(), table_configured()])
    yield journal
    journal.close()


def _fence_row(database_url: DatabaseUrl) -> tuple[int, str, float]:
    with psycopg.connect(database_url.url) as connection:
        row = connection.execute(
            "SELECT epoch, holder, extract(epoch FROM lease_expires - clock_timestamp())::float8 "
            "FROM sequencer_fence"
        ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1]), float(row[2])


def _event_ids(database_url: DatabaseUrl) -> list[str]:
    with psycopg.connect(database_url.url) as connection:
        return [str(row.values["event_id"]) for row in read_rows(connection)]


def test_the_first_node_to_open_a_journal_takes_epoch_1_and_holds_a_lease(
    first: PostgresJournal, database_url: DatabaseUrl
) -> None:
    epoch, holder, left = _fence_row(database_url)
    assert (first.epoch, epoch, holder) == (1, 1, "a")
    assert 0 < left <= 30
    assert first.lease_renewal_s == 10


def test_a_journal_opened_without_a_fence_writes_as_another_writer_at_epoch_0(
    first: PostgresJournal, database_url: DatabaseUrl
) -> None:
    with PostgresJournal(database_url) as command:
        receipt = command.append(wager("cmd/w1", "r1", 1))
        assert command.epoch == 0
        assert command.lease_renewal_s is None
    assert receipt.applied
    assert first.append(wager("seq/w2", "r1", 2)).applied  # caught up, still the sequencer
    assert _fence_row(database_url)[:2] == (1, "a")


def test_a_takeover_while_the_holders_lease_is_live_is_refused(
    first: PostgresJournal, database_url: DatabaseUrl
) -> None:
    with pytest.raises(FencedError, match=r"node 'a' holds the sequencer \(epoch 1\)"):
        PostgresJournal(database_url, fence=Fence("b", lease_s=1))
    assert _fence_row(database_url)[:2] == (1, "a")
    assert first.append(wager("a/w1", "r1", 1)).applied


def test_a_takeover_after_the_lease_runs_out_grows_the_epoch_and_fences_the_first(
    database_url: DatabaseUrl,
) -> None:
    old = PostgresJournal(database_url, fence=Fence("a", lease_s=1))
    old.append_many([pool_opened(), table_configured(), wager("a/w1", "r1", 1)])
    # Node a stops renewing (paused, partitioned): node b waits out its lease, then takes over.
    new = PostgresJournal(database_url, fence=Fence("b", lease_s=1))
    assert (new.epoch, _fence_row(database_url)[:2]) == (2, (2, "b"))
    head = old.head
    with pytest.raises(FencedError, match=r"node 'b' took the sequencer over \(epoch 2\)"):
        old.append_many([wager("a/w2", "r1", 2), wager("a/w3", "r1", 3)])
    assert old.head == head
    assert new.append(wager("b/w2", "r1", 2)).applied
    with pytest.raises(FencedError):  # and again: it never writes under epoch 1 again
        old.renew()
    assert _event_ids(database_url) == ["open-a", "table-1", "a/w1", "b/w2"]
    assert new.verify().ok
    old.close()
    new.close()


def test_the_same_node_restarting_takes_over_at_once_and_fences_its_old_process(
    first: PostgresJournal, database_url: DatabaseUrl
) -> None:
    restarted = PostgresJournal(database_url, fence=Fence("a", lease_s=30))
    assert restarted.epoch == 2
    with pytest.raises(FencedError):
        first.append(wager("old/w1", "r1", 1))
    assert restarted.append(wager("new/w1", "r1", 1)).applied
    assert "old/w1" not in _event_ids(database_url)
    restarted.close()


def test_a_clean_close_ends_the_lease_so_the_next_node_need_not_wait(
    database_url: DatabaseUrl,
) -> None:
    PostgresJournal(database_url, fence=Fence("a", lease_s=300)).close()
    # Had the lease not ended, 300 s left is beyond b's own lease: b would be refused at once.
    with PostgresJournal(database_url, fence=Fence("b", lease_s=1)) as taken:
        assert taken.epoch == 2


def test_a_renewal_moves_the_lease_on(first: PostgresJournal, database_url: DatabaseUrl) -> None:
    with psycopg.connect(database_url.url, autocommit=True) as admin:
        admin.execute("UPDATE sequencer_fence SET lease_expires = clock_timestamp()")
    first.renew()
    assert _fence_row(database_url)[2] > 25


def test_a_writer_paused_between_its_writes_and_its_commit_loses_its_session_not_the_lock(
    database_url: DatabaseUrl,
) -> None:
    """A node paused inside a transaction would hold the fence row and the journal's lock.

    The server ends its session once it has sat idle in it for a lease, so another node takes
    over; the paused node's ``COMMIT`` then fails and nothing of its batch is in.
    """
    paused = PostgresJournal(database_url, fence=Fence("a", lease_s=1))
    paused.append_many([pool_opened(), table_configured()])
    prepared = paused.prepare([wager("a/w1", "r1", 1)])
    taker: list[PostgresJournal] = []
    opening = threading.Thread(
        target=lambda: taker.append(PostgresJournal(database_url, fence=Fence("b", lease_s=1)))
    )
    opening.start()
    opening.join(timeout=30)
    assert taker, "node b did not take over"
    with pytest.raises(JournalError):
        prepared.commit()
    assert _event_ids(database_url) == ["open-a", "table-1"]
    assert taker[0].epoch == 2
    with pytest.raises(FencedError):
        paused.append(wager("a/w2", "r1", 2))
    taker[0].close()
    paused.close()


def test_a_writer_paused_as_soon_as_it_holds_the_fence_loses_its_session_too(
    database_url: DatabaseUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paused after locking the fence row, before any write, a node must not keep it either."""
    paused = PostgresJournal(database_url, fence=Fence("a", lease_s=1))
    paused.append_many([pool_opened(), table_configured()])
    resume = threading.Event()
    holding = threading.Event()

    def pause_then_append(*arguments: Any, **keywords: Any) -> Any:
        holding.set()
        resume.wait(60)  # the "SIGSTOP": nothing sent to the server until resumed
        return append_events(*arguments, **keywords)

    monkeypatch.setattr(postgres_store, "append_events", pause_then_append)
    failures: list[BaseException] = []

    def prepare() -> None:
        try:
            paused.prepare([wager("a/w1", "r1", 1)]).commit()
        except BaseException as error:  # noqa: BLE001 - what the paused node meets
            failures.append(error)

    writer = threading.Thread(target=prepare)
    writer.start()
    assert holding.wait(30), "node a did not reach its writes"
    try:
        taker = PostgresJournal(database_url, fence=Fence("b", lease_s=1))
    finally:
        resume.set()
        writer.join(30)
    assert taker.epoch == 2
    assert len(failures) == 1
    assert isinstance(failures[0], JournalError), failures
    assert _event_ids(database_url) == ["open-a", "table-1"]
    taker.close()
    paused.close()


class _CutAfterTheUpdate:
    """A node's connection whose link goes quiet once its fence ``UPDATE`` has been answered.

    The server holds the row's lock and waits for a ``COMMIT`` that is held until ``resume``:
    a link stalled (a partition) or a process paused between the two, as the failover chaos
    test's cut database link found (docs/ha.md, "The failover chaos test").
    """

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection
        self.holding = threading.Event()
        self.resume = threading.Event()

    def transaction(self) -> Any:
        return self.connection.transaction()

    def execute(self, query: Any, params: Any = None) -> Any:
        done = self.connection.execute(query, params)
        if str(query).startswith("UPDATE sequencer_fence"):
            self.holding.set()
            self.resume.wait(60)
        return done


def test_a_renewal_cut_off_before_its_commit_does_not_keep_the_fence_from_a_takeover(
    database_url: DatabaseUrl,
) -> None:
    held = PostgresJournal(database_url, fence=Fence("a", lease_s=1))
    held.append_many([pool_opened(), table_configured()])
    cut = _CutAfterTheUpdate(psycopg.connect(database_url.url))
    failures: list[BaseException] = []

    def renew() -> None:
        try:
            fence.renew(cut, Fence("a", lease_s=1), held.epoch, "node a")  # type: ignore[arg-type]
        except BaseException as error:  # noqa: BLE001 - what the cut-off node meets
            failures.append(error)

    renewing = threading.Thread(target=renew)
    renewing.start()
    assert cut.holding.wait(30), "node a did not renew"
    try:
        taker = PostgresJournal(database_url, fence=Fence("b", lease_s=1))  # within two leases
    finally:
        cut.resume.set()
        renewing.join(30)
    assert taker.epoch == 2
    assert len(failures) == 1  # the server ended the cut-off session: its renewal failed
    assert isinstance(failures[0], JournalError), failures
    assert _fence_row(database_url)[:2] == (2, "b")
    taker.close()
    held.close()
    cut.connection.close()


def test_a_journal_of_schema_1_gains_the_fence_when_the_service_opens_it(
    database_url: DatabaseUrl,
) -> None:
    PostgresJournal(database_url).close()
    with psycopg.connect(database_url.url, autocommit=True) as admin:
        admin.execute("DROP TABLE sequencer_fence")
        admin.execute("DROP TABLE archives")  # schema 3's
        admin.execute("DROP TABLE site_messages")  # schema 4's
        admin.execute("ALTER TABLE journal DROP COLUMN provenance")  # schema 5's
        admin.execute("UPDATE journal_schema SET version = 1")
    with PostgresJournal(database_url, fence=Fence("a")) as opened:
        assert opened.epoch == 1
    with psycopg.connect(database_url.url) as connection:
        versions = connection.execute("SELECT version FROM journal_schema ORDER BY 1").fetchall()
    assert versions == [(1,), (2,), (3,), (4,), (5,), (6,)]


def test_a_fence_needs_a_node_and_a_lease() -> None:
    with pytest.raises(ValueError, match="node id"):
        Fence("")
    with pytest.raises(ValueError, match="more than 0 s"):
        Fence("a", lease_s=0)
