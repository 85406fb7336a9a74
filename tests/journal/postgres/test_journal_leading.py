"""JournalPort.leading: whether this process still holds the sequencer's fence, by its clock.

``GET /leader`` answers by it (docs/ha.md, "Brokers and followers"). A real PostgreSQL
(tests/support/journal/postgres.py) and a real SQLite file; the PostgreSQL journal's monotonic clock
is a fake one moved by hand, so a process paused past its lease is played without sleeping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import pool_opened, table_configured, wager

from controller.journal.errors import FencedError
from controller.journal.location import DatabaseUrl
from controller.journal.postgres.fence import Fence
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

LEASE_S = 30.0


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        """Now."""
        return self.now


def leads(journal: PostgresJournal) -> bool:
    """``journal.leading``, read afresh: it moves with the clock.

    mypy keeps a property's last narrowing, as though ``assert journal.leading`` settled it.
    """
    return journal.leading


def test_an_sqlite_journal_always_leads(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.db") as journal:
        assert journal.leading


def test_a_node_leads_until_its_lease_runs_out_by_its_own_clock_and_a_commit_renews_it(
    postgres_url: str,
) -> None:
    clock = Clock()
    journal = PostgresJournal(DatabaseUrl(postgres_url), fence=Fence("a", LEASE_S), clock=clock)
    try:
        assert leads(journal)
        journal.append_many([pool_opened(), table_configured()])
        clock.now += LEASE_S - 0.1
        assert leads(journal)
        journal.append(wager("t1/w1", "r1", 1))  # the commit renewed the lease
        clock.now += LEASE_S - 0.1
        assert leads(journal)
        clock.now += 0.2  # paused past the lease: it no longer claims to lead
        assert not leads(journal)
        journal.renew()  # nobody took over meanwhile: it holds the fence again
        assert leads(journal)
    finally:
        journal.close()


def test_a_node_paused_past_its_lease_stops_leading_before_it_finds_it_was_taken_over(
    postgres_url: str,
) -> None:
    url = DatabaseUrl(postgres_url)
    clock = Clock()
    old = PostgresJournal(url, fence=Fence("a", 0.2), clock=clock)
    try:
        old.append_many([pool_opened(), table_configured()])
        clock.now += 0.3  # paused past its lease ...
        with PostgresJournal(url, fence=Fence("b", LEASE_S)) as new:  # ... and taken over
            assert new.leading
            assert new.epoch == old.epoch + 1
            assert not old.leading  # it knows before it writes
            with pytest.raises(FencedError):
                old.append(wager("t1/w1", "r1", 1))
            assert not old.leading
    finally:
        old.close()


def test_a_journal_without_a_fence_leads_as_the_file_does(postgres_url: str) -> None:
    with PostgresJournal(DatabaseUrl(postgres_url)) as journal:
        assert journal.leading
