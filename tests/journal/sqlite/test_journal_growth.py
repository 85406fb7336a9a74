"""What a round costs on disk: at most 10 KB a round, and every row exactly what its hash covers.

docs/journal.md, "What a row stores"; docs/operations.md, "Disk sizing".

A floor of simulated tables (bets, lock, seven cards to each hand, deal complete) plays a fixed,
seeded set of rounds into a real journal file, in batches as the sequencer's group commit
writes them. The file's growth, read once its WAL is checkpointed into it, divided by the
rounds played, must stay under 10 KB (bench/journal_growth.py measures the same on a larger
floor). The compact rows must still give back, byte for byte, the canonical text the hash
chain covers, for every kind of event, and an edit of the stored form is reported.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Final

import pytest
from support.runtime.simulated_rounds import played_rounds

from controller.config.changes import config_events
from controller.config.load import parse_config
from controller.journal.compact import EVENT_TYPES, _positional_fields, at_text, stored_at
from controller.journal.sqlite.rows import read_rows, row_at
from controller.ledger.apply import LedgerState
from controller.ledger_journal.sqlite import Journal, verify
from drivers.simulator import TablePlan

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import DeviceInput

LIMIT: Final = 10_000
"""Bytes a round may add to the journal file (docs/operations.md, "Disk sizing")."""
TABLES: Final = tuple(f"t{number:02d}" for number in range(1, 9))
ROUNDS: Final = 12
"""Rounds each table plays: 96 in all."""
SEED: Final = 20261129
BATCH: Final = 8
"""Events per transaction, as the sequencer's group commit gathers them on a busy floor."""


def floor_config() -> str:
    """Two pools, eight tables of six seats with the Fortune bonus and the progressive."""
    text = '[controller]\nsite = "growth"\nid = "growth"\n\n'
    for pool in ("p1", "p2"):
        text += f'[[pools]]\nid = "{pool}"\npaytable = "progressive-1"\n\n'
    for index, table_id in enumerate(TABLES):
        text += (
            f'[[tables]]\nid = "{table_id}"\ntransport = "simulator"\nseats = 6\n'
            f'bonus = "fortune-1"\nprogressive = "progressive-1"\npool = "p{index % 2 + 1}"\n\n'
        )
    return text


def checkpointed_size(path: Path) -> int:
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0
    return path.stat().st_size


def rounds_played() -> list[DeviceInput]:
    plans = [TablePlan(table_id, seats=6, progressive_wager_cents=100) for table_id in TABLES]
    return played_rounds(plans, ROUNDS, SEED, hit_every=25)


@pytest.fixture(scope="module")
def grown_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The journal of the floor's rounds, and how many bytes per round they added to it."""
    folder = tmp_path_factory.mktemp("growth")
    path = folder / "journal.db"
    config = parse_config(floor_config(), "<growth>", folder)
    events = rounds_played()
    with Journal(path) as journal:
        receipts = journal.append_many(config_events(config, LedgerState(), "2026-11-29T18:00:00Z"))
        assert all(receipt.applied for receipt in receipts)
        configured = checkpointed_size(path)
        for first in range(0, len(events), BATCH):
            journal.append_many(events[first : first + BATCH])
        assert journal.state.pools["p1"].wagers_count > 0
    rounds = len(TABLES) * ROUNDS
    return path, (checkpointed_size(path) - configured) // rounds


def test_a_round_adds_less_than_10_kb_to_the_journal_file(grown_journal: tuple[Path, int]) -> None:
    path, per_round = grown_journal
    assert per_round < LIMIT, f"{per_round:,} bytes a round"
    assert verify(path).ok


def test_every_stored_row_reads_back_as_the_canonical_text_its_hash_covers(
    grown_journal: tuple[Path, int],
) -> None:
    path, _ = grown_journal
    with closing(sqlite3.connect(path)) as raw:
        rows = list(read_rows(raw))
    kinds = {str(row.values["kind"]) for row in rows}
    assert {"bet-sensed", "bets-locked", "card-dealt", "deal-complete"} <= kinds
    assert {"pool-opened", "table-configured"} <= kinds
    for row in rows:
        assert row.form == ""
        assert row.event is not None
        canonical = json.loads(str(row.values["event"]))
        assert canonical["event_id"] == row.values["event_id"]
        assert canonical["kind"] == row.values["kind"]
    assert verify(path).ok


def test_a_card_is_stored_as_its_round_position_and_card_and_its_effect_as_a_tag(
    grown_journal: tuple[Path, int],
) -> None:
    path, _ = grown_journal
    with closing(sqlite3.connect(path)) as raw:
        event, effects, at = raw.execute(
            "SELECT event, effects, at FROM journal WHERE kind = 'card-dealt' LIMIT 1"
        ).fetchone()
    round_id, position, card = json.loads(event)
    assert isinstance(round_id, str)
    assert isinstance(position, int)
    assert isinstance(card, str)
    assert json.loads(effects) == ["card"]
    assert isinstance(at, int)


def test_the_array_form_of_the_device_inputs_keeps_their_declared_fields() -> None:
    """The stored form of device inputs depends on their fields' order: a change needs a migration.

    docs/journal.md, "What a row stores".
    """
    shapes = {
        kind: [name for name, _ in _positional_fields(EVENT_TYPES[kind])]
        for kind in ("bet-sensed", "bets-locked", "card-dealt", "deal-complete")
    }
    assert shapes == {
        "bet-sensed": ["seat", "spot", "present", "amount_cents"],
        "bets-locked": ["round_id"],
        "card-dealt": ["round_id", "position", "card"],
        "deal-complete": ["round_id"],
    }


@pytest.mark.parametrize(
    ("at", "stored"),
    [
        ("2026-11-29T18:00:00.123Z", 1795975200123),
        ("1970-01-01T00:00:00.000Z", 0),
        ("2026-11-29T18:00:00Z", "2026-11-29T18:00:00Z"),
        ("2026-11-29T18:00:00.123456Z", "2026-11-29T18:00:00.123456Z"),
        ("2026-02-30T18:00:00.123Z", "2026-02-30T18:00:00.123Z"),
        ("0099-01-01T00:00:00.000Z", "0099-01-01T00:00:00.000Z"),
        ("yesterday", "yesterday"),
    ],
)
def test_a_time_is_stored_in_milliseconds_only_when_it_reads_back_as_the_same_text(
    at: str, stored: int | str
) -> None:
    assert stored_at(at) == stored
    assert at_text(stored_at(at)) == at


def test_an_event_stored_in_another_form_than_the_compact_one_is_reported(
    tmp_path: Path, grown_journal: tuple[Path, int]
) -> None:
    """The same event written out in full: its canonical text is unchanged, the file is not."""
    source, _ = grown_journal
    path = tmp_path / "journal.db"
    with closing(sqlite3.connect(source)) as raw, closing(sqlite3.connect(path)) as copy:
        raw.backup(copy)
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        seq, text = raw.execute(
            "SELECT seq, event FROM journal WHERE kind = 'card-dealt' LIMIT 1"
        ).fetchone()
        row = row_at(raw, seq)
        assert row is not None
        raw.execute("UPDATE journal SET event = ? WHERE seq = ?", [row.values["event"], seq])
    report = verify(path)
    assert not report.ok
    assert any(
        problem.startswith(f"row {seq}: its stored event and effects: not the form")
        for problem in report.problems
    ), report.problems
    assert f"row {seq}: the row's contents do not match its hash" in report.problems
    assert text != row.values["event"]
