"""Copies of the installed software to tamper with, for the self-check's tests.

The tests never touch the shared working tree or the virtual environment: they copy the
controller's packages (and, where a dependency is the target, that distribution's files, as
its RECORD lists them) into a temporary folder that goes first on the import path
(``PYTHONPATH``), and tamper with the copy. ``plant_pyc`` writes bytecode the way an attacker
would: code that is not the source's, under a header that names the source's modification
time and size, which is all Python checks before it runs a cached ``.pyc``.

``approved_site(config)`` readies a configuration's journal for ``jackpotd run``: a signed
site, the configuration approved, and the manifest of what the daemon will see, signed by the
manager (for a copy of the software on a child's path, as ``jackpotd version --json
--verbose`` prints it in a child with the same environment).
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from controller.config.load import load_config
from controller.events import ManifestApproved
from controller.ledger_journal.sqlite import Journal
from controller.security.manifest import current
from support.ledger.approvals import J, Site, now
from support.runtime.controller_keys import KEY_LINE, write_controller_key

if TYPE_CHECKING:
    from collections.abc import Mapping

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "systemd" / "jackpotd.service"
WAIT_S = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(folder: Path) -> Path:
    """A small site: one simulated table, the display on a free port, the journal and key."""
    write_controller_key(folder)
    config = folder / "jackpotd.toml"
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c"\njournal = "journal.db"\n{KEY_LINE}\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n\n'
        f"[web]\nport = {free_port()}\n"
    )
    return config


def copy_software(folder: Path) -> Path:
    """The ``controller`` and ``drivers`` packages, sources only, copied into ``folder``."""
    for package in ("controller", "drivers"):
        shutil.copytree(
            ROOT / package, folder / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return folder


def site_packages(folder: Path) -> Path:
    """A virtual environment's install folder under ``folder`` (its scripts go in ``bin``)."""
    return (
        folder
        / "venv"
        / "lib"
        / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        / "site-packages"
    )


def copy_distribution(name: str, site: Path) -> Path:
    """An installed distribution's files, as its RECORD lists them, copied into ``site``.

    ``site`` is an install folder from :func:`site_packages`: the scripts a RECORD lists as
    ``../../../bin/...`` land in the copy's own ``bin``.
    """
    dist = metadata.distribution(name)
    for file in dist.files or ():
        if "__pycache__" in file.parts:
            continue
        target = Path(os.path.normpath(site / file))
        assert target.is_relative_to(site.parent.parent.parent), target
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(str(dist.locate_file(file))), target)
    return site


def pyc_bytes(code: str, source: Path) -> bytes:
    """``code`` compiled, under the header of a timestamp ``.pyc`` of ``source`` as it is."""
    stat = source.stat()
    header = (
        importlib.util.MAGIC_NUMBER
        + (0).to_bytes(4, "little")  # flags 0: a timestamp pyc, not a hash-based one
        + (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    return header + marshal.dumps(compile(code, str(source), "exec"))


def plant_pyc(source: Path, code: str) -> Path:
    """A ``.pyc`` of ``code`` in ``source``'s cache, under a header of ``source``'s mtime, size."""
    pyc = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(pyc_bytes(code, source))
    return pyc


def unit_environment() -> dict[str, str]:
    """The ``Environment=`` settings of systemd/jackpotd.service."""
    lines = UNIT.read_text().splitlines()
    settings = [
        line.removeprefix("Environment=") for line in lines if line.startswith("Environment=")
    ]
    return dict(setting.split("=", 1) for setting in settings)


def environment(path: Path, *, service: bool) -> dict[str, str]:
    """This environment without Python's settings and with ``path`` first on the import path.

    With ``service``, the unit's settings are added, as systemd starts the daemon.
    """
    clean = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    return clean | {"PYTHONPATH": str(path)} | (unit_environment() if service else {})


def jackpotd(
    *argv: str, env: Mapping[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m controller ARGV`` to its end, by default in the folder of ``PYTHONPATH``.

    (``python -m`` puts its working folder first on the import path, unless the path is safe.)
    """
    cwd = cwd or Path(env["PYTHONPATH"])
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True, text=True, timeout=WAIT_S, check=False, env=dict(env), cwd=cwd,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def seen_manifest(
    config: Path, env: Mapping[str, str] | None = None
) -> tuple[str, str, str, list[tuple[str, str]]]:
    """The version, software digest, configuration digest and entries of what is installed.

    With ``env``, what a child with that environment sees (a copy of the software on its
    ``PYTHONPATH``), as ``jackpotd version --json --verbose`` prints it; else this process's
    view (the working tree and the virtual environment, as a child ``jackpotd run`` sees them).
    """
    if env is None:
        manifest = current(load_config(config).digest)
        return manifest.version, manifest.software, manifest.configuration, list(manifest.files)
    done = jackpotd("version", "--json", "--verbose", "--config", str(config), env=env)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    files = sorted(printed["files"].items())
    return printed["version"], printed["software"], printed["configuration"], files


def approve_manifest(site: Site[J], config: Path, env: Mapping[str, str] | None = None) -> None:
    """Journal, signed by the manager, the manifest of what is installed (:func:`seen_manifest`)."""
    event = ManifestApproved(f"manifest-{uuid.uuid4()}", now(), *seen_manifest(config, env), "mgr")
    site.append(site.sign(event, "mgr"))


def approved_site(config: Path, env: Mapping[str, str] | None = None) -> Path:
    """The configuration's journal, approved for ``jackpotd run``; its path.

    A signed site (:class:`approvals.Site`), the configuration approved and the manifest of
    what is installed (:func:`approve_manifest`, with ``env`` as there).
    """
    database = load_config(config).controller.journal
    assert isinstance(database, Path), database  # a file: the rigs' configurations name one
    with Journal(database) as journal:
        site = Site.create(journal)
        site.approve(load_config(config))
        approve_manifest(site, config, env)
    return database


def serves_and_stops(config: Path, cwd: Path) -> None:
    """``jackpotd run --config CONFIG`` starts serving, and stops with status 0 on SIGTERM."""
    started = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
    )  # fmt: skip
    try:
        assert started.stdout is not None
        line = started.stdout.readline()
        assert "meter display and /metrics at" in line, line
        started.send_signal(signal.SIGTERM)
        started.wait(timeout=WAIT_S)
    finally:
        if started.poll() is None:
            started.kill()
    assert started.returncode == 0
