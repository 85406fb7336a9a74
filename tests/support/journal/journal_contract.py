"""How the journal port's contract reaches each backend (tests/journal/contract/).

Each backend is one entry of :data:`BACKENDS`: its location, how to make its writes fail for a
while (a real failure of the store, never a mock), and how an intruder with its password writes
it; another backend passes the contract by adding one entry. The backends: the SQLite file, a
PostgreSQL database on a real server (tests/support/journal/postgres.py), and a journal in this
process's memory (controller/journal/memory/). Beside them, the plays the contract's cases share.
"""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psycopg

from controller.events import BetSensed
from controller.journal.backends import backend_for
from controller.journal.location import DatabaseUrl, MemoryLocation
from controller.journal.memory import database as memory
from controller.ledger.domain import LEDGER
from support.journal.journal_rig import AT, FIVE_ACES, NOTHING, OTHER, TABLE, settle, wager

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path

    import pytest

    from controller.journal.location import JournalLocation
    from controller.ledger_journal import LedgerJournal


HIT = "r2-settle/3/progressive"
"""The payout of seat 3's five aces, which needs a supervisor's verification."""


@dataclass(frozen=True)
class Backend:
    """How the contract reaches one backend."""

    location: JournalLocation
    """The test's own location, opened through the factory each time (the same: reopening)."""
    failing_writes: Callable[[], AbstractContextManager[None]]
    """Within this, every write of the store fails."""
    intrude: Callable[[str], int]
    """Run one statement on the store as someone with its password would; the rows it changed."""
    shared: bool
    """Whether several controller nodes may open it (its sequencer is fenced: docs/ha.md)."""

    def open(self) -> LedgerJournal:
        """The journal at the test's location, opened for writing (made if new)."""
        return backend_for(self.location, LEDGER).open()


def _sqlite(request: pytest.FixtureRequest) -> Backend:
    path: Path = request.getfixturevalue("tmp_path") / "journal.db"

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another process with the file makes the store refuse rows, as a full disk would.
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        yield
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("DROP TRIGGER no_rows")

    def intrude(statement: str) -> int:
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            return other.execute(statement).rowcount

    return Backend(path, failing_writes, intrude, shared=False)


def _postgres(request: pytest.FixtureRequest) -> Backend:
    url = DatabaseUrl(request.getfixturevalue("postgres_url"))

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another session makes the server refuse rows, as a full disk would.
        with psycopg.connect(url.url, autocommit=True) as other:
            other.execute(
                "CREATE FUNCTION no_rows() RETURNS trigger LANGUAGE plpgsql AS "
                "$$BEGIN RAISE EXCEPTION 'disk full (simulated)'; END$$"
            )
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "FOR EACH ROW EXECUTE FUNCTION no_rows()"
            )
        yield
        with psycopg.connect(url.url, autocommit=True) as other:
            other.execute("DROP TRIGGER no_rows ON journal")
            other.execute("DROP FUNCTION no_rows()")

    def intrude(statement: str) -> int:
        with psycopg.connect(url.url, autocommit=True) as other:
            return other.execute(statement).rowcount

    return Backend(url, failing_writes, intrude, shared=True)


def _memory(request: pytest.FixtureRequest) -> Backend:
    location = MemoryLocation(f"contract-{uuid.uuid4().hex}")
    request.addfinalizer(lambda: memory.discard(location))

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another connection of the process makes the store refuse rows, as a full disk would.
        with closing(memory.connect(location)) as other:
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        yield
        with closing(memory.connect(location)) as other:
            other.execute("DROP TRIGGER no_rows")

    def intrude(statement: str) -> int:
        with closing(memory.connect(location)) as other:
            return other.execute(statement).rowcount

    return Backend(location, failing_writes, intrude, shared=False)


BACKENDS: dict[str, Callable[[pytest.FixtureRequest], Backend]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
    "memory": _memory,
}


def play_hit_round(journal: LedgerJournal) -> None:
    """Round r1 with no hit; round r2 with five aces on seat 3 (pending verification)."""
    journal.append_many([wager("r1-w1", "r1", 1), wager("r1-w2", "r1", 2)])
    journal.append(settle("r1-settle", "r1", {1: NOTHING, 2: OTHER}))
    journal.append_many([wager("r2-w3", "r2", 3), wager("r2-w4", "r2", 4)])
    journal.append(settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}))


def bet_sensed(seq: int, device: str = "sensor-1") -> BetSensed:
    return BetSensed(
        f"{TABLE}/{device}/{seq}", AT, TABLE, device, seq, seat=1, spot="progressive", present=True
    )
