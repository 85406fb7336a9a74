"""Every error of the configuration file names the file, the key and the reason, on one line.

Unknown keys at every level, wrong types and missing keys, money and rates, paytables, pools
and tables, transports and serial ports, the controller and its jurisdiction profile, the
broker, the web page and the simulator; a file without tables, and one that cannot be read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.config_files import BASE, edited, error_of

from controller.config.load import ConfigError, load_config

if TYPE_CHECKING:
    from pathlib import Path


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
