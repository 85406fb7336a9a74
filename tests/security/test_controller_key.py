"""The controller's own signing key: made once, kept outside the journal, read by the service alone.

* ``jackpotd key generate`` writes a key file readable by its owner only, never over an
  existing file, and prints the public half (and the line an anchors file takes) to keep off
  the box; ``jackpotd key show`` prints it again.
* ``jackpotd run`` needs the key: with no ``[controller] key_file``, or one that is missing,
  unreadable, open to other users or not a key, it stops with one line naming the file and the
  reason, before it opens (or creates) the journal.
* Under systemd the key is handed over with ``LoadCredential=`` and named under
  ``${CREDENTIALS_DIRECTORY}``; an openssl Ed25519 key (the lab's) is read too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.runtime.controller_keys import KEY_LINE, write_controller_key

from controller.security.controller_key import (
    ControllerKey,
    ControllerKeyError,
    key_id,
    load_key,
    resolve,
    signature_verifies,
)

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "jackpotd.service"
WAIT_S = 60.0


def jackpotd(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True, text=True, timeout=WAIT_S, cwd=cwd, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def write_config(folder: Path, key_line: str = KEY_LINE) -> Path:
    config = folder / "jackpotd.toml"
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c"\njournal = "journal.db"\n{key_line}\n'
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        'pool = "P1"\n\n[web]\nport = 1\n'
    )
    return config


def private(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o600)


def test_a_generated_key_is_its_owners_alone_and_its_public_half_is_printed(
    tmp_path: Path,
) -> None:
    key_file, public_file = tmp_path / "controller.key", tmp_path / "controller.pub"
    done = jackpotd("key", "generate", "--out", str(key_file), "--public-out", str(public_file))
    assert done.returncode == 0, done.stderr
    assert key_file.stat().st_mode & 0o777 == 0o600
    key = load_key(key_file)
    assert f"public key: {key.public_key}" in done.stdout
    assert f"key id:     {key.key_id}" in done.stdout
    anchor_line = json.loads(done.stdout.splitlines()[-1])
    assert anchor_line == {"controller_key": key.public_key, "key_id": key.key_id}
    assert public_file.read_text().strip() == key.public_key
    # The private key is printed nowhere.
    assert json.loads(key_file.read_text())["private_key"] not in done.stdout + done.stderr
    shown = jackpotd("key", "show", str(key_file))
    assert shown.returncode == 0, shown.stderr
    assert f"public key: {key.public_key}" in shown.stdout
    assert key_id(key.public_key) == key.key_id
    signature = key.sign(b"a statement")
    assert signature_verifies(key.public_key, signature, b"a statement")
    assert not signature_verifies(key.public_key, signature, b"another statement")


def test_a_key_file_is_never_overwritten(tmp_path: Path) -> None:
    key_file = tmp_path / "controller.key"
    original = write_controller_key(tmp_path)
    before = key_file.read_bytes()
    done = jackpotd("key", "generate", "--out", str(key_file))
    assert done.returncode == 1
    assert done.stderr == f"jackpotd: {key_file}: cannot create the controller key: File exists\n"
    assert key_file.read_bytes() == before
    assert load_key(key_file).public_key == original.public_key


@pytest.mark.parametrize(
    ("prepare", "reason"),
    [
        (lambda _: None, "cannot read the controller key: No such file or directory"),
        (lambda path: path.mkdir(), "the controller key is not a file"),
        (lambda path: private(path, "not a key\n"), "not a jackpotd controller key"),
        (lambda path: (write_controller_key(path.parent), path.chmod(0o604)), "open to every"),
    ],
    ids=["missing", "a-folder", "not-a-key", "open-to-others"],
)
def test_run_stops_with_one_line_naming_the_key_file_and_why(
    tmp_path: Path, prepare: object, reason: str
) -> None:
    key_file = tmp_path / "controller.key"
    assert callable(prepare)
    prepare(key_file)
    config = write_config(tmp_path)
    done = jackpotd("run", "--config", str(config))
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"jackpotd: {key_file}: ")
    assert reason in lines[0]
    assert not (tmp_path / "journal.db").exists(), "refused before the journal was opened"


def test_run_without_a_key_file_names_the_setting(tmp_path: Path) -> None:
    config = write_config(tmp_path, key_line="")
    done = jackpotd("run", "--config", str(config))
    assert done.returncode == 1
    assert done.stderr.startswith(f"jackpotd: {config}: controller.key_file: jackpotd run signs")
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "journal.db").exists()


def test_the_service_unit_hands_the_key_over_as_a_credential() -> None:
    unit = UNIT.read_text()
    assert "LoadCredential=controller-key:/etc/credstore/jackpotd-controller-key" in unit
    sample = (ROOT / "deploy" / "jackpotd.toml").read_text()
    assert 'key_file = "${CREDENTIALS_DIRECTORY}/controller-key"' in sample


def test_a_key_named_under_the_credentials_directory_is_read_from_it(tmp_path: Path) -> None:
    credentials = tmp_path / "credentials"
    written = write_controller_key(credentials, "controller-key")
    text = "${CREDENTIALS_DIRECTORY}/controller-key"
    path = resolve(text, {"CREDENTIALS_DIRECTORY": str(credentials)})
    assert path == credentials / "controller-key"
    assert load_key(path).public_key == written.public_key
    with pytest.raises(ControllerKeyError, match=r"CREDENTIALS_DIRECTORY is not set"):
        resolve(text, {})
    # The configuration keeps the placeholder; the service expands it when it starts.
    config = write_config(tmp_path, key_line=f'key_file = "{text}"\n')
    checked = jackpotd("config", "check", str(config))
    assert checked.returncode == 0, checked.stderr


def test_an_openssl_ed25519_key_is_read(tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is missing: apt-get install openssl"
    pem = tmp_path / "controller.pem"
    subprocess.run(
        [openssl, "genpkey", "-algorithm", "ed25519", "-out", str(pem)], check=True, timeout=30
    )
    pem.chmod(0o600)
    key = load_key(pem)
    assert signature_verifies(key.public_key, key.sign(b"x"), b"x")
    other = tmp_path / "rsa.pem"
    subprocess.run(
        [openssl, "genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024",
         "-out", str(other)],
        check=True, timeout=30, capture_output=True,
    )  # fmt: skip
    other.chmod(0o600)
    with pytest.raises(ControllerKeyError, match="must be Ed25519"):
        load_key(other)


def test_an_operators_key_file_is_not_taken_for_the_controllers(tmp_path: Path) -> None:
    key = ControllerKey.generate()
    record = json.loads(key.file_content())
    record["kind"] = "jackpotd-operator-key"
    path = tmp_path / "operator.key"
    path.write_text(json.dumps(record))
    path.chmod(0o600)
    with pytest.raises(ControllerKeyError, match="not a jackpotd controller key"):
        load_key(path)
    record = json.loads(key.file_content())
    record["public_key"] = ControllerKey.generate().public_key
    path.write_text(json.dumps(record))
    with pytest.raises(ControllerKeyError, match="does not match its public key"):
        load_key(path)
