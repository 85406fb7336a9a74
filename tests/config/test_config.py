"""The configuration file, its start-up events and ``jackpotd config check``.

The sample loads and documents every key; every error names file, key and reason; the start-up
events are idempotent; the command reports a valid and an invalid file.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.cli_runs import check
from support.config_files import BASE, edited, error_of, load, write

from controller.config import load as config_module
from controller.config import schema as config_schema
from controller.config import wide_area
from controller.config.changes import config_events
from controller.config.load import ConfigError, Jurisdiction, Transport, load_config
from controller.events import (
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    TableConfigured,
    TableStatusChanged,
)
from controller.journal import Journal
from controller.ledger.apply import LedgerState, apply
from controller.money import exact_decimal
from controller.rules.paytable_files import find_paytable
from controller.rules.ranking import AceFive
from drivers.mqtt.settings import BrokerSettings, TlsSettings
from drivers.serial.settings import SerialPortSettings
from drivers.simulator_source import SimulatorSettings

if TYPE_CHECKING:
    from collections.abc import Sequence

    import msgspec

    from controller.events import AnyEvent

SAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "jackpotd.toml"
AT = "2025-01-01T00:00:00.000Z"


DYNASTY_AK = """\
name = "dynasty-lab"
title = "Lab Dynasty Bonus"
wager = "dynasty-bonus"
source = "tests"
joker = "semi-wild"

[[lines]]
line = "natural-royal-flush-plus-natural-suited-ace-king"
outcome = "Natural royal flush and natural ace/king suited"
pays = "1,000 to 1"

