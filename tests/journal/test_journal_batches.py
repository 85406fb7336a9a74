"""Group commit writes the same file as one event at a time (docs/journal.md, "Durability").

The sequencer hands the journal whatever is waiting as one batch, and the journal does each
batch's work once: the event ids are looked up together, the journal rows inserted in one
statement, and each changed row of the materialized state written once, as the batch left it,
stamped with the row of the last event that changed it. The promise is that the database is,
byte for byte in every table, what appending the same events one at a time would have left.

Two kinds of history, each journaled twice on real SQLite files, once one event at a time and
once in random batches (with events resubmitted inside and across batches, as a device that
missed an acknowledgement does):

* the ledger's own histories from ``test_ledger_properties`` (pools opened and retuned, wagers,
  settlements that hit, verifications, adjustments, refused nonsense);
* what simulated tables' devices send (bets sensed, locks, every card, deal complete), several
  tables interleaved, with rigged jackpot rounds so payouts are made.
"""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.ledger.histories import play
from support.runtime.simulated_rounds import played_rounds

from controller.events import PoolOpened, TableConfigured
from controller.ledger_journal.sqlite import Journal
from drivers.simulator import TablePlan

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.ports import Receipt

AT = "2026-11-29T18:00:00Z"
TABLES = ("T1", "T2", "T3")
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of the file, in a fixed order."""
    with closing(sqlite3.connect(path)) as database:
        names = [
            row[0]
            for row in database.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        return {
            name: sorted(
                database.execute(f"SELECT * FROM {name}").fetchall(),  # noqa: S608 - own names
                key=repr,
            )
            for name in names
        }


def with_resubmissions(events: list[AnyEvent], rng: random.Random) -> list[AnyEvent]:
    """The events, some of them sent again a little later (a lost acknowledgement)."""
    resent: list[AnyEvent] = []
    for index, event in enumerate(events):
        resent.append(event)
        if rng.random() < 0.1:
            resent.append(events[rng.randrange(max(0, index - 5), index + 1)])
    return resent


def one_at_a_time(path: Path, events: list[AnyEvent]) -> list[Receipt]:
    with Journal(path) as journal:
        return [journal.append(event) for event in events]


def in_batches(path: Path, events: list[AnyEvent], sizes: list[int]) -> list[Receipt]:
    receipts: list[Receipt] = []
    with Journal(path) as journal:
        first = 0
        for size in sizes:
            if first >= len(events):
                break
            receipts += journal.append_many(events[first : first + size])
            first += size
        if first < len(events):
            receipts += journal.append_many(events[first:])
    return receipts


def assert_same_file(tmp_path: Path, events: list[AnyEvent], sizes: list[int]) -> None:
    single, batched = tmp_path / "single.db", tmp_path / "batched.db"
    for path in (single, batched):
        path.unlink(missing_ok=True)
    expected = one_at_a_time(single, events)
    assert in_batches(batched, events, sizes) == expected
    assert dump(batched) == dump(single)


@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32), sizes=st.lists(st.integers(1, 40)))
def test_journal_group_commit_a_batch_of_ledger_events_writes_what_one_at_a_time_writes(
    tmp_path: Path, data: st.DataObject, seed: int, sizes: list[int]
) -> None:
    rng = random.Random(seed)  # noqa: S311 - which events are resent, not a secret
    events = with_resubmissions(play(data).events, rng)
    assert_same_file(tmp_path, events, sizes)


def device_history(seed: int, rounds: int) -> list[AnyEvent]:
    """Pools and tables configured, then simulated tables playing side by side."""
    paytable = (resources.files("controller") / "paytables" / "progressive-1.toml").read_text()
    events: list[AnyEvent] = [
        PoolOpened("open-P1", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28"))
    ]
    events += [
        TableConfigured(
            f"configure-{table_id}",
            AT,
            table_id,
            {"progressive-1": paytable},
            progressive="progressive-1",
            pool_id="P1",
        )
        for table_id in TABLES
    ]
    plans = [
        TablePlan(table_id, bonus=False, occupancy=0.9, bet_probability=0.9) for table_id in TABLES
    ]
    return events + list(played_rounds(plans, rounds, seed, hit_every=2))


@pytest.mark.slow
@SETTINGS
@given(seed=st.integers(0, 2**32), sizes=st.lists(st.integers(1, 60), min_size=1))
def test_journal_group_commit_of_device_events_writes_what_one_at_a_time_writes(
    tmp_path: Path, seed: int, sizes: list[int]
) -> None:
    rng = random.Random(seed)  # noqa: S311 - which events are resent, not a secret
    events = with_resubmissions(device_history(seed, rounds=3), rng)
    assert_same_file(tmp_path, events, sizes)


def test_journal_group_commit_device_histories_make_payouts_and_move_every_table(
    tmp_path: Path,
) -> None:
    """The histories above are worth comparing: every kind of device event, jackpots paid.

    docs/journal.md, "Durability".
    """
    events = device_history(7, rounds=3)
    kinds = {type(event).__name__ for event in events}
    assert {"BetSensed", "BetsLocked", "CardDealt", "DealComplete"} <= kinds
    receipts = one_at_a_time(tmp_path / "journal.db", events)
    assert all(receipt.applied for receipt in receipts)
    tables = dump(tmp_path / "journal.db")
    assert {row[0] for row in tables["table_states"]} == set(TABLES)
    assert len(tables["payouts"]) >= len(TABLES)
