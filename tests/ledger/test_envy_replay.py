"""Envy and the dealer's hand, from the configuration to the journal (58 Pa. Code § 688a.1).

§ 688a.1 pays the Envy Bonus when *another player* at the table holds an Envy Bonus Qualifying
Hand: never for the dealer's hand. Every configuration journals that (``envy_includes_dealer``
false) and refuses to say otherwise. A ``table-configured`` event journaled before the rule
carries no such field and was played with the old default, the dealer's hand paying Envy: its
journal replays, and verifies, exactly as it was paid (docs/rules.md § 9).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from importlib import resources
from typing import TYPE_CHECKING

import msgspec
import pytest

from controller.config.changes import config_events
from controller.config.load import ConfigError, load_config
from controller.events import RoundSettled, TableConfigured, WagerLocked, decode_event, encode_event
from controller.journal.sqlite.rows import rows_with_ids
from controller.ledger.apply import LedgerState, apply
from controller.ledger.table_rules import table_rules
from controller.ledger_journal.sqlite import Journal, verify

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-12-01T18:00:00Z"
DEALER_QUADS = ["9c", "9d", "9h", "9s", "2c", "5d", "Kh"]  # $5 Envy on fortune-1
SEAT_1 = ["Jc", "Jd", "2s", "6c", "5s", "8d", "Qs"]  # a pair: no line, no Envy
SEAT_2 = ["Qc", "Qd", "Qh", "3s", "7c", "4d", "Tc"]  # three of a kind: pays 3 to 1, no Envy

CONFIG = """\
[controller]
site = "lab"
id = "c1"

[[tables]]
id = "t1"
transport = "simulator"
bonus = "fortune-1"
"""


def fortune_table(event_id: str = "old-table") -> TableConfigured:
    """A table event as the controller wrote it before § 688a.1: no ``envy_includes_dealer``."""
    text = (resources.files("controller") / "paytables" / "fortune-1.toml").read_text()
    return TableConfigured(event_id, AT, "T1", {"fortune-1": text}, bonus="fortune-1")


def round_events(round_id: str) -> list[WagerLocked | RoundSettled]:
    hands = {"1": SEAT_1, "2": SEAT_2}
    return [
        WagerLocked(f"{round_id}-w1", AT, "T1", round_id, 1, "bonus", 500),
        WagerLocked(f"{round_id}-w2", AT, "T1", round_id, 2, "bonus", 500),
        RoundSettled(f"{round_id}-settle", AT, "T1", round_id, DEALER_QUADS, hands),
    ]


def envy_payouts(path: Path) -> list[tuple[str, int]]:
    with closing(sqlite3.connect(path)) as raw:
        rows = raw.execute("SELECT payout_id, win_cents FROM payouts WHERE kind = 'envy'")
        return sorted(rows.fetchall())


def test_688a1_an_old_journals_table_without_the_field_replays_the_dealers_envy_as_paid(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    old = fortune_table()
    assert b"envy_includes_dealer" not in encode_event(old)
    with Journal(path) as journal:
        for event in (old, *round_events("r1")):
            assert journal.append(event).applied
    paid = [("r1-settle/1/bonus/envy/0", 500), ("r1-settle/2/bonus/envy/0", 500)]
    assert envy_payouts(path) == paid
    # Replaying the file gives the same payouts: verify re-applies every row and compares.
    report = verify(path)
    assert report.ok, report.problems
    with closing(sqlite3.connect(path)) as raw:  # the row's canonical text, as its hash covers it
        (text,) = [row.values["event"] for row in rows_with_ids(raw, ["old-table"])]
    stored = decode_event(text)
    assert isinstance(stored, TableConfigured)
    assert stored.envy_includes_dealer is msgspec.UNSET
    assert table_rules(stored).envy_includes_dealer


def test_688a1_an_old_journals_table_with_true_written_out_replays_as_paid() -> None:
    old = msgspec.structs.replace(fortune_table(), envy_includes_dealer=True)
    assert b'"envy_includes_dealer":true' in encode_event(old)
    state, _ = apply(LedgerState(), decode_event(encode_event(old)))
    assert state.tables["T1"].envy_includes_dealer


def test_688a1_a_configured_table_never_pays_envy_for_the_dealers_hand(tmp_path: Path) -> None:
    (tmp_path / "jackpotd.toml").write_text(CONFIG, encoding="utf-8")
    config = load_config(tmp_path / "jackpotd.toml")
    (table,) = config.tables
    assert table.event.envy_includes_dealer is False
    assert b'"envy_includes_dealer":false' in encode_event(table.event)
    assert table.rules.envy_includes_dealer is False
    state = LedgerState()
    for event in config_events(config, state, AT):
        state, _ = apply(state, event)
    state, _ = apply(state, WagerLocked("w1", AT, "t1", "r1", 1, "bonus", 500))
    state, effects = apply(state, RoundSettled("s1", AT, "t1", "r1", DEALER_QUADS, {"1": SEAT_1}))
    assert [effect for effect in effects if getattr(effect, "kind", None) == "envy"] == []


@pytest.mark.parametrize("value", ["true", "false"])
def test_688a1_the_configuration_cannot_make_the_dealers_hand_pay_envy(
    tmp_path: Path, value: str
) -> None:
    path = tmp_path / "jackpotd.toml"
    path.write_text(CONFIG + f"envy_includes_dealer = {value}\n", encoding="utf-8")
    if value == "false":  # the rule itself, said out loud: accepted
        assert load_config(path).tables[0].event.envy_includes_dealer is False
        return
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == "tables[0].envy_includes_dealer"
    assert "never the dealer's" in caught.value.reason
    assert "§ 688a.1" in caught.value.reason


def test_688a1_at_start_a_table_journaled_before_the_rule_is_configured_again_without_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "jackpotd.toml").write_text(CONFIG, encoding="utf-8")
    config = load_config(tmp_path / "jackpotd.toml")
    state = LedgerState()
    for event in config_events(config, state, AT):
        state, _ = apply(state, event)
    assert config_events(config, state, AT) == []
    old = msgspec.structs.replace(
        state.table_events["t1"], event_id="old", envy_includes_dealer=msgspec.UNSET
    )
    state, _ = apply(state, old)
    assert state.tables["t1"].envy_includes_dealer
    (again,) = config_events(config, state, AT)
    assert isinstance(again, TableConfigured)
    assert again.envy_includes_dealer is False
    assert "reconfigured" in again.reason
    state, _ = apply(state, again)
    assert state.tables["t1"].envy_includes_dealer is False
