"""The manifest covers the running code: the distributions, dependencies included, and Python.

docs/operations.md, "Approving the software"; docs/faults.md, "A planted .pyc and an edited
dependency". Each test tampers with a copy put first on the import path (never the shared
virtual environment) and shows that the difference is named: a file added, removed or changed,
a distribution's version, a file in an install folder that belongs to no distribution, the
interpreter.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import sys
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import pytest
from support.deploy.software_rig import (
    approved_site,
    copy_distribution,
    copy_software,
    environment,
    jackpotd,
    pyc_bytes,
    site_packages,
    write_config,
)

from controller.ledger_journal.sqlite import Journal
from controller.security.installed import canonical
from controller.security.manifest import ApprovedManifest, Manifest, current

SERIAL = "serial/serialutil.py"


def approval(manifest: Manifest) -> ApprovedManifest:
    return ApprovedManifest(
        manifest.version, manifest.software, manifest.configuration, manifest.files, "mgr"
    )


def changes(now: Manifest, approved: ApprovedManifest) -> list[str]:
    """What differs beyond the project's own files.

    The in-process tests read the shared working tree twice, and others may edit it meanwhile;
    what they tamper with is outside it.
    """
    return [change for change in now.changes(approved) if not change.startswith("file ")]


def edit(path: Path) -> None:
    path.write_text(path.read_text() + "\nXONXOFF = True  # an edit\n")


def test_the_manifest_covers_every_distribution_on_the_import_path_and_the_interpreter() -> None:
    files = dict(current("").files)
    for dist in metadata.distributions():
        entry = files[f"dist:{canonical(dist.metadata['Name'])}"]
        assert entry.startswith(f"{dist.version} sha256:")
    for dependency in ("msgspec", "cryptography", "aiohttp", "pyserial", "prometheus-client"):
        assert f"dist:{dependency}" in files
    assert files["python:version"] == sys.version
    executable = Path(sys.executable).resolve()
    assert files["python:executable"].startswith(f"{executable} sha256:")
    assert any(key.startswith("python:stdlib ") for key in files)
    assert "controller/ledger/apply.py" in files


def test_manifest_check_names_an_edited_dependency_file(tmp_path: Path) -> None:
    site = copy_distribution("pyserial", site_packages(tmp_path))
    path = [str(site), *sys.path]
    approved = approval(current("", path))
    edit(site / SERIAL)
    now = current("", path)
    assert changes(now, approved) == [f"distribution pyserial 3.5: {SERIAL} changed"]
    assert now.record_problems() == [f"distribution pyserial: {SERIAL} changed (its RECORD)"]


def test_a_dependency_edited_along_with_its_record_is_still_named(tmp_path: Path) -> None:
    site = copy_distribution("pyserial", site_packages(tmp_path))
    path = [str(site), *sys.path]
    approved = approval(current("", path))
    edit(site / SERIAL)
    digest = base64.urlsafe_b64encode(hashlib.sha256((site / SERIAL).read_bytes()).digest())
    record = next(site.glob("pyserial-*.dist-info")) / "RECORD"
    lines = [
        f"{SERIAL},sha256={digest.rstrip(b'=').decode()},0"
        if line.startswith(f"{SERIAL},")
        else line
        for line in record.read_text().splitlines()
    ]
    record.write_text("\n".join(lines) + "\n")
    now = current("", path)
    assert now.record_problems() == []
    assert changes(now, approved) == [
        "distribution pyserial 3.5: its files changed (and its RECORD with them)"
    ]


def test_manifest_check_names_a_distribution_whose_version_changed(tmp_path: Path) -> None:
    site = copy_distribution("pyserial", site_packages(tmp_path))
    path = [str(site), *sys.path]
    approved = approval(current("", path))
    metadata_file = next(site.glob("pyserial-*.dist-info")) / "METADATA"
    metadata_file.write_text(metadata_file.read_text().replace("Version: 3.5", "Version: 3.6"))
    assert changes(current("", path), approved) == ["distribution pyserial: version 3.5 became 3.6"]


def install_by_hand(site: Path) -> None:
    """A distribution ``planted-dep`` 1.0 (one module) installed into ``site`` as pip would."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "planted_dep.py").write_text("VALUE = 1\n")
    info = site / "planted_dep-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-dep\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "planted_dep.py,,\nplanted_dep-1.0.dist-info/METADATA,,\nplanted_dep-1.0.dist-info/RECORD,,\n"
    )


