"""A planted ``.pyc`` never runs under the service (docs/faults.md "A planted .pyc").

Python runs ``__pycache__/<module>.cpython-311.pyc`` in place of the source whenever its header
names the source's modification time and size; it never compares the code. The service runs
with no bytecode cache (systemd/jackpotd.service, controller/security/bytecode.py), so the planted
code is never read: the controller's own, a dependency's, and the standard library's caches alike.
The tests plant into copies of the software put first on the import path, never into the
shared tree.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.deploy.software_rig import (
    ROOT,
    WAIT_S,
    approved_site,
    copy_distribution,
    copy_software,
    environment,
    jackpotd,
    plant_pyc,
    site_packages,
    unit_environment,
    write_config,
)

from controller.security.bytecode import ENVIRONMENT, NOWHERE, OPTIONS

PLANTED = """
import os, sys
with open(os.environ["PLANTED_MARKER"], "a") as marker:
    marker.write(__name__ + " ran planted bytecode\\n")
sys.exit(66)
"""


def plant(target: str, tmp_path: Path) -> tuple[Path, Path]:
    """The software copied, with a malicious ``.pyc`` planted for ``target``.

    prometheus_client is copied too: a dependency that every run imports. Returns the copy's
    folder and the file that the planted code writes if it runs.
    """
    software = copy_software(site_packages(tmp_path))
    copy_distribution("prometheus-client", software)
    plant_pyc(software / target, PLANTED)
    return software, tmp_path / "planted-code-ran"


TARGETS = [
    "controller/__init__.py",
    "controller/service/wiring.py",
    "prometheus_client/__init__.py",
]


@pytest.mark.parametrize("target", TARGETS)
def test_a_planted_pyc_runs_on_an_interpreter_that_reads_its_cache(
    target: str, tmp_path: Path
) -> None:
    # The attack as it was found: with a bytecode cache, the planted code runs.
    software, marker = plant(target, tmp_path)
    env = environment(software, service=False) | {"PLANTED_MARKER": str(marker)}
    done = jackpotd("version", env=env)
    assert done.returncode == 66, done.stderr
    module = target.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert marker.read_text() == f"{module} ran planted bytecode\n"


@pytest.mark.parametrize("target", TARGETS)
def test_a_planted_pyc_never_runs_under_the_service(target: str, tmp_path: Path) -> None:
    software, marker = plant(target, tmp_path)
    config = write_config(tmp_path / "site")
    env = environment(software, service=True) | {"PLANTED_MARKER": str(marker)}
    done = jackpotd("run", "--config", str(config), env=env, cwd=tmp_path)
    # The service's own code ran, to its refusal of a journal with no approved manifest.
    assert done.returncode == 1, done.stderr
    assert "start-up self-check failed: no approved manifest" in done.stderr
    assert not marker.exists()


@pytest.mark.slow
def test_jackpotd_run_started_by_hand_replaces_itself_with_an_interpreter_without_a_cache(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path / "site")
    env = environment(tmp_path, service=False)
    approved_site(config, env)
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "meter display and /metrics at" in line, line + (
            process.stderr.read() if process.stderr else ""
        )
        running = Path(f"/proc/{process.pid}/cmdline").read_text().split("\0")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert running[1 : 1 + len(OPTIONS)] == list(OPTIONS)
    launcher = str(ROOT / "controller" / "__main__.py")
    assert running[1 + len(OPTIONS) :][:3] == [launcher, "run", "--config"]
    assert process.returncode == 0


MODULES = """
import json, sys
import controller.cli, controller.service.wiring
import drivers.mqtt.sink, drivers.mqtt.source, drivers.serial.link, drivers.signs.serial_sign
cached = {name: module.__spec__.cached for name, module in list(sys.modules.items())
          if getattr(module, "__spec__", None) is not None and module.__spec__.cached}
print(json.dumps(cached))
"""


def test_every_module_the_service_imports_is_compiled_from_its_source(tmp_path: Path) -> None:
    software = copy_software(tmp_path / "software")
    done = subprocess.run(
        [sys.executable, "-c", MODULES], env=environment(software, service=True),
        capture_output=True, text=True, timeout=WAIT_S, check=True,
    )  # fmt: skip
    cached: dict[str, str] = json.loads(done.stdout)
    # The controller's modules, its dependencies' and the standard library's: each would be
    # looked for under /dev/null, where nothing can be.
    for name in (
        "controller.ledger.apply",
        "msgspec",
        "aiohttp",
        "cryptography",
        "json",
        "asyncio",
    ):
        assert name in cached, name
    assert {name for name, path in cached.items() if not path.startswith(NOWHERE + "/")} == set()
    assert list(software.rglob("__pycache__")) == [], "and it wrote no cache either"


def test_the_unit_runs_the_service_without_a_bytecode_cache() -> None:
    assert unit_environment() == ENVIRONMENT
    assert not Path(NOWHERE).exists()


def test_a_module_planted_in_the_working_folder_is_not_imported_by_the_service(
    tmp_path: Path,
) -> None:
    # The service's working folder is its state folder, which it may write, and `python -m`
    # puts the working folder first on the import path unless the path is safe.
    state = tmp_path / "state"
    state.mkdir()
    (state / "msgspec.py").write_text("raise SystemExit(66)\n")
    plain = jackpotd("version", env=environment(ROOT, service=False), cwd=state)
    assert plain.returncode == 66, "shadowed: the attack is real"
    service = jackpotd("version", env=environment(ROOT, service=True), cwd=state)
    assert service.returncode == 0, service.stderr
    assert service.stdout.startswith("jackpotd ")
