"""``[controller] node``, ``lease_s`` and ``commit_hang_s``: what the fenced sequencer needs.

controller/config/controller_section.py; docs/ha.md, "The fenced sequencer". Each refusal
names the file, the key and the reason.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest
from support.config_files import edited, error_of, load

if TYPE_CHECKING:
    from pathlib import Path

ID = 'id = "c1"\n'


def test_by_default_the_node_is_the_hosts_name_with_a_10_s_lease_and_a_30_s_commit_bound(
    tmp_path: Path,
) -> None:
    controller = load(tmp_path, edited("", "")).controller
    assert controller.node == socket.gethostname()
    assert (controller.lease_s, controller.commit_hang_s) == (10.0, 30.0)


def test_the_file_names_the_node_its_lease_and_its_commit_bound(tmp_path: Path) -> None:
    text = edited(ID, ID + 'node = "db1.pit-a"\nlease_s = 4\ncommit_hang_s = 12.5\n')
    controller = load(tmp_path, text).controller
    assert (controller.node, controller.lease_s, controller.commit_hang_s) == ("db1.pit-a", 4, 12.5)


@pytest.mark.parametrize(
    ("line", "key", "reason"),
    [
        ('node = "two words"', "controller.node", "use letters, digits"),
        ('node = ""', "controller.node", "use letters, digits"),
        ("lease_s = 0.5", "controller.lease_s", "must be from 1 to 300 seconds, not 0.5"),
        ("lease_s = 301", "controller.lease_s", "must be from 1 to 300 seconds"),
        ("commit_hang_s = 0", "controller.commit_hang_s", "must be from 1 to 3600 seconds"),
        ('commit_hang_s = "soon"', "controller.commit_hang_s", "Expected `float`"),
    ],
)
def test_a_bad_fence_setting_is_refused_naming_file_key_and_reason(
    tmp_path: Path, line: str, key: str, reason: str
) -> None:
    error = error_of(tmp_path, edited(ID, f"{ID}{line}\n"))
    assert error.key == key
    assert reason in error.reason
    assert str(error).startswith(str(tmp_path / "jackpotd.toml"))


def test_a_postgresql_journals_high_water_file_is_beside_the_configuration_one_per_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never in the working directory: a node started from a source tree would write into it."""
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    text = edited(ID, ID + 'node = "db1"\njournal = "postgresql://jackpotd@db.example/jackpot"\n')
    controller = load(tmp_path, text).controller
    assert controller.high_water_file == str(tmp_path / "var" / "jackpot.db1.high-water")
