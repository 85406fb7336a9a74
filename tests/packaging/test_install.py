"""docs/operations.md, "1. Install": the wheel, the sdist and the installation, as documented.

The section's commands are run as written, in a copy of the source tree and under a temporary
folder instead of ``/opt/jackpotd`` and ``/`` (the one change: ``/opt/jackpotd`` in a command
names the temporary prefix, and ``JACKPOTD_PREFIX`` and ``JACKPOTD_ROOT`` say where
deploy/install.sh installs). Then the controller's unit is read as installed and its command
line run: it must reach the start-up self-check, which refuses a configuration with no approved
manifest, as it refuses no configuration, in one line.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import stat
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Final

import pytest
from support.config_files import BASE, write
from support.deploy.source_tree import (
    ROOT,
    clean_environment,
    copy_tree,
    distributions,
    requirement_names,
)
from support.drivers.mosquitto import free_port
from support.runtime.controller_keys import KEY_FILE, KEY_LINE

from controller import __version__

pytestmark = pytest.mark.slow

PAGE: Final = ROOT / "docs" / "operations.md"
PREFIX: Final = "/opt/jackpotd"
TIMEOUT_S: Final = 300
UNITS: Final = ("jackpotd.service", "jackpotd-signer.service", "jackpotd-sign.service",
                "jackpotd-agent.service")  # fmt: skip


def install_blocks() -> list[str]:
    """The shell blocks of the section, in order."""
    section = PAGE.read_text(encoding="utf-8").split("## 1. Install\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.DOTALL)


def block(containing: str) -> str:
    (found,) = [text for text in install_blocks() if containing in text]
    return found


def run_block(text: str, cwd: Path, prefix: Path, root: Path) -> str:
    """The commands of ``text`` as written, with ``/opt/jackpotd`` naming ``prefix``."""
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text.replace(PREFIX, str(prefix))],
        cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        env=clean_environment(JACKPOTD_PREFIX=str(prefix), JACKPOTD_ROOT=str(root)),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def installed_line(prefix: Path, root: Path) -> str:
    """What deploy/install.sh says it installed (docs/operations.md shows it)."""
    return f"installed jackpotd {__version__} in {prefix}; units in {root}/etc/systemd/system"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A copy of the source tree after the section's ``make dist``, and the files copied."""
    tree = tmp_path_factory.mktemp("clone")
    files = copy_tree(tree)
    run_block(block("make dist"), tree, tree / "unused-prefix", tree / "unused-root")
    return tree, files


@pytest.fixture(scope="module")
def source(clone: tuple[Path, list[str]]) -> Path:
    return clone[0]


