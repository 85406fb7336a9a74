"""Keys are written 0600 whatever the process umask: an operator's sealed key, the controller's.

docs/operations.md, "Files and their modes". The mode an open asks for is masked by the umask
(under 277 a key opened at 0600 would be 0400); the mode set once the file is open is not, so
under each umask the key is 0600, and the public half, a record, 0640.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.file_modes import mode_of, process_umask
from support.ledger.approvals import PASSPHRASE, key_file

from controller.files import RECORD, SECRET
from controller.security.controller_key import load_key
from controller.security.keys import KeyFileError, open_key, write_key_file

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.usefixtures("key_umask")


@pytest.fixture(params=(0o000, 0o077, 0o277), ids=lambda mask: f"umask-{mask:03o}")
def key_umask(request: pytest.FixtureRequest) -> Iterator[int]:
    with process_umask(request.param) as mask:
        yield mask


def test_an_operators_key_file_is_0600_and_opens(tmp_path: Path) -> None:
    path = key_file(tmp_path, "Sam Supervisor")  # as jackpotd operator key writes it
    assert mode_of(path) == SECRET
    name, _ = open_key(path, PASSPHRASE)
    assert name == "Sam Supervisor"
    with pytest.raises(KeyFileError, match="cannot create the key file"):
        write_key_file(path, b"another key")  # never over one
    assert mode_of(path) == SECRET


def test_jackpotd_key_generate_writes_the_key_0600_and_its_public_half_0640(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, public = tmp_path / "controller.key", tmp_path / "controller.pub"
    status, out, err = run(
        capsys, "key", "generate", "--out", str(key), "--public-out", str(public)
    )
    assert status == 0, err
    assert (mode_of(key), mode_of(public)) == (SECRET, RECORD)
    assert load_key(key).public_key in out
    assert public.read_text() == load_key(key).public_key + "\n"
