"""deploy/wide-area/lab as shipped: make-lab.sh's lab in a test's folder, and central's broker.

:func:`make_lab` runs the shipped ``make-lab.sh`` (with deploy/mosquitto/make-secrets.sh under
it, openssl and mosquitto_passwd) into a folder, with ``jackpotd`` this checkout's controller
(a wrapper running ``python -m controller``). :func:`on_free_ports` moves an installed lab off
the shipped ports (two labs, or a lab and another test, may run at once); nothing else of the
files is changed. :func:`start_central_broker` starts central's mosquitto on the installed
configuration and ACL, its listener on a free port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from support.drivers.mosquitto import Broker, free_port
from support.drivers.shipped_broker import Credentials, substitute, tool

REPO: Final = Path(__file__).resolve().parents[3]
KIT: Final = REPO / "deploy" / "wide-area"
LAB: Final = KIT / "lab"
CONTROLLERS: Final = ("central", "atlantic", "boardwalk")
SITES: Final = ("atlantic", "boardwalk")
CENTRAL_PORT: Final = 8893
FLOOR_PORT: Final = 1893
WEB_PORTS: Final = {"central": 8090, "atlantic": 8091, "boardwalk": 8092}


def shipped(name: str) -> dict[str, object]:
    """A controller's configuration as shipped (TOML)."""
    return tomllib.loads((LAB / name / "jackpotd.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class InstalledLab:
    """What make-lab.sh installed in ``directory``."""

    directory: Path
    jackpotd: Path
    """The ``jackpotd`` command it was made with (this checkout's)."""

    def config(self, name: str) -> Path:
        """A controller's installed ``jackpotd.toml``."""
        return self.directory / name / "jackpotd.toml"

    @property
    def credentials(self) -> Credentials:
        """Central's broker credentials (make-secrets.sh's)."""
        return Credentials(self.directory / "secrets")

    def public_key(self, name: str) -> str:
        """A controller's public key, as ``jackpotd key generate`` wrote it."""
        return (self.directory / name / "controller.pub").read_text(encoding="utf-8").strip()

    def environment(self) -> dict[str, str]:
        """The lab scripts' environment: this checkout's jackpotd, the tools."""
        return {
            **os.environ,
            "JACKPOTD": str(self.jackpotd),
            "MOSQUITTO_PASSWD": tool("mosquitto_passwd"),
            "PATH": f"{Path(tool('mosquitto')).parent}:{os.environ.get('PATH', '')}",
        }


def make_lab(directory: Path) -> tuple[InstalledLab, subprocess.CompletedProcess[str]]:
    """Run the shipped make-lab.sh into ``directory`` (its result not checked)."""
    tool("openssl")
    directory.mkdir(parents=True, exist_ok=True)
    jackpotd = directory.parent / f"{directory.name}-jackpotd"
    jackpotd.write_text(
        f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m controller "$@"\n',
        encoding="utf-8",
    )
    jackpotd.chmod(0o755)
    lab = InstalledLab(directory, jackpotd)
    made = subprocess.run(
        ["/bin/sh", str(LAB / "make-lab.sh"), str(directory)],
        check=False,
        capture_output=True,
        text=True,
        env=lab.environment(),
        timeout=120,
    )
    return lab, made


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def on_free_ports(lab: InstalledLab) -> dict[str, int]:
    """Move the installed lab's brokers and web pages to free ports; the ports, by name."""
    ports = {"central-broker": free_port(), "floor-broker": free_port()}
    ports |= {name: free_port() for name in CONTROLLERS}
    for name, old in (("central", CENTRAL_PORT), ("floor", FLOOR_PORT)):
        new = ports[f"{name}-broker"]
        _replace(lab.directory / name / "mosquitto.conf", f"listener {old} ", f"listener {new} ")
    for name in CONTROLLERS:
        config = lab.config(name)
        _replace(config, f"port = {WEB_PORTS[name]}\n", f"port = {ports[name]}\n")
        _replace(config, f"port = {CENTRAL_PORT}\n", f"port = {ports['central-broker']}\n")
        if name != "central":
            _replace(config, f"port = {FLOOR_PORT}\n", f"port = {ports['floor-broker']}\n")
    return ports


def start_central_broker(lab: InstalledLab, directory: Path) -> Broker:
    """Central's mosquitto on the installed configuration and ACL, on a free port."""
    broker = Broker(directory)
    directory.mkdir(parents=True, exist_ok=True)
    installed = (lab.directory / "central" / "mosquitto.conf").read_text(encoding="utf-8")
    broker.config.write_text(
        substitute(
            installed,
            {
                "listener": f"{broker.port} 127.0.0.1",
                "persistence_location": f"{directory}/",
            },
        )
    )
    broker.start()
    return broker
