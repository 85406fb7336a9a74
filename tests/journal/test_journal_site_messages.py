"""A property's outbox to central, materialized by the journal, on both backends.

controller/journal/site_messages.py, docs/wide-area.md ("The chain of a property's messages"):
each site message a committed row queued is a row of ``site_messages`` written in that row's
transaction; ``site_messages(after, limit)`` gives them in order, each checked against the row
that queued it; ``jackpotd verify`` compares the table with the rows' effects. The edits are
an intruder's who can write the file or the database: a message deleted, altered, re-chained
or forged (tests/support/journal/site_outbox.py). A real SQLite file and a real PostgreSQL server.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Final

import psycopg
import pytest
from support.journal.journal_rig import AT, POOL, wager
from support.journal.site_outbox import (
    ALTER_MESSAGE_2,
    ALTER_ROW_5,
    SITE,
    Where,
    edit,
    forged_after,
    open_journal,
    play,
    rechained,
    stored,
    verify_at,
)

from controller.journal import JournalError
from controller.security.controller_key import ControllerKey
from controller.wide_events import WideAreaStatusChanged
from controller.widearea.messages import Contribution, canonical, next_message

if TYPE_CHECKING:
    from controller.widearea.messages import SiteMessage


def test_each_queued_message_is_a_row_written_with_the_journal_row_that_queued_it(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    assert stored(property_at) == [
        (message.site_seq, canonical(message).decode(), seq) for seq, message in three_queued
    ]


def test_the_outbox_gives_every_message_in_site_seq_order_equal_to_the_effects(
    property_at: Where,
) -> None:
    with closing(open_journal(property_at)) as journal:
        queued = play(journal)
        assert journal.site_messages(0, 100) == [message for _, message in queued]


def test_the_outbox_pages_after_the_last_acknowledged_site_seq_at_most_limit_at_a_time(
    property_at: Where,
) -> None:
    with closing(open_journal(property_at)) as journal:
        messages = [message for _, message in play(journal)]
        assert journal.site_messages(0, 2) == messages[:2]
        assert journal.site_messages(2, 2) == messages[2:]
        assert journal.site_messages(1, 1) == messages[1:2]
        assert journal.site_messages(3, 100) == []  # all acknowledged: nothing to send
        assert journal.site_messages(0, 0) == []


def test_a_reopened_journal_gives_the_same_outbox_and_passes_its_checks(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    with closing(open_journal(property_at)) as journal:
        assert journal.site_messages(0, 100) == [message for _, message in three_queued]
        assert journal.check_state(ControllerKey.generate()).ok
        report = journal.verify()
        assert report.ok, report.problems


def test_a_resent_event_queues_no_second_message(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    before = stored(property_at)
    with closing(open_journal(property_at)) as journal:
        again = journal.append(wager("w2", "r2", 1))
        assert again.duplicate
        assert len(journal.site_messages(0, 100)) == len(three_queued)
    assert stored(property_at) == before


def test_a_wager_refused_while_the_link_is_closed_queues_nothing(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    with closing(open_journal(property_at)) as journal:
        assert journal.append(WideAreaStatusChanged("close-1", AT, open=False)).applied
        refused = journal.append(wager("w3", "r3", 1))
        assert not refused.applied
        assert len(journal.site_messages(0, 100)) == len(three_queued)


def test_the_table_refuses_a_second_message_under_one_site_seq(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    """A second message numbered 3 would fork the chain central holds, so the key refuses it."""
    seq, message = three_queued[-1]
    forked = canonical(
        next_message(SITE, 3, message.prev, AT, Contribution(POOL, "T1", "r9", 2, 5))
    )
    with pytest.raises((sqlite3.IntegrityError, psycopg.errors.UniqueViolation)):
        edit(
            property_at,
            "INSERT INTO site_messages (site_seq, message, seq) VALUES (?, ?, ?)",
            (3, forked.decode(), seq),
        )
    assert [row[0] for row in stored(property_at)] == [1, 2, 3]


# --- an intruder's edits: each read refuses, verify names it ------------------------------------


EDITS: Final = {
    "altered": (
        ALTER_MESSAGE_2,
        "site message 2: not what journal row 5 queued",
        "site message 2 is not what journal row 5 queued",
    ),
    "last-deleted": (
        "DELETE FROM site_messages WHERE site_seq = 3",
        "site message 3: missing from the outbox (site_messages)",
        "site message 3 is missing",
    ),
    "middle-deleted": (
        "DELETE FROM site_messages WHERE site_seq = 2",
        "site message 2: missing from the outbox (site_messages)",
        "site message 2 is missing",
    ),
}


@pytest.mark.usefixtures("three_queued")
@pytest.mark.parametrize("edited", sorted(EDITS))
def test_an_edited_outbox_fails_verify_and_every_read_refuses_it(
    property_at: Where, edited: str
) -> None:
    statement, problem, refusal = EDITS[edited]
    assert edit(property_at, statement) == 1
    report = verify_at(property_at)
    assert problem in report.problems
    with closing(open_journal(property_at)) as journal, pytest.raises(JournalError, match=refusal):
        journal.site_messages(0, 100)


def test_a_rechained_forgery_fails_verify_and_the_read_refuses_it_before_it_is_signed(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    """Digests recomputed so that the chain holds: the rows that queued them do not agree."""
    statement = "UPDATE site_messages SET message = ? WHERE site_seq = ?"
    for site_seq, text in rechained(three_queued):
        assert edit(property_at, statement, (text, site_seq)) == 1
    report = verify_at(property_at)
    assert "site message 2: not what journal row 5 queued" in report.problems
    assert "site message 3: not what journal row 6 queued" in report.problems
    with closing(open_journal(property_at)) as journal:
        assert journal.site_messages(0, 1) == [three_queued[0][1]]  # before the edit: as queued
        with pytest.raises(JournalError, match="site message 2 is not what journal row 5 queued"):
            journal.site_messages(1, 100)


def test_a_forged_next_message_fails_verify_and_the_read_refuses_it(
    property_at: Where, three_queued: list[tuple[int, SiteMessage]]
) -> None:
    seq = three_queued[-1][0]
    statement = "INSERT INTO site_messages (site_seq, message, seq) VALUES (?, ?, ?)"
    assert edit(property_at, statement, (4, forged_after(three_queued), seq)) == 1
    report = verify_at(property_at)
    assert f"site message 4: the journal queued no such message (row {seq})" in report.problems
    with closing(open_journal(property_at)) as journal:
        with pytest.raises(JournalError, match=f"site message 4 is not what journal row {seq}"):
            journal.site_messages(3, 100)
        assert journal.site_messages(0, 3) == [message for _, message in three_queued]


@pytest.mark.usefixtures("three_queued")
def test_the_start_up_check_leaves_the_outbox_to_its_reads_and_the_journal_goes_on(
    property_at: Where,
) -> None:
    """An edited outbox stops the uplink (each read refuses), not the property's own tables."""
    assert edit(property_at, "DELETE FROM site_messages WHERE site_seq = 3") == 1
    with closing(open_journal(property_at)) as journal:
        assert journal.check_state(ControllerKey.generate()).ok
        with pytest.raises(JournalError, match="site message 3 is missing"):
            journal.site_messages(2, 100)
        assert journal.append(WideAreaStatusChanged("close-1", AT, open=False)).applied


@pytest.mark.usefixtures("three_queued")
def test_a_row_edited_with_its_message_still_fails_the_read(property_at: Where) -> None:
    """The row's effects and the outbox edited alike: the row no longer hashes to its hash."""
    assert edit(property_at, ALTER_ROW_5) == 1
    assert edit(property_at, ALTER_MESSAGE_2) == 1
    with (
        closing(open_journal(property_at)) as journal,
        pytest.raises(JournalError, match="journal row 5, which was edited"),
    ):
        journal.site_messages(0, 100)
    assert not verify_at(property_at).ok
