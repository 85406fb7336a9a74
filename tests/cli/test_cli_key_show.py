"""``jackpotd key show`` says what a key file is, not what a JSON parser made of it.

docs/operations.md has two kinds of key: the controller's (``jackpotd key generate``), which
signs checkpoints and meters, and each operator's (``jackpotd operator key``), which signs a
person's actions. Shown an operator's key, ``key show`` used to print the parser's complaint
(``Object contains unknown field `operator```); it now says whose operator key it is, with
its public key. A file that is no key at all (the journal, say) is said to be none, in words,
and the command exits 1; the service names an operator's key given as its own the same way.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.ledger.approvals import key_file

from controller.security.controller_key import ControllerKeyError, load_key
from controller.security.keys import read_key_file

ROOT = Path(__file__).resolve().parents[2]


def jackpotd(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_an_operators_key_is_said_to_be_one_with_its_name_and_public_key(tmp_path: Path) -> None:
    path = key_file(tmp_path, "Sam Supervisor")  # as jackpotd operator key writes it
    done = jackpotd("key", "show", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{path}: an operator's key file, not a controller key"
    assert lines[1] == "operator:   Sam Supervisor"
    assert lines[2] == f"public key: {read_key_file(path).public_key}"
    assert "unknown field" not in done.stdout + done.stderr


def test_a_controller_key_shows_its_public_key_and_id(tmp_path: Path) -> None:
    path = tmp_path / "controller.key"
    assert jackpotd("key", "generate", "--out", str(path)).returncode == 0
    done = jackpotd("key", "show", str(path))
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.splitlines()[-1])
    assert done.stdout.splitlines()[0] == f"public key: {shown['controller_key']}"


def test_a_file_that_is_no_key_is_said_plainly_to_be_none(tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    sqlite3.connect(journal).execute("CREATE TABLE t (x)").connection.close()
    journal.chmod(0o600)
    document = tmp_path / "other.json"
    document.write_text('{"kind": "something else"}\n')
    document.chmod(0o600)
    no_key = "not a key file at all (a controller key is the JSON jackpotd key generate writes)"
    other = "a JSON file, but no jackpotd key (jackpotd key generate writes the controller's)"
    for path, what in ((journal, no_key), (document, other)):
        done = jackpotd("key", "show", str(path))
        assert done.returncode == 1
        assert done.stderr.strip() == f"jackpotd: {path}: not a jackpotd controller key: {what}"


def test_an_operators_key_given_as_the_controllers_is_named_for_what_it_is(
    tmp_path: Path,
) -> None:
    # What jackpotd run says of [controller] key naming an operator's key file.
    path = key_file(tmp_path, "Sam Supervisor")
    with pytest.raises(ControllerKeyError) as refused:
        load_key(path)
    assert str(refused.value) == (
        f"{path}: not a jackpotd controller key: it is the operator key of 'Sam Supervisor', "
        "which signs a person's actions (jackpotd key generate makes the controller's)"
    )
