"""A standby's journal: open without the fence, follow the leader, take over when its lease ends.

controller/journal/postgres/store.py (``standby=True``, :meth:`take`, :meth:`follow`) on a real
server; docs/ha.md, "A warm standby". Two journals on one database stand for the leader and a
standby node. The service's standby loop is tested in tests/service/test_standby_service.py.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import psycopg
import pytest
from support.journal.journal_rig import pool_opened, table_configured, wager

from controller.journal import JournalError
from controller.journal.errors import FencedError
from controller.journal.postgres.fence import Fence, Held
from controller.journal.postgres.rows import read_rows
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.postgres import verify as verify_database

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.journal.location import DatabaseUrl


@pytest.fixture
def leader(database_url: DatabaseUrl) -> Iterator[PostgresJournal]:
    """Node ``a``, sequencing: one pool, one table, its lease 30 s."""
    journal = PostgresJournal(database_url, fence=Fence("a", lease_s=30))
    journal.append_many([pool_opened(), table_configured()])
    yield journal
    journal.close()


@pytest.fixture
def standby(database_url: DatabaseUrl, leader: PostgresJournal) -> Iterator[PostgresJournal]:
    """Node ``b``, standing by (opened after the leader)."""
    assert leader.epoch == 1
    journal = PostgresJournal(database_url, fence=Fence("b", lease_s=1), standby=True)
    yield journal
    journal.close()


def _rows(database_url: DatabaseUrl) -> int:
    with psycopg.connect(database_url.url) as connection:
        return len(list(read_rows(connection)))


def test_a_standby_opens_without_taking_the_fence_and_writes_nothing(
    standby: PostgresJournal, leader: PostgresJournal, database_url: DatabaseUrl
) -> None:
    assert standby.epoch == 0
    assert not standby.leading
    before = _rows(database_url)
    with pytest.raises(FencedError, match="node 'a' took the sequencer over"):
        standby.append(wager("b/w1", "r1", 1))
    assert _rows(database_url) == before
    assert leader.append(wager("a/w1", "r1", 1)).applied  # the leader never noticed


def test_a_standby_does_not_try_a_live_lease_and_says_who_holds_it(
    standby: PostgresJournal,
) -> None:
    held = standby.take()
    assert isinstance(held, Held)
    assert (held.epoch, held.holder) == (1, "a")
    assert 0 < held.left_s <= 30
    assert standby.epoch == 0


def test_a_standby_follows_what_the_leader_commits_checked_against_the_stored_state(
    standby: PostgresJournal, leader: PostgresJournal
) -> None:
    receipts = leader.append_many([wager(f"a/w{n}", f"r{n}", 1) for n in range(1, 6)])
    assert all(receipt.applied for receipt in receipts)
    assert standby.follow() == 5
    assert standby.head == leader.head
    assert standby.state == leader.state
    assert standby.follow() == 0  # nothing new


def test_a_stored_meter_edited_by_hand_is_found_by_the_standby_following(
    standby: PostgresJournal, leader: PostgresJournal, database_url: DatabaseUrl
) -> None:
    leader.append(wager("a/w1", "r1", 1))
    # Then someone with the database's password raises the meter without a journal row.
    with psycopg.connect(database_url.url) as connection:
        connection.execute(
            "UPDATE pools SET state = jsonb_set(state::jsonb, '{meter}', '\"250000000\"')::text"
        )
    with pytest.raises(JournalError, match="not what its rows give"):
        standby.follow()


def test_a_standby_takes_over_a_released_lease_at_the_next_epoch_caught_up(
    standby: PostgresJournal, leader: PostgresJournal, database_url: DatabaseUrl
) -> None:
    leader.append_many([wager(f"a/w{n}", f"r{n}", 1) for n in range(1, 4)])
    state = leader.state
    leader.close()  # a clean stop ends the lease now
    assert standby.take() == 2
    assert standby.epoch == 2
    assert standby.leading
    assert standby.state == state  # the rows committed since it opened, replayed at the take
    assert standby.append(wager("b/w1", "r9", 1)).applied
    assert verify_database(database_url).ok  # one chain across the two epochs


def test_the_old_leader_writes_nothing_once_a_standby_took_its_expired_lease(
    database_url: DatabaseUrl,
) -> None:
    old = PostgresJournal(database_url, fence=Fence("a", lease_s=0.2))
    old.append_many([pool_opened(), table_configured()])
    new = PostgresJournal(database_url, fence=Fence("b", lease_s=5), standby=True)
    try:
        taken = new.take()
        while isinstance(taken, Held):  # the old leader's 0.2 s lease, read from the row
            assert taken.left_s <= 0.2  # so this wait is bounded
            time.sleep(max(0.0, taken.left_s) + 0.05)
            taken = new.take()
        assert taken == 2
        before = _rows(database_url)
        with pytest.raises(FencedError, match="node 'b' took the sequencer over"):
            old.append(wager("a/w1", "r1", 1))
        assert _rows(database_url) == before
    finally:
        new.close()
        old.close()


def test_each_takeover_says_from_whom_and_why_for_the_service_to_journal(
    database_url: DatabaseUrl,
) -> None:
    """docs/ha.md, "Takeovers in the journal": the first sequencer, a restart, a standby's take."""
    first = PostgresJournal(database_url, fence=Fence("a", lease_s=30))
    took = first.took_over
    assert took is not None
    assert (took.event_id, took.node, took.epoch, took.previous_node) == ("takeover-1", "a", 1, "")
    assert took.why == "the journal's first sequencer"
    # Node a's process restarting while its lease lives: the old one is fenced, not waited for.
    again = PostgresJournal(database_url, fence=Fence("a", lease_s=30))
    took = again.took_over
    assert took is not None
    assert (took.epoch, took.previous_node, took.previous_epoch) == (2, "a", 1)
    assert took.lease_left_ms > 0
    assert took.why == "node 'a' restarting (its epoch 1 fenced)"
    standby = PostgresJournal(database_url, fence=Fence("b", lease_s=5), standby=True)
    try:
        taken = standby.took_over
        assert taken is None  # nothing taken yet
        again.close()  # a clean stop ends the lease now
        assert standby.take() == 3
        took = standby.took_over
        assert took is not None
        assert (took.node, took.previous_node, took.previous_epoch) == ("b", "a", 2)
        assert took.lease_left_ms <= 0
        assert took.why.startswith("node 'a''s lease (epoch 2) ran out")
        assert standby.append(took).applied  # the ledger takes it as a no-op
        assert standby.state == again.state
    finally:
        standby.close()
        first.close()
