"""The journal tests' rig: a pool and a table, a few rounds played, and ways to read the file.

``journal`` (an empty journal file), ``table_journal`` (one holding a pool and a table),
``played`` (a closed journal file holding three rounds, which verifies) and ``connection`` (a
raw connection to it, as an intruder would open it) are fixtures, registered for every test by
tests/conftest.py: one fixture per name in the whole suite. Every helper works on a real
SQLite file.
"""

from __future__ import annotations

import importlib.resources
import sqlite3
from contextlib import closing, suppress
from decimal import Decimal
from typing import TYPE_CHECKING, TypedDict, cast

import pytest

from controller.events import (
    HitVerified,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
)
from controller.journal.checkpoints import seal
from controller.journal.sqlite.rows import read_rows
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.codec import pool_json, wagers_json
from controller.ledger_journal.sqlite import Journal, verify

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.ledger.settlement import Payout
    from controller.ledger_journal import LedgerJournal
    from controller.security.controller_key import ControllerKey

AT = "2024-05-01T12:00:00Z"
PAYTABLE = "progressive-1"
SEED_CENTS = 1_000_000
POOL = "pool-a"
TABLE = "T1"
STRAIGHT_FLUSH = ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h"]
FIVE_ACES = ["As", "Ah", "Ad", "Ac", "Jk", "4d", "7c"]
NOTHING = ["2c", "5d", "7s", "9c", "Jd", "Ks", "3h"]
OTHER = ["2s", "4s", "5c", "8c", "9d", "Td", "Js"]
THIRD = ["3c", "4h", "6d", "8s", "Th", "Qh", "2h"]
DEALER = ["2d", "4c", "6s", "8d", "Tc", "Qc", "3s"]


def paytable_text() -> str:
    return (importlib.resources.files("controller") / "paytables" / f"{PAYTABLE}.toml").read_text()


def pool_opened(event_id: str = "open-a", pool_id: str = POOL) -> PoolOpened:
    # 28.25 % + 2 %: each $1 wager adds 28 1/4 cents to the meter, so sub-cents are carried.
    return PoolOpened(
        event_id, AT, pool_id, PAYTABLE, SEED_CENTS, Decimal("0.2825"), Decimal("0.02")
    )


def table_configured(event_id: str = "table-1", table_id: str = TABLE) -> TableConfigured:
    return TableConfigured(
        event_id,
        AT,
        table_id,
        {PAYTABLE: paytable_text()},
        progressive=PAYTABLE,
        pool_id=POOL,
        verification_cents=50_000,
    )


def wager(event_id: str, round_id: str, seat: int, amount: int = 100) -> WagerLocked:
    return WagerLocked(event_id, AT, TABLE, round_id, seat, "progressive", amount)


def settle(event_id: str, round_id: str, hands: dict[int, list[str]]) -> RoundSettled:
    return RoundSettled(
        event_id, AT, TABLE, round_id, DEALER, {str(seat): cards for seat, cards in hands.items()}
    )


def opened_journal(path: Path) -> Journal:
    journal = Journal(path)
    for event in (pool_opened(), table_configured()):
        assert journal.append(event).applied
    return journal


def play_rounds(journal: LedgerJournal) -> None:
    """Three rounds: plain contributions, a five-aces hit (pending, then verified), a reset."""
    journal.append(wager("r1-w1", "r1", 1))
    journal.append(wager("r1-w2", "r1", 2))
    journal.append(settle("r1-settle", "r1", {1: NOTHING, 2: OTHER}))
    journal.append(wager("r2-w3", "r2", 3))
    journal.append(wager("r2-w4", "r2", 4))
    journal.append(settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}))
    journal.append(HitVerified("r2-verify", AT, "r2-settle/3/progressive", "supervisor-7"))
    journal.append(wager("r3-w1", "r3", 1))
    journal.append(settle("r3-settle", "r3", {1: STRAIGHT_FLUSH}))


def rounds(first: int, count: int) -> list[AnyEvent]:
    """``count`` plain rounds from ``first``: two wagers, settled with no hit."""
    events: list[AnyEvent] = []
    for number in range(first, first + count):
        round_id = f"x{number}"
        events += [
            wager(f"{round_id}-w1", round_id, 1),
            wager(f"{round_id}-w2", round_id, 2),
            settle(f"{round_id}-settle", round_id, {1: NOTHING, 2: OTHER}),
        ]
    return events


def play(journal: LedgerJournal, first: int, count: int) -> None:
    """Append :func:`rounds` in batches, as the sequencer would."""
    events = rounds(first, count)
    for start_at in range(0, len(events), 300):
        journal.append_many(events[start_at : start_at + 300])


def checkpoint(journal: LedgerJournal, key: ControllerKey) -> int:
    """A checkpoint as the running controller journals it; its row."""
    sealed = seal(key, "c1", journal.state, journal.head, AT, domain=journal.domain)
    return journal.append_many([sealed.event], snapshot=sealed)[0].seq


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    """An empty journal file, closed after the test."""
    with Journal(tmp_path / "journal.db") as opened:
        yield opened


@pytest.fixture
def table_journal(tmp_path: Path) -> Iterator[Journal]:
    """A journal file holding :func:`opened_journal`'s pool and table, closed after the test."""
    with opened_journal(tmp_path / "journal.db") as opened:
        yield opened


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A closed journal file holding a few rounds, which verifies."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        play_rounds(journal)
    assert verify(path).ok
    return path


@pytest.fixture
def connection(played: Path) -> Iterator[sqlite3.Connection]:
    """A raw connection to the played journal, as an intruder would open it."""
    with closing(sqlite3.connect(played, isolation_level=None)) as raw:
        raw.row_factory = sqlite3.Row
        yield raw


class JournalRow(TypedDict):
    """A row's canonical columns, as :func:`rows_of` reads them (controller/journal/rows.py)."""

    seq: int
    event_id: str
    kind: str
    at: str
    event: str
    outcome: str
    reason: str
    effects: str
    prev_hash: str
    hash: str


def rows_of(path: Path) -> list[JournalRow]:
    """Every row's canonical columns, read from the file as it is (docs/journal.md)."""
    with closing(sqlite3.connect(path)) as raw:
        return [cast("JournalRow", row.values) for row in read_rows(raw)]  # its canonical keys


def table_rows(path: Path, table: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as raw:
        return raw.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()  # noqa: S608


class Stored(TypedDict):
    """What :func:`snapshot` gives: the parts of a ledger state the journal stores."""

    pools: dict[str, str]
    tables: dict[str, TableConfigured]
    rounds: dict[tuple[str, str], str]
    pending: dict[str, Payout]
    revision: int


def snapshot(state: LedgerState) -> Stored:
    """Everything of a ledger state that the journal stores, in comparable form."""
    return {
        "pools": {pool_id: pool_json(pool) for pool_id, pool in state.pools.items()},
        "tables": dict(state.table_events),
        "rounds": {key: wagers_json(wagers) for key, wagers in state.rounds.items()},
        "pending": dict(state.pending),
        "revision": state.revision,
    }


def replay(events: list[AnyEvent]) -> LedgerState:
    """A clean in-memory replay: :func:`controller.ledger.apply.apply` from an empty state."""
    state = LedgerState()
    for event in events:
        with suppress(LedgerError):  # a refusal changes nothing
            state, _ = apply(state, event)
    return state
