"""The WAN lab on loopback: central and two properties, each a real ``jackpotd run``.

* **Credentials**: the shipped deploy/mosquitto/make-secrets.sh (a CA, central's broker
  certificate for ``127.0.0.1``, a client certificate per property), as the broker
  configuration tests make them (:func:`support.drivers.shipped_broker.make_secrets`).
* **Central**: its mosquitto, the wide-area broker, with a plain listener for central's own
  connections and a TLS listener (client certificates required) for the properties; its
  ``jackpotd run`` on a SQLite journal, linking both properties.
* **Each property**: its own mosquitto for its tables, a :class:`support.ha.tcp_proxy.LinkProxy`
  in front of central's TLS listener (its WAN: ``cut("stall" | "reset")`` and ``heal()``),
  and its ``jackpotd run`` with ``[wide_area.central]`` pointing at the proxy.

Every journal is readied as an operator readies one before the first start: a signed site,
the configuration approved and the software's manifest approved by a manager
(:func:`support.runtime.floor.approved_site`); ``jackpotd run`` refuses anything else. Every process
is stopped, and killed by its process group if it does not stop, whatever happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from support.drivers.mosquitto import Broker, free_port
from support.drivers.shipped_broker import make_secrets
from support.ha.ha_processes import Service
from support.ha.tcp_proxy import LinkProxy
from support.runtime.controller_keys import write_controller_key
from support.runtime.floor import approved_site
from support.widearea.wan.config import (
    HOST,
    SITES,
    CentralFile,
    PropertyFile,
    TlsFiles,
    central_broker_conf,
    local_table,
    wide_tables,
    write,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT: Final = Path(__file__).resolve().parents[4]
START_S: Final = 60.0
"""The longest a ``jackpotd run`` may take to answer on its web port."""
STOP_S: Final = 20.0


@dataclass(frozen=True)
class LabSettings:
    """The link's timing and the size of each property's floor."""

    tables: int = 2
    """Tables on central's pool at each property (and one more on its local pool)."""
    grace_s: float = 5.0
    """A property's ``[wide_area] grace_s``: the shortest the configuration allows."""
    heartbeat_s: float = 1.0
    """Central's ``[wide_area] heartbeat_s``."""


@dataclass
class Controller:
    """One ``jackpotd run``: its folder, its file, its process, its web port."""

    name: str
    folder: Path
    config: Path
    service: Service
    web_port: int

    @property
    def journal(self) -> Path:
        """Its SQLite journal."""
        return self.folder / "journal.db"

    def answers(self) -> bool:
        """Whether its web port answers ``GET /leader`` with 200."""
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.web_port}/leader", timeout=2) as r:
                return bool(r.status == 200 and json.loads(r.read()))
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def metric(self, name: str) -> float | None:
        """The first sample of ``name`` on its ``/metrics``; None if it has none (or no answer)."""
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.web_port}/metrics", timeout=2) as r:
                text = r.read().decode()
        except (urllib.error.URLError, OSError):
            return None
        for line in text.splitlines():
            if line.startswith(name) and line[len(name) : len(name) + 1] in {" ", "{"}:
                return float(line.rsplit(" ", 1)[1])
        return None

    def log(self, tail: int = 4000) -> str:
        """The tail of its log."""
        return f"--- {self.name} ({self.service.log_file}):\n{self.service.log()[-tail:]}"


@dataclass
class Property:
    """A property: its controller, its tables' broker, its WAN proxy, its tables."""

    site: str
    controller: Controller
    broker: Broker
    wan: LinkProxy
    tables: list[str]
    """Its tables on central's pool."""
    local: str
    """Its table on its local pool."""


