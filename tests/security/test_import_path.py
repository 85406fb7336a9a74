"""Nothing on the import path runs before the self-check has seen it (docs/security.md 2.4).

The service's interpreter starts as systemd/jackpotd.service starts it: isolated and without
``site`` (``-I -S``), on the launcher ``controller/__main__.py``. Each attack is made against a
real started process: a ``sitecustomize.py`` and a package shadowing a dependency on
``PYTHONPATH`` (which the service never reads), and a ``.pth`` file planted in an install
folder of a virtual environment of the test's own, whose import line would write a marker file:
the marker is never written, and ``jackpotd manifest check`` and ``jackpotd run`` refuse,
naming the file. Each attack is first shown to work on an interpreter started the usual way.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.deploy.software_rig import ROOT, UNIT, WAIT_S, copy_software, environment, write_config
from support.ledger.approvals import Site, now

from controller.config.load import load_config
from controller.events import ManifestApproved
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from collections.abc import Mapping

SHARED_SITE = Path(next(entry for entry in sys.path if entry.endswith("site-packages")))


@dataclass(frozen=True)
class Software:
    """A virtual environment of the test's own and a copy of the controller to launch.

    Its install folder names the shared one's in a path line, so the dependencies are found
    (the shared one's .pth files are not read: it is no install folder of this environment),
    and the working tree, which others edit meanwhile, is not on its path.
    """

    python: Path
    root: Path

    @property
    def site(self) -> Path:
        """The environment's install folder."""
        return next((self.python.parent.parent / "lib").glob("python3*/site-packages"))


@pytest.fixture
def software(tmp_path: Path) -> Software:
    folder = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=WAIT_S
    )
    made = Software(folder / "bin" / "python", copy_software(tmp_path / "software"))
    (made.site / "shared.pth").write_text(f"{SHARED_SITE}\n")
    return made


def unit_command(software: Software) -> list[str]:
    """The unit's ExecStart up to the command, for the test's interpreter and launcher."""
    line = next(line for line in UNIT.read_text().splitlines() if line.startswith("ExecStart="))
    words = shlex.split(line.removeprefix("ExecStart="))
    assert words[0] == "/opt/jackpotd/bin/python"
    assert words[-3:-1] == ["run", "--config"], words
    launcher = words[-4]
    assert launcher.endswith("/site-packages/controller/__main__.py"), launcher
    return [str(software.python), *words[1:-4], str(software.root / "controller/__main__.py")]


