"""The start-up self-check of software and configuration.

docs/operations.md, "Approving the software".

A manager approves the installed software and the configuration by digest; ``jackpotd run``
then refuses to start when either differs, and says which.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from support.deploy.software_rig import write_config
from support.ledger.approvals import PASSPHRASE, Site, now

from controller.cli import main
from controller.config.load import load_config
from controller.events import ManifestApproved
from controller.ledger_journal.sqlite import Journal
from controller.security.manifest import current, software_files

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


@dataclass
class Rig:
    """The site's configuration and journal (unpacked as a pair), and its operators' keys."""

    config: Path
    database: Path
    keys: dict[str, Ed25519PrivateKey]

    def __iter__(self) -> Iterator[Path]:
        return iter((self.config, self.database))


@pytest.fixture
def manifest_rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    """A configuration, and its journal with a signed site whose configuration is approved.

    The manager's and a supervisor's key files are beside them (``mgr.key``, ``sup1.key``).
    """
    config = write_config(tmp_path)
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        approvals = Site.create(journal)
        approvals.approve(load_config(config))
        approvals.key_file("mgr", tmp_path)
        approvals.key_file("sup1", tmp_path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    return Rig(config, database, approvals.keys)


def approve(config: Path, database: Path, key: str = "mgr") -> int:
    key_file = str(database.parent / f"{key}.key")
    return main(
        ["manifest", "approve", "--config", str(config), "--key", key_file, "--db", str(database)]
    )


def run_daemon(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_every_installed_file_is_in_the_manifest() -> None:
    paths = [path for path, _ in software_files()]
    assert "controller/ledger/apply.py" in paths
    assert "controller/paytables/fortune-1.toml" in paths
    assert "drivers/serial/framing.py" in paths
    assert paths == sorted(paths)


@pytest.mark.slow
def test_operations_manifest_a_changed_configuration_refuses_to_start(
    manifest_rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    config, database = manifest_rig
    assert approve(config, database) == 0
    assert main(["manifest", "check", "--config", str(config), "--db", str(database)]) == 0
    assert "match the manifest approved by mgr" in capsys.readouterr().out
    config.write_text(config.read_text().replace('bonus = "fortune-1"', 'bonus = "fortune-2"'))
    assert main(["manifest", "check", "--config", str(config), "--db", str(database)]) == 1
    assert "configuration file differs" in capsys.readouterr().out
    done = run_daemon(config)
    assert done.returncode == 1
    assert "start-up self-check failed: the configuration file differs" in done.stderr


@pytest.mark.slow
def test_operations_manifest_changed_software_refuses_to_start_and_names_the_file(
    manifest_rig: Rig,
) -> None:
    config, database = manifest_rig
    manifest = current(load_config(config).digest)
    tampered = [
        (path, "0" * 64 if path == "controller/ledger/pool.py" else digest)
        for path, digest in manifest.files
    ]
    with Journal(database) as journal:
        approvals = Site(journal, manifest_rig.keys)
        event = ManifestApproved(
            f"manifest-{uuid.uuid4()}",
            now(),
            manifest.version,
            "not-this-software",
            manifest.configuration,
            tampered,
            "mgr",
        )
        approvals.append(approvals.sign(event, "mgr"))
    done = run_daemon(config)
    assert done.returncode == 1
    assert "the software differs from the approved manifest" in done.stderr
    assert "file changed: controller/ledger/pool.py" in done.stderr
    with Journal(database) as journal:
        faults = [row["event"] for row in journal.rows() if row["kind"] == "fault"]
    assert any("self-check" in fault for fault in faults)


def test_approving_a_manifest_is_a_managers_action(
    manifest_rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    config, database = manifest_rig
    assert approve(config, database, key="sup1") == 1
    assert "sup1 (supervisor) may not approve-manifest" in capsys.readouterr().err
    with Journal(database) as journal:
        assert journal.state.manifest is None


def test_version_verbose_prints_the_digests(
    manifest_rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    config, _ = manifest_rig
    assert main(["version", "--verbose", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("jackpotd ")
    assert f"configuration sha256: {load_config(config).digest}" in out
    assert "controller/ledger/apply.py" in out
