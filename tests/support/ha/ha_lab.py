"""The three-node lab of ``deploy/ha/lab/``: its ports, its files, and copies of them for a test.

The lab runs every node on one machine, each service of each node on a port of its own
(deploy/ha/README.md, "The lab"). :data:`NODE_PORTS` and :data:`DOOR_PORTS` are that plan;
``tests/deploy/test_deploy_ha.py`` holds the shipped files to it, and :func:`render` turns the
shipped files into a test's: every lab port replaced by a free one, the lab's folder
``/var/lib/jackpotd-ha-lab`` by the test's own, Debian's PostgreSQL ``bin`` folder by the one
the tests use (``$POSTGRES_BIN``). The cluster a test starts therefore runs the shipped
settings, not a copy of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from support.drivers.mosquitto import free_port

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

REPO: Final = Path(__file__).resolve().parents[3]
HA: Final = REPO / "deploy" / "ha"
LAB: Final = HA / "lab"
PRODUCTION: Final = HA / "production"
LAB_ROOT: Final = "/var/lib/jackpotd-ha-lab"
DEBIAN_BIN: Final = "/usr/lib/postgresql/15/bin"
SCOPE: Final = "jackpot"
NAMESPACE: Final = "/service/"
NODES: Final = ("node1", "node2", "node3")
NODE_FILES: Final = ("etcd.yml", "patroni.yml", "mosquitto.conf", "jackpotd.toml")
POST_BOOTSTRAP: Final = "post-bootstrap.sh"


class _Ports:
    def all(self) -> tuple[int, ...]:
        """Every port, in field order."""
        return tuple(getattr(self, each.name) for each in fields(self))  # type: ignore[arg-type]


@dataclass(frozen=True)
class NodePorts(_Ports):
    """The ports of one lab node's services."""

    etcd_client: int
    etcd_peer: int
    postgres: int
    patroni: int
    mqtt: int
    web: int


@dataclass(frozen=True)
class DoorPorts(_Ports):
    """HAProxy's doors: to the primary's PostgreSQL, the leader's broker and web; its stats."""

    postgres: int
    mqtt: int
    web: int
    stats: int


Ports = TypeVar("Ports", NodePorts, DoorPorts)

NODE_PORTS: Final = {
    name: NodePorts(
        etcd_client=n * 10000 + 2379,
        etcd_peer=n * 10000 + 2380,
        postgres=5440 + n,
        patroni=8007 + n,
        mqtt=1883 + n,
        web=8080 + n,
    )
    for n, name in enumerate(NODES, start=1)
}
DOOR_PORTS: Final = DoorPorts(postgres=5440, mqtt=1880, web=8080, stats=7000)


def lab_ports() -> tuple[int, ...]:
    """Every port the lab uses."""
    return (*(port for ports in NODE_PORTS.values() for port in ports.all()), *DOOR_PORTS.all())


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports nobody listens on now."""
    chosen: list[int] = []
    while len(chosen) < count:
        if (port := free_port()) not in chosen:
            chosen.append(port)
    return chosen


def port_map() -> dict[int, int]:
    """Each lab port mapped to a free one."""
    ports = lab_ports()
    return dict(zip(ports, free_ports(len(ports)), strict=True))


def moved(ports: Ports, mapping: Mapping[int, int]) -> Ports:
    """``ports`` with each port mapped."""
    return type(ports)(*(mapping[port] for port in ports.all()))


_NUMBER: Final = re.compile(r"(?<![\d.])\d{4,5}(?![\d.])")


def render(text: str, mapping: Mapping[int, int], root: Path, postgres_bin: Path) -> str:
    """A lab file's text for a test: its ports mapped, its folders the test's own."""

    def port(found: re.Match[str]) -> str:
        number = int(found.group())
        return str(mapping.get(number, number))

    text = _NUMBER.sub(port, text)
    return text.replace(LAB_ROOT, str(root)).replace(DEBIAN_BIN, str(postgres_bin))


def write_lab(root: Path, mapping: Mapping[int, int], postgres_bin: Path) -> None:
    """The lab's files rendered under ``root``: ``nodeN/<file>``, ``haproxy.cfg`` and the script."""
    for node in NODES:
        (root / node).mkdir(parents=True, exist_ok=True)
        for name in NODE_FILES:
            rendered = render((LAB / node / name).read_text(), mapping, root, postgres_bin)
            (root / node / name).write_text(rendered)
    haproxy = render((LAB / "haproxy.cfg").read_text(), mapping, root, postgres_bin)
    (root / "haproxy.cfg").write_text(haproxy)
    script = root / POST_BOOTSTRAP
    script.write_text((HA / POST_BOOTSTRAP).read_text())
    script.chmod(0o755)


def lab_files(names: Iterable[str] = NODE_FILES) -> dict[str, dict[str, Path]]:
    """The shipped lab files by node and name."""
    return {node: {name: LAB / node / name for name in names} for node in NODES}
