"""``[controller] signer_socket``: the signer's socket instead of ``key_file``, checked on load.

A path relative to the configuration's folder; never together with ``key_file`` (the key is the
signer's or the service's); never longer than a Unix socket's path may be. Each error names
the file, the key and the reason (docs/operations.md, "The signer").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.config_files import edited, error_of, load

if TYPE_CHECKING:
    from pathlib import Path

SETTING = 'id = "c1"\n'


def test_the_signer_socket_is_read_relative_to_the_file(tmp_path: Path) -> None:
    config = load(tmp_path, edited(SETTING, SETTING + 'signer_socket = "run/signer.sock"\n'))
    assert config.controller.signer_socket == str(tmp_path / "run" / "signer.sock")
    assert config.controller.key_file is None


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ('signer_socket = "s.sock"\nkey_file = "k.key"\n', "set it or key_file"),
        ('signer_socket = " "\n', "names no socket"),
        (f'signer_socket = "/{"x" * 120}"\n', "longer than a Unix socket's path may be"),
    ],
    ids=["with key_file", "empty", "too long"],
)
def test_a_bad_signer_socket_is_named_with_its_reason(
    tmp_path: Path, lines: str, reason: str
) -> None:
    error = error_of(tmp_path, edited(SETTING, SETTING + lines))
    path = str(tmp_path / "jackpotd.toml")
    assert (error.source, error.key) == (path, "controller.signer_socket")
    assert reason in error.reason