@pytest.mark.slow
def test_manifest_check_names_a_distribution_added_or_removed(tmp_path: Path) -> None:
    site = site_packages(tmp_path)
    site.mkdir(parents=True)
    path = [str(site), *sys.path]
    without = approval(current("", path))
    install_by_hand(site)
    added = current("", path)
    assert changes(added, without) == ["distribution added: planted-dep 1.0"]
    (site / "planted_dep.py").unlink()
    shutil.rmtree(site / "planted_dep-1.0.dist-info")
    assert changes(current("", path), approval(added)) == ["distribution removed: planted-dep 1.0"]


def test_a_file_planted_in_an_install_folder_is_named(tmp_path: Path) -> None:
    # site runs each .pth file's import lines at every start of the interpreter.
    site = copy_distribution("pyserial", site_packages(tmp_path))
    path = [str(site), *sys.path]
    approved = approval(current("", path))
    (site / "zz-planted.pth").write_text("import os; os.system('id')\n")
    (site / "sitecustomize.py").write_text("print('planted')\n")
    assert changes(current("", path), approved) == [
        f"a file of no distribution added: {site / 'sitecustomize.py'}",
        f"a file of no distribution added: {site / 'zz-planted.pth'}",
    ]


def test_a_changed_interpreter_is_named() -> None:
    now = current("")
    files = dict(now.files)
    older = files | {"python:version": "3.11.2 (main, Mar 13 2023) [GCC 12.2.0]"}
    approved = replace(approval(now), software="older", files=tuple(sorted(older.items())))
    older_text = "approved 3.11.2 (main, Mar 13 2023) [GCC 12.2.0]"
    assert changes(now, approved) == [
        f"the interpreter's version changed: {older_text}, now {sys.version}"
    ]


@pytest.mark.slow
def test_a_sourceless_pyc_in_place_of_a_source_is_named_and_refused(tmp_path: Path) -> None:
    # With no cache read, the one bytecode Python still loads is a .pyc beside the sources
    # with no .py of its name: the manifest covers every file of the packages.
    software = copy_software(tmp_path / "software")
    config = write_config(tmp_path / "site")
    env = environment(software, service=True)
    database = approved_site(config, env)
    pool = software / "controller" / "ledger" / "pool.py"
    marker = tmp_path / "sourceless-code-ran"
    planted = f"{pool.read_text()}\nopen({str(marker)!r}, 'w').close()\n"
    pool.with_suffix(".pyc").write_bytes(pyc_bytes(planted, pool))
    pool.unlink()
    done = jackpotd("manifest", "check", "--config", str(config), "--db", str(database), env=env)
    assert marker.exists(), "Python loads it, cache or no cache"
    assert done.returncode == 1
    assert "file removed: controller/ledger/pool.py" in done.stdout
    assert "file added: controller/ledger/pool.pyc" in done.stdout
    done = jackpotd("run", "--config", str(config), env=env)
    assert done.returncode == 1
    assert "start-up self-check failed: the software differs" in done.stderr
    assert "file added: controller/ledger/pool.pyc" in done.stderr


@pytest.mark.slow
def test_run_refuses_an_edited_dependency_and_names_the_file(tmp_path: Path) -> None:
    software = copy_distribution("pyserial", copy_software(site_packages(tmp_path)))
    config = write_config(tmp_path / "site")
    env = environment(software, service=True)
    database = approved_site(config, env)
    done = jackpotd("manifest", "check", "--config", str(config), "--db", str(database), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    edit(software / SERIAL)
    done = jackpotd("manifest", "check", "--config", str(config), "--db", str(database), env=env)
    assert done.returncode == 1
    assert f"distribution pyserial 3.5: {SERIAL} changed" in done.stdout
    done = jackpotd("run", "--config", str(config), env=env)
    assert done.returncode == 1
    error = done.stderr.splitlines()[-1]
    assert error.startswith("jackpotd: start-up self-check failed: the software differs"), error
    assert f"distribution pyserial 3.5: {SERIAL} changed" in error
    assert "jackpotd manifest approve --config" in error
    with Journal(database) as journal:
        faults = [row["event"] for row in journal.rows() if row["kind"] == "fault"]
    assert any(SERIAL in fault for fault in faults)