[[lines]]
line = "straight"
outcome = "Straight"
pays = "2 to 1"
"""


# -- the sample ----------------------------------------------------------------------------------


def test_the_sample_configuration_loads_with_every_section() -> None:
    config = load_config(SAMPLE)
    assert config.controller.site == "riverside"
    assert config.controller.jurisdiction is Jurisdiction.PA
    assert config.controller.ace_five is AceFive.SECOND_HIGHEST
    assert config.controller.verification_cents == 1_000_000
    assert [pool.pool_id for pool in config.pools] == ["fortune-floor"]
    assert [str(table.transport) for table in config.tables] == [
        "mqtt",
        "serial:t2-devices",
        "simulator",
    ]
    assert config.tables[2].event.ace_high == "ace-high-1"
    broker = config.settings("broker")
    assert isinstance(broker, BrokerSettings)
    assert broker.client_id == "jackpotd-pit-2"
    assert broker.site == "riverside"
    assert [entry.settings.table_id for entry in config.entries("serial")] == ["t2"]
    assert isinstance(config.settings("simulator"), SimulatorSettings)


def _documented(text: str) -> set[str]:
    """Every key the sample sets or shows commented out, as ``section.key``."""
    keys, section = set(), ""
    for line in text.splitlines():
        if header := re.match(r"^#?\s*\[\[?([\w.]+)\]\]?\s*$", line):
            section = header.group(1)
            keys.add(section)  # a sub-table documents its parent's key: [broker.tls]
        elif setting := re.match(r"^#?\s*(\w+)\s*=", line):
            keys.add(f"{section}.{setting.group(1)}")
    return keys


@pytest.mark.parametrize(
    ("section", "struct"),
    [
        ("controller", config_schema.RawController),
        ("broker", BrokerSettings),
        ("broker.tls", TlsSettings),
        ("serial", SerialPortSettings),
        ("pools", config_schema.RawPool),
        ("tables", config_schema.RawTable),
        ("web", config_module.WebSettings),
        ("simulator", SimulatorSettings),
        ("wide_area", wide_area.RawWideArea),
        ("wide_area.sites", wide_area.RawSite),
    ],
)
def test_the_sample_documents_every_key(section: str, struct: type[msgspec.Struct]) -> None:
    documented = _documented(SAMPLE.read_text(encoding="utf-8"))
    set_elsewhere = {"site", "controller_id"} if section == "broker" else set()
    expected = set(struct.__struct_encode_fields__) - set_elsewhere
    missing = {key for key in expected if f"{section}.{key}" not in documented}
    assert not missing


# -- errors name the file, the key and the reason -------------------------------------------------


T = 'pool = "main"\n'  # the last line of tables[0]
P = 'paytable = "progressive-1"\n'  # the last line of pools[0]
C = 'site = "lab"\n'  # a line of [controller]
COM1 = '[[serial]]\nname = "com1"\nurl = "/dev/ttyS0"\ntable_id = "t1"\n'

ERRORS = [
    # unknown keys, at every level
    ("[controller]\n", "colour = 1\n[controller]\n", "colour", "unknown field"),
    (C, C + 'sight = "x"\n', "controller.sight", "unknown field"),
    (T, T + "seat = 6\n", "tables[0].seat", "unknown field"),
    ("", '[broker]\n[broker.tls]\ncafile = "x"\n', "broker.tls.cafile", "unknown field"),
    ("", "[web]\nprt = 1\n", "web.prt", "unknown field"),
    # wrong types and missing keys
    (T, T + 'seats = "six"\n', "tables[0].seats", "Expected `int`, got `str`"),
    ('transport = "simulator"\n', "", "tables[0].transport", "missing required field"),
    (C, "", "controller.site", "missing required field"),
    ("", "[[tables]\n", "(file)", "not valid TOML"),
    # money and rates
    (T, T + 'minimum_wager = "5"\n', "tables[0].minimum_wager", "not a dollar amount"),
    (P, P + 'rate_of_progression = "28"\n', "pools[0].rate_of_progression", "not a percentage"),
    (P, P + 'reserve_rate = "80%"\n', "pools[0].reserve_rate", "exceeds 100% of the wager"),
    (P, P + 'seed = "$20,000"\nlimit = "$15,000"\n', "pools[0].limit", "below the seed of $20,0"),
    (C, C + 'verification_amount = "10k"\n', "controller.verification_amount", "not a dollar"),
    # paytables
    ('"fortune-1"', '"fortune-99"', "tables[0].bonus", "no paytable 'fortune-99' in the seeds"),
    ('"fortune-1"', '"ace-high-1"', "tables[0].bonus", "ace-high-1 is for the ace-high wager, not"),
    ('"fortune-1"', '"Fortune One"', "tables[0].bonus", "neither a paytable name nor a .toml"),
    ('"fortune-1"', '"tables/missing.toml"', "tables[0].bonus", "cannot read"),
    (P, 'paytable = "fortune-1"\n', "pools[0].paytable", "is for the fortune-bonus wager"),
    # pools and tables
    (T, "", "tables[0].pool", "a table with a progressive paytable names the pool it feeds"),
    (T, 'pool = "side"\n', "tables[0].pool", "no pool 'side'; configured: main"),
    ('progressive = "progressive-1"\n', "", "tables[0].pool", "only a table with a progressive"),
    (
        'progressive = "progressive-1"\n',
        'progressive = "progressive-2"\n',
        "tables[0].pool",
        "pool 'main' pays paytable progressive-1, but this table's progressive is progressive-2",
    ),
    (
        'bonus = "fortune-1"\nprogressive = "progressive-1"\npool = "main"\n',
        "",
        "tables[0]",
        "offers no side bet",
    ),
    (
        "",
        '[[tables]]\nid = "t1"\ntransport = "simulator"\nace_high = "ace-high-1"\n',
        "tables[1].id",
        "'t1' is also tables[0].id",
    ),
    ("", '[[pools]]\nid = "main"\npaytable = "progressive-2"\n', "pools[1].id", "'main' is also"),
    ('id = "t1"', 'id = "pit/1"', "tables[0].id", "use letters, digits"),
    (T, T + "seats = 10\n", "tables[0].seats", "1 to 9 seats"),
    (
        T,
        T + 'max_payout = "$40,000"\n',
        "tables[0].max_payout",
        "$40,000.00 is below the § 688a.12(e) floor of $50,000.00",
    ),
    (
        T,
        T + 'minimum_wager = "$25"\nmax_payout = "$100,000"\n',
        "tables[0].max_payout",
        "below the § 688a.12(e) floor of $130,500.00",  # 5,000 to 1 at $25, $500, 5 Envy
    ),
    # transports and serial ports
    ('"simulator"', '"mqtt"', "tables[0].transport", "'mqtt' needs a [broker] table"),
    (
        '"simulator"',
        '"serial:com9"',
        "tables[0].transport",
        "no [[serial]] entry named 'com9'; configured: none",
    ),
    (
        '"simulator"',
        '"pigeon"',
        "tables[0].transport",
        "'pigeon' is not a transport: write 'mqtt', 'serial:<name>', 'simulator'",
    ),
    ('"simulator"', '"serial"', "tables[0].transport", "'serial': write 'serial:<name>'"),
    ("", COM1.replace("t1", "t9"), "serial[0].table_id", "no table 't9'; configured: t1"),
    ("", COM1, "serial[0].table_id", "table 't1' does not name transport 'serial:com1'"),
    ("", COM1 + 'parity = "X"\n', "serial[0].parity", "must be N, E, O, M or S, not 'X'"),
    ("", COM1 + COM1, "serial[1].name", "'com1' is also serial[0].name"),
    # the controller and the jurisdiction profile
    (C, C + 'ace_five = "lowest"\n', "controller.ace_five", "the NJ 13:69F-11(d) option"),
    (C, C + 'jurisdiction = "nv"\n', "controller.jurisdiction", "'nv' is not one of 'pa', 'nj'"),
    (
        C,
        C + 'jurisdiction = "nj"\ndynasty_profile = "pa"\n',
        "controller.dynasty_profile",
        "'pa' is not a nj profile; one of nj",
    ),
    (C, C + 'hit_order = "random"\n', "controller.hit_order", "not one of 'sequential', 'split'"),
    (C, C + "heartbeat_timeout_s = 0\n", "controller.heartbeat_timeout_s", "must be above 0"),
    (C, C + 'paytable_dirs = ["nowhere"]\n', "controller.paytable_dirs[0]", "no such folder"),
    # the broker, the web page and the simulator
    ("", '[broker]\nsite = "other"\n', "broker.site", "set once, as controller.site"),
    ("", "[broker]\nport = 0\n", "broker.port", "1 to 65535"),
    ("", '[broker]\npassword_file = "pw"\n', "broker.password_file", "needs broker.username"),
    ("", '[broker]\n[broker.tls]\nca_file = "tls/ca.crt"\n', "broker.tls.ca_file", "cannot read"),
    ("", "[web]\nport = 70000\n", "web.port", "1 to 65535"),
    ("", "[simulator]\noccupancy = 1.5\n", "simulator.occupancy", "a probability is 0 to 1"),
    ("", "[simulator]\nhit_every = -1\n", "simulator.hit_every", "0 (off)"),
    ("", "[simulator]\nround_interval_s = 0\n", "simulator.round_interval_s", "above 0"),
]


@pytest.mark.parametrize(
    ("old", "new", "key", "reason"), ERRORS, ids=[case[2] + ":" + case[3][:30] for case in ERRORS]
)
def test_every_error_names_the_file_the_key_and_the_reason(
    tmp_path: Path, old: str, new: str, key: str, reason: str
) -> None:
    error = error_of(tmp_path, edited(old, new))
    path = str(tmp_path / "jackpotd.toml")
    assert (error.source, error.key) == (path, key)
    assert reason in error.reason
    assert str(error) == f"{path}: {key}: {error.reason}"
    assert "\n" not in str(error)


def test_no_tables_is_an_error(tmp_path: Path) -> None:
    text = BASE[: BASE.index("[[tables]]")]
    assert error_of(tmp_path, text).key == "tables"


def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: \(file\): cannot read"):
        load_config(tmp_path / "missing.toml")


def test_a_broken_paytable_file_names_the_config_key_and_the_paytable_key(tmp_path: Path) -> None:
    text = DYNASTY_AK.replace('pays = "2 to 1"', 'pays = "two to one"')
    write(tmp_path, text, "paytables/dynasty-lab.toml")
    error = error_of(
        tmp_path, edited('bonus = "fortune-1"', 'bonus = "paytables/dynasty-lab.toml"')
    )
    assert error.key == "tables[0].bonus"
    assert f"{tmp_path / 'paytables' / 'dynasty-lab.toml'}: lines[1].pays: " in error.reason


def test_a_paytable_file_must_carry_its_own_name(tmp_path: Path) -> None:
    write(tmp_path, DYNASTY_AK, "paytables/other-name.toml")
    error = error_of(tmp_path, edited('bonus = "fortune-1"', 'bonus = "paytables/other-name.toml"'))
    assert error.key == "tables[0].bonus"
    assert "'dynasty-lab' does not match the file name" in error.reason


def test_two_different_paytables_under_one_name_are_refused(tmp_path: Path) -> None:
    seed = find_paytable("progressive-1")
    assert seed.progressive is not None
    text = (
        Path(config_module.__file__).parents[1] / "paytables" / "progressive-1.toml"
    ).read_text()
    write(tmp_path, text.replace('"28%"', '"20%"'), "custom/progressive-1.toml")
    error = error_of(
        tmp_path, edited('paytable = "progressive-1"', 'paytable = "custom/progressive-1.toml"')
    )
    assert error.key == "tables[0].progressive"
    assert "another paytable named progressive-1 than pools[0].paytable" in error.reason


def test_paytable_dirs_come_before_the_seeds(tmp_path: Path) -> None:
    text = (
        Path(config_module.__file__).parents[1] / "paytables" / "progressive-1.toml"
    ).read_text()
    write(tmp_path, text.replace('"28%"', '"20%"'), "paytables/progressive-1.toml")
    config = load(tmp_path, edited('id = "c1"\n', 'id = "c1"\npaytable_dirs = ["paytables"]\n'))
    pool = config.pools[0]
    assert pool.paytable.origin == str(tmp_path / "paytables" / "progressive-1.toml")
    assert pool.terms.rate_of_progression * 100 == 20


def test_the_dynasty_profile_follows_the_jurisdiction(tmp_path: Path) -> None:
    write(tmp_path, DYNASTY_AK, "paytables/dynasty-lab.toml")
    text = edited('bonus = "fortune-1"', 'bonus = "fortune-1"\ndynasty = "dynasty-lab"').replace(
        'id = "c1"\n', 'id = "c1"\npaytable_dirs = ["paytables"]\n'
    )
    error = error_of(tmp_path, text)
    assert error.key == "tables[0].dynasty"
    assert "which the 'pa' Dynasty profile does not define (controller.dynasty_profile" in (
        error.reason
    )
    caption = text.replace('id = "c1"\n', 'id = "c1"\ndynasty_profile = "pa-caption"\n')
    config = load(tmp_path, caption)
    assert config.controller.dynasty_profile == "pa-caption"
    event = config.tables[0].event
    assert (event.dynasty, event.dynasty_profile) == ("dynasty-lab", "pa-caption")


def test_a_dynasty_paytable_is_offered_on_its_own_spot_not_the_bonus(tmp_path: Path) -> None:
    write(tmp_path, DYNASTY_AK, "paytables/dynasty-lab.toml")
    text = edited('bonus = "fortune-1"', 'bonus = "paytables/dynasty-lab.toml"')
    error = error_of(
        tmp_path, text.replace('id = "c1"\n', 'id = "c1"\ndynasty_profile = "pa-caption"\n')
    )
    assert error.key == "tables[0].bonus"
    assert 'offer it on the EZ Pai Gow spot, dynasty = "dynasty-lab"' in error.reason


def test_nj_allows_ace_five_lowest(tmp_path: Path) -> None:
    text = edited('site = "lab"\n', 'site = "lab"\njurisdiction = "nj"\nace_five = "lowest"\n')
    controller = load(tmp_path, text).controller
    assert (controller.jurisdiction, controller.ace_five) == (Jurisdiction.NJ, AceFive.LOWEST)
    assert controller.dynasty_profile == "nj"


def test_a_password_file_open_to_other_users_is_refused(tmp_path: Path) -> None:
    secret = write(tmp_path, "hunter2\n", "secrets/mqtt-password")
    broker = '[broker]\nusername = "jackpotd"\npassword_file = "secrets/mqtt-password"\n'
    secret.chmod(0o644)
    error = error_of(tmp_path, BASE + broker)
    assert error.key == "broker.password_file"
    assert "open to every user (mode 644); chmod o-rwx it" in error.reason
    secret.chmod(0o640)
    config = load(tmp_path, BASE + broker)
    broker = config.settings("broker")
    assert broker.password_file == str(tmp_path / "secrets" / "mqtt-password")


def test_tls_files_are_checked_and_resolved(tmp_path: Path) -> None:
    for name in ("ca.crt", "c1.crt", "c1.key"):
        write(tmp_path, "-----\n", f"tls/{name}").chmod(0o600)
    tls = '[broker]\nport = 8883\n[broker.tls]\nca_file = "tls/ca.crt"\ncert_file = "tls/c1.crt"\n'
    assert error_of(tmp_path, BASE + tls).key == "broker.tls"
    config = load(tmp_path, BASE + tls + 'key_file = "tls/c1.key"\n')
    broker = config.settings("broker")
    assert broker.tls is not None
    assert broker.tls.ca_file == str(tmp_path / "tls" / "ca.crt")
    (tmp_path / "tls" / "c1.key").chmod(0o604)
    error = error_of(tmp_path, BASE + tls + 'key_file = "tls/c1.key"\n')
    assert error.key == "broker.tls.key_file"


def test_relative_paths_are_relative_to_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "etc"
    monkeypatch.chdir(tmp_path)
    default = load(folder, BASE).controller.journal
    assert default == folder / "var" / "journal.db"
    text = edited('id = "c1"\n', 'id = "c1"\njournal = "data/j.db"\n')
    assert load(folder, text).controller.journal == folder / "data" / "j.db"
    text = edited('id = "c1"\n', f'id = "c1"\njournal = "{tmp_path / "abs.db"}"\n')
    assert load(folder, text).controller.journal == tmp_path / "abs.db"


def test_defaults_fill_a_minimal_file(tmp_path: Path) -> None:
    config = load(tmp_path, BASE)
    table = config.tables[0]
    assert table.transport == Transport("simulator")
    assert table.event.seats == 6
    assert (table.event.minimum_wager_cents, table.event.envy_minimum_cents) == (100, 500)
    assert table.event.envy_includes_dealer is False  # § 688a.1: never the dealer's hand
    assert table.event.max_payout_cents is None
    assert table.heartbeat_timeout_s == 10
    assert config.pools[0].terms.seed_cents == 1_000_000
    assert config.settings("broker") is None
    assert (config.web.host, config.web.port) == ("127.0.0.1", 8080)
    # A simulator table plays with the defaults, as if [simulator] were written empty.
    assert config.settings("simulator") == SimulatorSettings()


def test_a_serial_table_gets_its_port(tmp_path: Path) -> None:
    serial = '[[serial]]\nname = "com1"\nurl = "socket://localhost:7000"\ntable_id = "t1"\n'
    config = load(tmp_path, edited('"simulator"', '"serial:com1"') + serial)
    assert config.tables[0].transport == Transport("serial", "com1")
    assert [entry.key for entry in config.entries("serial")] == ["serial[0]"]
    assert config.settings("simulator") is None


def test_a_serial_port_of_another_table_is_refused(tmp_path: Path) -> None:
    serial = '[[serial]]\nname = "com1"\nurl = "/dev/ttyS0"\ntable_id = "t2"\n'
    error = error_of(tmp_path, edited('"simulator"', '"serial:com1"') + serial)
    assert error.key == "tables[0].transport"
    assert error.reason == "[[serial]] 'com1' is for table 't2' (serial[0].table_id)"


# -- the events that bring the journal in line ----------------------------------------------------


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


# -- jackpotd config check ------------------------------------------------------------------------


def test_config_check_summarizes_a_valid_file(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = check(capsys, str(SAMPLE))
    assert (status, err) == (0, "")
    for text in (
        "valid (sha256 ",
        "controller pit-2 at site riverside",
        "fortune-floor: progressive-1, seed $10,000.00, progression 28%",
        "t1: 6 seats over mqtt; bonus fortune-1; progressive progressive-1 -> pool fortune-floor",
        "t2: 6 seats over serial:t2-devices",
        "t3: 6 seats over simulator; ace high ace-high-1",
        "broker (mqtt): 127.0.0.1:1883, no TLS, anonymous, client id jackpotd-pit-2",
        "serial[0] (serial): /dev/ttyUSB0 at 115200 baud -> table t2",
        "alpha_sign: none",
        "web: http://127.0.0.1:8080/",
    ):
        assert text in out


def test_config_check_prints_the_one_line_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, edited('pool = "main"', 'pool = "side"'))
    status, out, err = check(capsys, str(path))
    assert (status, out) == (1, "")
    assert err == f"jackpotd: {path}: tables[0].pool: no pool 'side'; configured: main\n"


def test_config_check_json_either_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = check(capsys, str(SAMPLE), "--json")
    document = json.loads(out)
    assert status == 0
    assert document["valid"] is True
    assert [table["transport"] for table in document["tables"]] == [
        "mqtt",
        "serial:t2-devices",
        "simulator",
    ]
    assert document["pools"][0]["seed_cents"] == 1_000_000
    path = write(tmp_path, edited('pool = "main"', 'pool = "side"'))
    status, out, _ = check(capsys, str(path), "--json")
    assert status == 1
    assert json.loads(out) == {
        "valid": False,
        "file": str(path),
        "key": "tables[0].pool",
        "reason": "no pool 'side'; configured: main",
    }


# -- LED signs ------------------------------------------------------------------------------------

SIGN = '\n[[alpha_sign]]\nname = "east"\nurl = "/dev/ttyUSB9"\npool_id = "main"\ntables = ["t1"]\n'


def test_alpha_signs_are_configured_for_a_pool_and_tables(tmp_path: Path) -> None:
    (entry,) = load(tmp_path, edited("", SIGN)).entries("alpha_sign")
    sign = entry.settings
    assert (sign.name, sign.pool_id, sign.tables, sign.min_interval_s) == (
        "east",
        "main",
        ["t1"],
        0.25,
    )


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        ('pool_id = "main"', "alpha_sign[0].pool_id", "no pool 'other'"),
        ('tables = ["t1"]', "alpha_sign[0].tables[0]", "no table 't9'"),
        ('name = "east"', "alpha_sign[0]", "must not be empty"),
    ],
)
def test_alpha_sign_errors_name_the_key(tmp_path: Path, change: str, key: str, reason: str) -> None:
    replacement = {
        'pool_id = "main"': 'pool_id = "other"',
        'tables = ["t1"]': 'tables = ["t9"]',
        'name = "east"': 'name = " "',
    }[change]
    error = error_of(tmp_path, edited("", SIGN.replace(change, replacement)))
    assert error.key.startswith(key)
    assert reason in error.reason
