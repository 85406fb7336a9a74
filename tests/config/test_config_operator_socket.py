"""``[controller] operator_socket`` and ``operator_group``: where operators' signed actions come in.

The socket's path is read relative to the configuration's folder and never longer than a Unix
socket's path may be; the group is a name, looked up where the daemon runs. Each error names
the file, the key and the reason (docs/operations.md, "Signing as the operator").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.config_files import edited, error_of, load

if TYPE_CHECKING:
    from pathlib import Path

SETTING = 'id = "c1"\n'


def test_the_operator_socket_is_read_relative_to_the_file_and_off_by_default(
    tmp_path: Path,
) -> None:
    assert load(tmp_path, edited(SETTING, SETTING)).controller.operator_socket is None
    lines = 'operator_socket = "run/operator.sock"\noperator_group = "jackpotd-operators"\n'
    config = load(tmp_path, edited(SETTING, SETTING + lines))
    assert config.controller.operator_socket == str(tmp_path / "run" / "operator.sock")
    assert config.controller.operator_group == "jackpotd-operators"


@pytest.mark.parametrize(
    ("lines", "key", "reason"),
    [
        ('operator_socket = " "\n', "controller.operator_socket", "names no socket"),
        (
            f'operator_socket = "/{"x" * 120}"\n',
            "controller.operator_socket",
            "longer than a Unix socket's path may be",
        ),
        ('operator_group = " ops"\n', "controller.operator_group", "is not a group's name"),
    ],
    ids=["empty", "too long", "blank group"],
)
def test_a_bad_operator_socket_or_group_is_named_with_its_reason(
    tmp_path: Path, lines: str, key: str, reason: str
) -> None:
    error = error_of(tmp_path, edited(SETTING, SETTING + lines))
    assert (error.source, error.key) == (str(tmp_path / "jackpotd.toml"), key)
    assert reason in error.reason
