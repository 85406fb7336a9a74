"""The in-memory journal's own rules, beside the contract it passes with the other backends.

controller/journal/memory/; docs/journal.md, "Backends". ``memory://NAME`` names a journal of
this process: opened twice it is one journal (a writer and a reader, two writers), closed and
opened again it keeps its rows, it is made of no file, and it is gone once discarded.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import POOL, pool_opened, snapshot, table_configured, wager

from controller.journal import JournalError
from controller.journal.backends import backend_for
from controller.journal.errors import NotAJournalError
from controller.journal.location import (
    MemoryLocation,
    folder,
    journal_location,
    name,
    scheme,
    text,
)
from controller.journal.memory import database as memory
from controller.ledger.domain import LEDGER
from controller.ledger_journal import (
    append_to,
    archive_journal,
    open_journal,
    open_reader,
    verify_journal,
    writable,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def location() -> Iterator[MemoryLocation]:
    """A memory journal's name of this test's own, let go at its end."""
    named = MemoryLocation(f"test-{uuid.uuid4().hex}")
    yield named
    memory.discard(named)


def test_memory_url_names_a_journal_in_memory_and_a_colon_alone_a_file() -> None:
    assert journal_location("memory://site-a", Path("/etc/jackpotd")) == MemoryLocation("site-a")
    assert journal_location("MEMORY://site-a") == MemoryLocation("site-a")
    assert scheme(MemoryLocation("x")) == "memory"
    assert text(MemoryLocation("site-a")) == str(MemoryLocation("site-a")) == "memory://site-a"
    # No folder of its own: its files kept for it (the high-water file) go under var/.
    assert (folder(MemoryLocation("site-a")), name(MemoryLocation("site-a"))) == (None, "site-a")
    # A colon alone is no URL: a file may be named so.
    assert journal_location("memory:journal.db") == Path("memory:journal.db")


@pytest.mark.parametrize("url", ["memory://", "memory://a/b", "memory://a?mode=ro", "memory://a b"])
def test_memory_url_without_a_plain_name_is_refused_in_one_line(url: str) -> None:
    with pytest.raises(JournalError, match="not an in-memory journal's name") as refused:
        journal_location(url)
    assert "\n" not in str(refused.value)


def test_memory_journal_opened_twice_is_one_journal_for_a_reader_and_a_second_writer(
    location: MemoryLocation,
) -> None:
    first = open_journal(location)
    try:
        for event in (pool_opened(), table_configured()):
            assert first.append(event).applied
        with open_reader(location) as reader:
            assert snapshot(reader.state) == snapshot(first.state)
        second = append_to(location)
        try:
            # The second writer appends after the first's rows; the first catches up on its.
            assert second.append(wager("r1-w1", "r1", 1)).seq == 3
            assert first.append(wager("r1-w2", "r1", 2)).seq == 4
            assert first.state.pools[POOL].wagers_count == 2
        finally:
            second.close()
    finally:
        first.close()


def test_memory_journal_closed_and_opened_again_keeps_its_rows_until_discarded(
    location: MemoryLocation,
) -> None:
    journal = open_journal(location)
    assert journal.append(pool_opened()).applied
    head = journal.head
    journal.close()
    again = open_journal(location)
    assert again.head == head
    again.close()
    memory.discard(location)
    with pytest.raises(JournalError, match="no such journal in this process"):
        backend_for(location, LEDGER).require()
    with pytest.raises(JournalError, match="no such journal in this process"):
        open_reader(location)


def test_memory_journal_makes_no_file(
    tmp_path: Path, location: MemoryLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with closing(open_journal(location)) as journal:
        journal.append(pool_opened())
        journal.outbox("sink").close()
        assert verify_journal(location).ok
    assert list(tmp_path.iterdir()) == []


def test_memory_journal_verify_finds_a_row_edited_behind_the_journal(
    location: MemoryLocation,
) -> None:
    with closing(open_journal(location)) as journal:
        for event in (pool_opened(), table_configured()):
            journal.append(event)
    assert verify_journal(location).ok
    with closing(memory.connect(location)) as intruder:
        # The pool's row made to say another pool: its hash no longer covers it.
        edited = "UPDATE journal SET event = replace(event, 'pool-a', 'pool-b') WHERE seq = 1"
        assert intruder.execute(edited).rowcount == 1
    report = verify_journal(location)
    assert not report.ok
    assert report.problems


def test_memory_name_holding_other_tables_is_never_made_a_journal(
    location: MemoryLocation,
) -> None:
    with closing(memory.connect(location)) as other:
        other.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(NotAJournalError):
        writable(location)


def test_memory_journal_is_not_archived_and_says_why_in_one_line(
    tmp_path: Path, location: MemoryLocation
) -> None:
    open_journal(location).close()
    with pytest.raises(JournalError, match="not archived: it ends with its process"):
        archive_journal(location, tmp_path, before=None, rows=1, keys=(), now="2026-01-01")


def test_memory_reader_waits_for_a_commit_in_another_thread_and_sees_it(
    location: MemoryLocation,
) -> None:
    with closing(open_journal(location)) as journal:
        journal.append(pool_opened())
        prepared = journal.prepare([table_configured()])
        seen: list[int] = []
        # The sequencer's way: the COMMIT runs in its thread while a read runs in the loop's.
        committer = threading.Thread(target=prepared.commit)
        committer.start()
        seen.append(journal.committed_seq())
        committer.join(timeout=30)
        assert not committer.is_alive()
        journal.adopt(prepared)
        assert seen[0] in {1, 2}
        assert journal.committed_seq() == 2
