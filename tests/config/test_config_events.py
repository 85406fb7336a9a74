"""The start-up events that bring the journal in line with the configuration file.

The first start opens every pool and configures every table; a second start with the same
file journals nothing (the events are idempotent); a removed table is closed once, a changed
rate or paytable journaled once, and a limit below the meter showing stops the start.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.config_files import BASE, edited, load

from controller.config import load as config_module
from controller.config.changes import config_events
from controller.config.load import ConfigError
from controller.events import (
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    TableConfigured,
    TableStatusChanged,
)
from controller.ledger.apply import LedgerState, apply
from controller.ledger_journal.sqlite import Journal
from controller.money import exact_decimal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import AnyEvent


AT = "2025-01-01T00:00:00.000Z"


TWO_TABLES = (
    BASE
    + """
[[tables]]
id = "t2"
transport = "simulator"
ace_high = "ace-high-1"
"""
)


def applied(state: LedgerState, events: Sequence[AnyEvent]) -> LedgerState:
    for event in events:
        state, _ = apply(state, event)
    return state


def test_the_first_start_opens_every_pool_and_configures_every_table(tmp_path: Path) -> None:
    config = load(tmp_path, TWO_TABLES)
    events = config_events(config, LedgerState(), AT)
    assert [type(event) for event in events] == [PoolOpened, TableConfigured, TableConfigured]
    opened = events[0]
    assert isinstance(opened, PoolOpened)
    assert (opened.pool_id, opened.paytable, opened.seed_cents) == (
        "main",
        "progressive-1",
        1_000_000,
    )
    assert opened.rate_of_progression == Decimal("0.28")
    t1 = events[1]
    assert isinstance(t1, TableConfigured)
    assert set(t1.paytables) == {"fortune-1", "progressive-1"}
    assert t1.paytables["fortune-1"] == (
        Path(config_module.__file__).parents[1] / "paytables" / "fortune-1.toml"
    ).read_text(encoding="utf-8")
    assert all(event.at == AT and event.event_id.startswith("config/") for event in events)
    assert config_events(config, LedgerState(), "later") != events  # the time differs ...
    assert [e.event_id for e in config_events(config, LedgerState(), "later")] == [
        e.event_id for e in events
    ]  # ... but the ids do not


def test_a_second_start_with_the_same_config_journals_nothing(tmp_path: Path) -> None:
    config = load(tmp_path, TWO_TABLES)
    state = applied(LedgerState(), config_events(config, LedgerState(), AT))
    assert set(state.pools) == {"main"}
    assert set(state.tables) == {"t1", "t2"}
    assert config_events(config, state, AT) == []
    moved = load(tmp_path / "elsewhere", TWO_TABLES)  # who and why do not count
    assert config_events(moved, state, AT) == []


def test_a_table_removed_from_the_config_is_closed_once_and_its_books_kept(
    tmp_path: Path,
) -> None:
    state = applied(LedgerState(), config_events(load(tmp_path, TWO_TABLES), LedgerState(), AT))
    assert state.table_states.get("t2") is None or state.table_states["t2"].online
    one_table = load(tmp_path, BASE)
    events = config_events(one_table, state, AT)
    assert len(events) == 1
    (closing,) = events
    assert isinstance(closing, TableStatusChanged)
    assert (closing.table_id, closing.online) == ("t2", False)
    assert closing.reason == "removed from the configuration"
    state = applied(state, events)
    assert not state.table_states["t2"].online
    assert "t2" in state.tables  # its rules stay: its rounds and payouts can still be settled
    assert config_events(one_table, state, "later") == []  # closed once, not at every start
    # Configured again with the same rules: nothing to journal; it stays closed until its
    # devices speak (the liveness monitor reopens a table found closed at start-up).
    assert config_events(load(tmp_path, TWO_TABLES), state, "later") == []


def test_the_journal_ignores_a_start_up_replayed(tmp_path: Path) -> None:
    config = load(tmp_path, TWO_TABLES)
    with Journal(tmp_path / "journal.db") as journal:
        events = config_events(config, journal.state, AT)
        assert all(receipt.applied for receipt in journal.append_many(events))
        assert all(receipt.duplicate for receipt in journal.append_many(events))
    with Journal(tmp_path / "journal.db") as journal:
        assert config_events(config, journal.state, AT) == []


def test_a_changed_rate_queues_one_terms_change_until_the_jackpot_is_won(tmp_path: Path) -> None:
    state = applied(LedgerState(), config_events(load(tmp_path, BASE), LedgerState(), AT))
    text = edited(
        'paytable = "progressive-1"\n', 'paytable = "progressive-1"\nrate_of_progression = "20%"\n'
    )
    events = config_events(load(tmp_path, text), state, AT)
    assert len(events) == 1
    change = events[0]
    assert isinstance(change, PoolTermsChanged)
    assert (change.pool_id, change.rate_of_progression, change.apply_now) == (
        "main",
        Decimal("0.2"),
        False,
    )
    assert change.by == "config"
    assert str(tmp_path / "jackpotd.toml") in change.reason
    state = applied(state, events)
    pool = state.pools["main"]
    assert pool.terms.rate_of_progression * 100 == 28
    assert pool.pending_terms is not None
    assert pool.pending_terms.rate_of_progression * 100 == 20
    assert config_events(load(tmp_path, text), state, AT) == []


def test_a_change_reverted_before_the_win_is_journaled_again(tmp_path: Path) -> None:
    first = config_events(load(tmp_path, BASE), LedgerState(), AT)
    state = applied(LedgerState(), first)
    text = edited('paytable = "progressive-1"\n', 'paytable = "progressive-1"\nseed = "$12,000"\n')
    changed = config_events(load(tmp_path, text), state, AT)
    state = applied(state, changed)
    reverted = config_events(load(tmp_path, BASE), state, AT)
    assert len(reverted) == 1
    assert isinstance(reverted[0], PoolTermsChanged)
    assert reverted[0].seed_cents == 1_000_000
    assert reverted[0].event_id not in {event.event_id for event in first + changed}


def test_a_changed_paytable_configures_the_table_again(tmp_path: Path) -> None:
    state = applied(LedgerState(), config_events(load(tmp_path, TWO_TABLES), LedgerState(), AT))
    text = TWO_TABLES.replace('ace_high = "ace-high-1"', 'ace_high = "ace-high-2"')
    events = config_events(load(tmp_path, text), state, AT)
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, TableConfigured)
    assert (event.table_id, event.ace_high, set(event.paytables)) == (
        "t2",
        "ace-high-2",
        {"ace-high-2"},
    )
    assert event.event_id != state.table_events["t2"].event_id
    state = applied(state, events)
    assert state.tables["t2"].ace_high is not None
    assert state.tables["t2"].ace_high.name == "ace-high-2"
    assert config_events(load(tmp_path, text), state, AT) == []


def test_a_new_limit_below_the_meter_showing_stops_the_start(tmp_path: Path) -> None:
    state = applied(LedgerState(), config_events(load(tmp_path, BASE), LedgerState(), AT))
    raise_meter = MeterAdjusted("adj-1", AT, "main", "meter", 100_000, "tester", "test")
    state = applied(state, [raise_meter])  # the meter shows $11,000
    text = edited('paytable = "progressive-1"\n', 'paytable = "progressive-1"\nlimit = "$10,500"\n')
    with pytest.raises(ConfigError) as caught:
        config_events(load(tmp_path, text), state, AT)
    assert caught.value.key == "pools[0].limit"
    assert "$10,500.00 is below the $11,000.00 showing" in caught.value.reason


def test_rates_travel_as_exact_decimals() -> None:
    assert exact_decimal(Fraction(7, 25)) == Decimal("0.28")
    assert exact_decimal(Fraction(3, 400)) == Decimal("0.0075")
    assert exact_decimal(Fraction(0)) == Decimal(0)
