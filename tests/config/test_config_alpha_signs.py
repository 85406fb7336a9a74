"""The LED signs of a configuration file (``[[alpha_sign]]``): a pool and tables each.

A sign is configured for a pool and tables, and each of its errors names its key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.config_files import edited, error_of, load

if TYPE_CHECKING:
    from pathlib import Path


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