@pytest.fixture(scope="module")
def installed(source: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The host's commands run in a folder holding dist/'s two files: the prefix and the root."""
    host = tmp_path_factory.mktemp("host")
    for built in (source / "dist").iterdir():
        shutil.copy2(built, host / built.name)
    prefix, root = host / "opt-jackpotd", host / "root"
    out = run_block(block("deploy/install.sh"), host, prefix, root)
    assert installed_line(prefix, root) in out.splitlines()
    return prefix, root


def test_make_dist_puts_every_package_file_in_the_wheel_and_the_whole_tree_in_the_sdist(
    clone: tuple[Path, list[str]],
) -> None:
    source, files = clone
    dist = source / "dist"
    (wheel,) = dist.glob(f"paigow_jackpot-{__version__}-py3-none-any.whl")
    (sdist,) = dist.glob(f"paigow_jackpot-{__version__}.tar.gz")
    assert sorted(path.name for path in dist.iterdir()) == sorted([wheel.name, sdist.name])
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {name for name in archive.namelist() if ".dist-info/" not in name}
    # The paytables, the display page and the py.typed markers with the modules.
    packaged = {name for name in files if name.startswith(("controller/", "drivers/"))}
    assert in_wheel == packaged
    assert {"controller/web/page.html", "controller/paytables/progressive-1.toml"} <= in_wheel
    top = f"paigow_jackpot-{__version__}/"
    with tarfile.open(sdist) as archive:
        members = {member.name.removeprefix(top): member for member in archive.getmembers()}
    assert {name for name, member in members.items() if member.isfile()} == {*files, "PKG-INFO"}
    assert members["deploy/install.sh"].mode & stat.S_IXUSR


def test_the_host_s_install_runs_the_controller_s_unit_command_line_to_its_self_check(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    prefix, root = installed
    unit = (root / "etc/systemd/system/jackpotd.service").read_text()
    (line,) = [text for text in unit.splitlines() if text.startswith("ExecStart=")]
    configuration = tmp_path / "etc-jackpotd"
    configuration.mkdir()
    command = shlex.split(
        line.removeprefix("ExecStart=").replace("${CONFIGURATION_DIRECTORY}", str(configuration))
    )
    assert command[0] == str(prefix / "bin" / "python")
    assert Path(command[6]).is_file()  # the launcher, controller/__main__.py, where it says

    def start() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
            env=clean_environment(),
        )  # fmt: skip

    missing = start()
    assert missing.returncode == 1
    assert missing.stderr.splitlines() == [
        f"jackpotd: {configuration}/jackpotd.toml: (file): cannot read: No such file or directory"
    ]
    key = subprocess.run(
        [prefix / "bin" / "jackpotd", "key", "generate", "--out", configuration / KEY_FILE],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
        env=clean_environment(PYTHONDONTWRITEBYTECODE="1"),  # the environment stays as installed
    )  # fmt: skip
    assert "controller key written to" in key.stdout
    journal = f'journal = "journal.db"\n{KEY_LINE}'  # beside the configuration
    write(configuration, BASE.replace('id = "c1"\n', f'id = "c1"\n{journal}', 1)
          + f"\n[web]\nport = {free_port()}\n")  # fmt: skip
    unapproved = start()
    assert unapproved.returncode == 1
    (refusal,) = unapproved.stderr.splitlines()
    assert refusal.startswith(
        f"jackpotd: start-up self-check failed: no approved manifest in {configuration}/journal.db"
    )


def test_the_installed_units_pass_systemd_analyze_verify(installed: tuple[Path, Path]) -> None:
    prefix, root = installed
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: make test installs systemd"
    units = [root / "etc/systemd/system" / name for name in UNITS]
    for unit in units:
        assert PREFIX not in unit.read_text()  # every path names the installed environment
        assert str(prefix) in unit.read_text()
    done = subprocess.run(
        [analyze, "verify", *map(str, units)], cwd=root, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "jackpotd" in line] == []


def users(root: Path, database: str) -> dict[str, list[str]]:
    lines = (root / "etc" / database).read_text().splitlines()
    return {fields[0]: fields for fields in (line.split(":") for line in lines)}


def test_the_install_makes_the_users_and_the_folders_with_their_owners_and_modes(
    installed: tuple[Path, Path],
) -> None:
    _, root = installed
    passwd, group = users(root, "passwd"), users(root, "group")
    assert passwd["jackpotd"][5] == "/var/lib/jackpotd"
    assert "jackpotd-signer" in passwd
    assert "jackpotd" in group["dialout"][3].split(",")
    uid, gid = int(passwd["jackpotd"][2]), int(group["jackpotd"][2])
    for folder, owner, mode in (
        ("etc/jackpotd", (0, gid), 0o750),
        ("etc/jackpotd/tls", (0, gid), 0o750),
        ("var/lib/jackpotd", (uid, gid), 0o750),
        ("etc/credstore", (0, 0), 0o700),
    ):
        status = (root / folder).stat()
        assert ((status.st_uid, status.st_gid), stat.S_IMODE(status.st_mode)) == (owner, mode)
    assert (root / "usr/lib/sysusers.d/jackpotd.conf").read_bytes() == (
        ROOT / "systemd/jackpotd.sysusers"
    ).read_bytes()
    assert (root / "usr/lib/tmpfiles.d/jackpotd.conf").read_bytes() == (
        ROOT / "systemd/jackpotd.tmpfiles"
    ).read_bytes()


def test_the_documentation_is_installed_where_the_alerts_runbook_links_point(
    source: Path, installed: tuple[Path, Path]
) -> None:
    prefix, _ = installed
    alerts = (ROOT / "deploy/prometheus/alerts.yml").read_text()
    links = set(re.findall(r"file://(/\S+?\.md)#", alerts))
    assert links == {f"{PREFIX}/share/doc/jackpotd/operations.md"}
    (link,) = links
    installed_page = Path(link.replace(PREFIX, str(prefix)))
    assert installed_page.read_text() == (source / "docs/operations.md").read_text()


def test_the_environment_holds_the_runtime_dependencies_only_and_no_bytecode(
    installed: tuple[Path, Path],
) -> None:
    prefix, _ = installed
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = requirement_names([r for group in project["optional-dependencies"].values()
                                for r in group])  # fmt: skip
    present = distributions(prefix / "bin" / "python")
    assert {"paigow-jackpot", *requirement_names(project["dependencies"])} <= present
    assert present & (extras - requirement_names(project["dependencies"])) == set()
    site = next((prefix / "lib").glob("python3.*/site-packages"))
    assert list((site / "controller").rglob("*.pyc")) == []


def test_make_install_service_installs_again_over_an_installation(
    source: Path, installed: tuple[Path, Path]
) -> None:
    prefix, root = installed
    before = {name: (root / "etc/systemd/system" / name).read_bytes() for name in UNITS}
    wheel = next((source / "dist").glob("*.whl"))
    built = hashlib.sha256(wheel.read_bytes()).hexdigest()
    out = run_block(block("make install-service"), source, prefix, root)
    assert installed_line(prefix, root) in out.splitlines()
    # The same tree builds the same wheel; the second install changes no unit.
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == built
    assert {name: (root / "etc/systemd/system" / name).read_bytes() for name in UNITS} == before