def launched(
    software: Software, *argv: str, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """``jackpotd ARGV`` started as the unit starts the service, to its end."""
    return subprocess.run(
        [*unit_command(software), *argv], capture_output=True, text=True, timeout=WAIT_S,
        check=False, env=dict(env), cwd=ROOT, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def serves(software: Software, config: Path, env: Mapping[str, str]) -> str:
    """Start ``jackpotd run`` as the unit does; once it serves, stop it. Its first line."""
    process = subprocess.Popen(
        [*unit_command(software), "run", "--config", str(config)],
        env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.stderr is not None
    assert "meter display and /metrics at" in line, line + process.stderr.read()
    assert process.returncode == 0
    return line


def planted_sitecustomize(folder: Path, marker: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    return folder


def planted_msgspec(folder: Path, marker: Path) -> Path:
    """A ``msgspec`` package that shadows the dependency: it writes the marker and fails."""
    (folder / "msgspec").mkdir(parents=True)
    (folder / "msgspec" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write('ran\\n')\nraise SystemExit(66)\n"
    )
    return folder


def test_the_service_is_started_isolated_without_site_on_the_launcher(
    software: Software,
) -> None:
    command = unit_command(software)
    assert command[1:6] == ["-I", "-S", "-B", "-X", "pycache_prefix=/dev/null/jackpotd-pycache"]


def approve_as_launched(software: Software, config: Path) -> Path:
    """The configuration's journal, approved, with the manifest the launcher sees."""
    env = environment(software.root, service=False)
    done = launched(software, "version", "--json", "--verbose", "--config", str(config), env=env)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    database = load_config(config).controller.journal
    assert isinstance(database, Path)  # a journal file, not a PostgreSQL URL
    with Journal(database) as journal:
        site = Site.create(journal)
        site.approve(load_config(config))
        event = ManifestApproved(
            f"manifest-{uuid.uuid4()}", now(), printed["version"], printed["software"],
            printed["configuration"], sorted(printed["files"].items()), "mgr",
        )  # fmt: skip
        site.append(site.sign(event, "mgr"))
    return database


def test_a_sitecustomize_on_pythonpath_never_runs_in_the_service(
    software: Software, tmp_path: Path
) -> None:
    marker = tmp_path / "sitecustomize-ran"
    env = environment(planted_sitecustomize(tmp_path / "evil", marker), service=False)
    subprocess.run(
        [software.python, "-c", "pass"], env=env, timeout=WAIT_S, check=True, cwd=tmp_path
    )
    assert marker.read_text() == "ran\n", "the attack is real: site imports it at start-up"
    marker.unlink()
    config = write_config(tmp_path / "site")
    database = approve_as_launched(software, config)
    serves(software, config, env)
    check = ["manifest", "check", "--config", str(config), "--db", str(database)]
    done = launched(software, *check, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists()


def test_a_package_shadowing_a_dependency_on_pythonpath_is_never_imported(
    software: Software, tmp_path: Path
) -> None:
    marker = tmp_path / "shadow-ran"
    env = environment(planted_msgspec(tmp_path / "evil", marker), service=False)
    plain = subprocess.run(
        [software.python, "-c", "import msgspec"], env=env, timeout=WAIT_S, check=False,
        cwd=tmp_path,
    )  # fmt: skip
    assert plain.returncode == 66, "the attack is real: PYTHONPATH comes first"
    marker.unlink()
    config = write_config(tmp_path / "site")
    approve_as_launched(software, config)
    serves(software, config, env)
    assert not marker.exists()


def test_the_manifest_names_every_entry_of_the_service_import_path(software: Software) -> None:
    env = environment(software.root, service=False)
    files = json.loads(launched(software, "version", "--json", "--verbose", env=env).stdout)[
        "files"
    ]
    shown = subprocess.run(
        [*unit_command(software)[:-1], "-c", "import sys; print(sys.path)"],
        capture_output=True, text=True, timeout=WAIT_S, check=True,
    )  # fmt: skip
    stdlib = eval(shown.stdout)  # noqa: S307 - a list this interpreter printed
    positions = {
        key.removeprefix("import:"): int(value.split(" ")[0])
        for key, value in files.items()
        if key.startswith("import:")
    }
    entries = sorted(positions, key=positions.__getitem__)
    assert entries == [*stdlib, str(software.root), str(software.site), str(SHARED_SITE)]
    assert files[f"import:{software.site}"] == f"{len(stdlib) + 1} install folder"
    assert files[f"import:{SHARED_SITE}"] == f"{len(stdlib) + 2} folder"
    assert f"pth:{software.site / 'shared.pth'}" in files


def test_the_self_check_imports_nothing_but_the_standard_library_and_itself(
    software: Software,
) -> None:
    code = (
        f"import sys; sys.path.append({str(software.root)!r})\n"
        "from controller.security.manifest import current\n"
        "current('')\n"
        "print(sorted({getattr(m, '__file__', None) or '' for m in list(sys.modules.values())}))"
    )
    done = subprocess.run(
        [*unit_command(software)[:-1], "-c", code],
        capture_output=True, text=True, timeout=WAIT_S, check=True,
    )  # fmt: skip
    files = [file for file in eval(done.stdout) if file]  # noqa: S307 - printed by the child
    stdlib = str(Path(json.__file__).parent.parent)
    own = str(software.root / "controller" / "security")
    outside = [file for file in files if not file.startswith((stdlib, own))]
    # The packages' own __init__ (docstrings only): the manifest lists their files.
    packages = [str(software.root / name / "__init__.py") for name in ("controller", "drivers")]
    assert outside == packages


def test_a_planted_pth_never_runs_and_check_and_run_refuse_naming_it(
    software: Software, tmp_path: Path
) -> None:
    config = write_config(tmp_path / "site")
    database = approve_as_launched(software, config)
    env = environment(software.root, service=False)
    check = ["manifest", "check", "--config", str(config), "--db", str(database)]
    clean = launched(software, *check, env=env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    marker = tmp_path / "pth-ran"
    planted = software.site / "zz-planted.pth"
    planted.write_text(f"import os; open({str(marker)!r}, 'a').write('ran\\n')\n")

    done = launched(software, *check, env=env)
    assert done.returncode == 1
    assert f"a .pth file added: {planted}" in done.stdout.splitlines()
    assert not marker.exists()
    done = launched(software, "run", "--config", str(config), env=env)
    assert done.returncode == 1
    assert "start-up self-check failed: the software differs" in done.stderr
    assert f"a .pth file added: {planted}" in done.stderr
    assert not marker.exists(), "the .pth never ran"
    with Journal(database) as journal:
        faults = [row["event"] for row in journal.rows() if row["kind"] == "fault"]
    assert any(str(planted) in fault for fault in faults)

    subprocess.run([software.python, "-c", "pass"], check=True, timeout=WAIT_S, env=env)
    # (site runs a virtual environment's .pth import lines twice.)
    assert marker.exists(), "the attack is real: site runs it at start-up"


def test_an_approved_pth_runs_only_once_the_check_has_passed(
    software: Software, tmp_path: Path
) -> None:
    marker = tmp_path / "pth-ran"
    (software.site / "approved.pth").write_text(
        f"import os; open({str(marker)!r}, 'a').write('ran\\n')\n"
    )
    config = write_config(tmp_path / "site")
    approve_as_launched(software, config)
    assert not marker.exists(), "hashing it never runs it"
    approved = config.read_text()
    config.write_text(approved.replace('bonus = "fortune-1"', 'bonus = "fortune-2"'))
    env = environment(software.root, service=False)
    done = launched(software, "run", "--config", str(config), env=env)
    assert done.returncode == 1
    assert "the configuration file differs" in done.stderr
    assert not marker.exists(), "a difference anywhere: no .pth code runs"
    config.write_text(approved)
    serves(software, config, env)
    assert marker.read_text() == "ran\n", "approved: its import line ran, once"