@dataclass
class Lab:
    """Central and the properties, running."""

    directory: Path
    settings: LabSettings
    central: Controller
    central_broker: Broker
    properties: dict[str, Property] = field(default_factory=dict)

    def controllers(self) -> list[Controller]:
        """Central's controller, then each property's."""
        return [self.central, *(p.controller for p in self.properties.values())]

    def check_alive(self) -> None:
        """Raise, with its log, if any controller or broker has ended."""
        for controller in self.controllers():
            if not controller.service.running():
                raise AssertionError(f"{controller.name} ended\n{controller.log()}")
        for broker in [self.central_broker, *(p.broker for p in self.properties.values())]:
            if not broker.running():
                raise AssertionError(f"mosquitto ended:\n{broker.log()[-3000:]}")

    def logs(self) -> str:
        """Every controller's log tail, for a failure's message."""
        return "\n".join(controller.log() for controller in self.controllers())


def _service(name: str, config: Path) -> Service:
    return Service(
        f"jackpotd {name}",
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        config.parent / "jackpotd.log",
        environment={"PYTHONPATH": str(ROOT)},
    )


def _tls(directory: Path, site: str) -> TlsFiles:
    clients = directory / "clients"
    return TlsFiles(directory / "ca.crt", clients / f"{site}.crt", clients / f"{site}.key")


def _until_answering(lab: Lab) -> None:
    deadline = time.monotonic() + START_S
    waiting = list(lab.controllers())
    while waiting:
        lab.check_alive()
        waiting = [controller for controller in waiting if not controller.answers()]
        if waiting and time.monotonic() > deadline:
            raise AssertionError(f"not answering after {START_S:g} s\n{lab.logs()}")
        if waiting:
            time.sleep(0.1)  # a process tells nobody when it listens: look again soon


@contextlib.contextmanager
def running_lab(directory: Path, settings: LabSettings) -> Iterator[Lab]:
    """Central and both properties started and answering; everything stopped after."""
    secrets = directory / "secrets"
    made = make_secrets(secrets, *SITES)
    assert made.returncode == 0, made.stderr
    central_folder = directory / "central"
    broker = Broker(central_folder / "mosquitto")
    tls_port = free_port()
    broker.directory.mkdir(parents=True)
    server = (
        secrets / "ca.crt",
        secrets / "broker" / "server.crt",
        secrets / "broker" / "server.key",
    )
    user = pwd.getpwuid(os.getuid()).pw_name
    broker.config.write_text(
        central_broker_conf(broker.directory, broker.port, tls_port, server, user)
    )
    started: list[Broker | LinkProxy | Service] = []
    try:
        broker.start()
        started.append(broker)
        central_key = write_controller_key(central_folder)
        properties: dict[str, Property] = {}
        site_keys: dict[str, str] = {}
        for site in SITES:
            folder = directory / site
            own = Broker(folder / "mosquitto")
            own.start()
            started.append(own)
            wan = LinkProxy(HOST, tls_port)
            wan.start()
            started.append(wan)
            site_keys[site] = write_controller_key(folder).public_key
            text = PropertyFile(
                site, settings.tables, own.port, wan.port, central_key.public_key,
                _tls(secrets, site), settings.grace_s, free_port(),
            )  # fmt: skip
            config = write(folder, text.text(folder))
            controller = Controller(site, folder, config, _service(site, config), text.web_port)
            properties[site] = Property(
                site, controller, own, wan, wide_tables(site, settings.tables),
                local_table(site, settings.tables),
            )  # fmt: skip
        central_text = CentralFile(broker.port, site_keys, settings.heartbeat_s, free_port())
        config = write(central_folder, central_text.text(central_folder))
        central = Controller(
            "central", central_folder, config, _service("central", config), central_text.web_port
        )
        lab = Lab(directory, settings, central, broker, properties)
        for controller in lab.controllers():
            approved_site(controller.config)
        for controller in lab.controllers():
            controller.service.start()
            started.append(controller.service)
        _until_answering(lab)
        yield lab
    finally:
        for part in reversed(started):
            with contextlib.suppress(Exception):
                if isinstance(part, Service):
                    part.stop(STOP_S)
                else:
                    part.close()
