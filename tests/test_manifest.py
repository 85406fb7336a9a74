"""The start-up self-check of software and configuration (BRIEF §3; issue 7 "Hardening").

A manager approves the installed software and the configuration by digest; ``jackpotd run``
then refuses to start when either differs, and says which.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from controller.cli import main
from controller.config import load_config
from controller.events import ManifestApproved
from controller.journal import Journal
from controller.manifest import current, software_files

if TYPE_CHECKING:
    from pathlib import Path

PIN = "902114"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    config = tmp_path / "jackpotd.toml"
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c"\njournal = "journal.db"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n\n'
        f"[web]\nport = {free_port()}\n"
    )
    database = tmp_path / "journal.db"
    monkeypatch.setenv("JACKPOTD_NEW_PIN", PIN)
    monkeypatch.setenv("JACKPOTD_PIN", PIN)
    assert main(["operator", "add", "Morgan", "--role", "manager", "--db", str(database)]) == 0
    return config, database


def run_daemon(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_every_installed_file_is_in_the_manifest() -> None:
    paths = [path for path, _ in software_files()]
    assert "controller/ledger.py" in paths
    assert "controller/paytables/fortune-1.toml" in paths
    assert "drivers/serial/framing.py" in paths
    assert paths == sorted(paths)


def test_brief_3_a_changed_configuration_refuses_to_start(
    site: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    config, database = site
    assert (
        main(
            [
                "manifest",
                "approve",
                "--config",
                str(config),
                "--by",
                "Morgan",
                "--db",
                str(database),
            ]
        )
        == 0
    )
    assert main(["manifest", "check", "--config", str(config), "--db", str(database)]) == 0
    assert "match the manifest approved by Morgan" in capsys.readouterr().out
    config.write_text(config.read_text().replace('bonus = "fortune-1"', 'bonus = "fortune-2"'))
    assert main(["manifest", "check", "--config", str(config), "--db", str(database)]) == 1
    assert "configuration file differs" in capsys.readouterr().out
    done = run_daemon(config)
    assert done.returncode == 1
    assert "start-up self-check failed: the configuration file differs" in done.stderr


def test_brief_3_changed_software_refuses_to_start_and_names_the_file(
    site: tuple[Path, Path],
) -> None:
    config, database = site
    manifest = current(load_config(config).digest)
    tampered = [
        (path, "0" * 64 if path == "controller/pool.py" else digest)
        for path, digest in manifest.files
    ]
    with Journal(database) as journal:
        receipt = journal.append(
            ManifestApproved("m1", "2026-11-29T15:00:00Z", manifest.version, "not-this-software",
                             manifest.configuration, tampered, "Morgan"),
        )  # fmt: skip
        assert receipt.applied
    done = run_daemon(config)
    assert done.returncode == 1
    assert "the software differs from the approved manifest" in done.stderr
    assert "controller/pool.py" in done.stderr
    with Journal(database) as journal:
        faults = [row["event"] for row in journal.rows() if row["kind"] == "fault"]
    assert any("self-check" in fault for fault in faults)


def test_approving_a_manifest_is_a_managers_action(
    site: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config, database = site
    monkeypatch.setenv("JACKPOTD_NEW_PIN", "555666")
    assert (
        main(
            [
                "operator",
                "add",
                "Dana",
                "--role",
                "supervisor",
                "--by",
                "Morgan",
                "--db",
                str(database),
            ]
        )
        == 0
    )
    monkeypatch.setenv("JACKPOTD_PIN", "555666")
    assert (
        main(
            ["manifest", "approve", "--config", str(config), "--by", "Dana", "--db", str(database)]
        )
        == 1
    )
    assert "may not approve-manifest" in capsys.readouterr().err


def test_version_verbose_prints_the_digests(
    site: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    config, _ = site
    assert main(["version", "--verbose", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("jackpotd ")
    assert f"configuration sha256: {load_config(config).digest}" in out
    assert "controller/ledger.py" in out
