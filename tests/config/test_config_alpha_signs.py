"""The LED signs of a configuration file (``[[alpha_sign]]``): a pool and tables each.

A sign is configured for a pool and tables, and each of its errors names its key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.config_files import edited, error_of, load

from controller.config.schema import ConfigError
from controller.service import demo
from controller.service.demo import LEVELS_POOL, demo_config

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


def test_a_sign_may_hang_over_one_level_of_a_pool_and_no_level_the_pool_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each level of a multi-level pool has its own meter, POOL.LEVEL (docs/signs.md): the demo
    # hangs a sign over its mystery grand; a level its paytable does not list is refused.
    config = demo_config(tables=1, signs=("pit",), journal=Path("var/x.db"), levels=True)
    signs = {entry.settings.name: entry.settings.pool_id for entry in config.entries("alpha_sign")}
    assert signs == {"pit": "fortune-progressive", "pit-grand": f"{LEVELS_POOL}.grand"}
    monkeypatch.setattr(demo, "SIGNED_LEVEL", "jumbo")
    with pytest.raises(ConfigError) as refused:
        demo_config(tables=1, signs=("pit",), journal=Path("var/x.db"), levels=True)
    assert refused.value.key == "alpha_sign[1].pool_id"
    assert f"no pool '{LEVELS_POOL}.jumbo'" in refused.value.reason
