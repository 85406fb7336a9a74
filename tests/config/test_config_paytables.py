"""The paytables a configuration file names: files checked and named, folders before the seeds.

A broken paytable file names the config key and the paytable's key; a file carries its own
name; two different paytables under one name are refused; ``paytable_dirs`` come before the
seeds; the Dynasty Bonus follows the jurisdiction's profile and is offered on its own spot.
"""

from __future__ import annotations

from pathlib import Path

from support.config_files import edited, error_of, load, write

from controller.config import load as config_module
from controller.config.load import Jurisdiction
from controller.rules.paytable_files import find_paytable
from controller.rules.ranking import AceFive

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
