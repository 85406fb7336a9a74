"""deploy/ha/: the shipped three-node files agree with each other and with what docs/ha.md says.

The tests read the files as their tools read them (YAML, HAProxy's own check, the
controller's configuration loader) and hold them to the lab's port plan
(tests/support/ha/ha_lab.py) and to the settings docs/ha.md promises: Patroni in strict
synchronous mode with no lag allowed on failover, PostgreSQL with ``fsync`` and
``synchronous_commit`` on, the watchdog required in production and off in the lab.
tests/deploy/test_deploy_ha_cluster.py runs the lab's files.
"""

from __future__ import annotations

import re
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from support.ha.ha_cluster import BINARIES
from support.ha.ha_lab import DOOR_PORTS, LAB, NODE_PORTS, NODES, PRODUCTION, SCOPE, lab_ports

from controller.config.load import load_config
from controller.journal.location import DatabaseUrl

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.schema import Config

PRODUCTION_HOSTS = {"node1": "10.20.0.11", "node2": "10.20.0.12", "node3": "10.20.0.13"}


def patroni(folder: Path, node: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((folder / node / "patroni.yml").read_text())
    return loaded


def etcd(folder: Path, node: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((folder / node / "etcd.yml").read_text())
    return loaded


def haproxy_backends(config: Path) -> dict[str, list[str]]:
    """Each backend's lines (``backend NAME`` up to the next section)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in config.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if not line[0].isspace():
            current = sections.setdefault(words[1], []) if words[0] == "backend" else None
        elif current is not None:
            current.append(" ".join(words))
    return sections


def host_port(address: str) -> tuple[str, int]:
    host, port = address.rsplit("://", maxsplit=1)[-1].rsplit(":", 1)
    return host, int(port)


CREDENTIALS = ("tls/ca.crt", "tls/jackpotd.crt")


def jackpotd(folder: Path, node: str, credentials: Path) -> Config:
    """A node's controller configuration as the controller loads it.

    The production files name the broker's certificates under /etc/jackpotd/, which the loader
    requires to exist: the test's stand-ins are put in their place. The secrets are systemd
    credentials (``${CREDENTIALS_DIRECTORY}/...``), kept unchecked outside the service;
    tests/deploy/test_deploy_credentials.py holds them to the unit's ``LoadCredential=``.
    """
    for name in CREDENTIALS:
        (credentials / name).parent.mkdir(parents=True, exist_ok=True)
        (credentials / name).write_text("stand-in\n")
        (credentials / name).chmod(0o600)
    text = (
        (folder / node / "jackpotd.toml").read_text().replace("/etc/jackpotd/", f"{credentials}/")
    )
    copy = credentials / f"{node}.toml"
    copy.write_text(text)
    return load_config(copy)


# The shipped files.


@pytest.mark.parametrize("folder", [LAB, PRODUCTION], ids=["lab", "production"])
@pytest.mark.parametrize("node", NODES)
def test_patroni_is_strict_synchronous_and_the_server_durable(folder: Path, node: str) -> None:
    config = patroni(folder, node)
    dcs = config["bootstrap"]["dcs"]
    assert dcs["synchronous_mode"] is True
    assert dcs["synchronous_mode_strict"] is True
    assert dcs["maximum_lag_on_failover"] == 0
    assert dcs["loop_wait"] + 2 * dcs["retry_timeout"] <= dcs["ttl"], "Patroni's own rule"
    parameters = dcs["postgresql"]["parameters"]
    assert parameters["fsync"] == "on"
    assert parameters["synchronous_commit"] == "on"
    assert config["scope"] == SCOPE
    assert config["name"] == node


def test_the_watchdog_is_required_in_production_and_off_in_the_lab() -> None:
    for node in NODES:
        assert patroni(PRODUCTION, node)["watchdog"]["mode"] == "required"
        assert patroni(LAB, node)["watchdog"]["mode"] == "off"


@pytest.mark.parametrize("folder", [LAB, PRODUCTION], ids=["lab", "production"])
def test_the_nodes_share_one_cluster_definition(folder: Path) -> None:
    configs = {node: patroni(folder, node) for node in NODES}
    shared = {node: {**config["bootstrap"], "postgresql": None} for node, config in configs.items()}
    assert shared["node1"] == shared["node2"] == shared["node3"]
    clients = {node: etcd(folder, node)["advertise-client-urls"].split("://")[1] for node in NODES}
    peers = {node: etcd(folder, node)["initial-advertise-peer-urls"] for node in NODES}
    for node in NODES:
        member = etcd(folder, node)
        assert member["name"] == node
        assert member["initial-cluster"] == ",".join(f"{n}={peers[n]}" for n in NODES)
        assert member["enable-grpc-gateway"] is True, "Patroni's etcd3 client needs it"
        assert configs[node]["etcd3"]["hosts"] == ",".join(clients.values())


def test_lab_nodes_listen_on_the_ports_of_the_plan() -> None:
    for node, ports in NODE_PORTS.items():
        config = patroni(LAB, node)
        assert host_port(config["restapi"]["listen"]) == ("127.0.0.1", ports.patroni)
        assert host_port(config["postgresql"]["listen"]) == ("127.0.0.1", ports.postgres)
        member = etcd(LAB, node)
        assert host_port(member["listen-client-urls"]) == ("127.0.0.1", ports.etcd_client)
        assert host_port(member["listen-peer-urls"]) == ("127.0.0.1", ports.etcd_peer)
        mosquitto = (LAB / node / "mosquitto.conf").read_text()
        assert f"\nlistener {ports.mqtt} 127.0.0.1\n" in mosquitto
        jackpotd = load_config(LAB / node / "jackpotd.toml")
        assert (jackpotd.settings("broker").host, jackpotd.settings("broker").port) == (
            "127.0.0.1",
            ports.mqtt,
        ), "each controller takes events from its own node's broker"
        assert (jackpotd.web.host, jackpotd.web.port) == ("127.0.0.1", ports.web)
    assert len(set(lab_ports())) == len(lab_ports()), "no port serves two things"


@pytest.mark.parametrize(
    ("folder", "hosts"),
    [(LAB, dict.fromkeys(NODES, "127.0.0.1")), (PRODUCTION, PRODUCTION_HOSTS)],
    ids=["lab", "production"],
)
def test_haproxy_leads_each_door_to_the_node_whose_health_check_answers(
    folder: Path, hosts: dict[str, str], tmp_path: Path
) -> None:
    config = folder / "haproxy.cfg"
    checked = subprocess.run(
        [BINARIES["haproxy"], "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    backends = haproxy_backends(config)
    assert set(backends) == {"postgresql_primary", "mqtt_leader", "web_leader"}
    assert "option httpchk HEAD /primary" in backends["postgresql_primary"]
    assert "option httpchk GET /leader" in backends["mqtt_leader"]
    assert "option httpchk GET /leader" in backends["web_leader"]
    for lines in backends.values():
        assert "http-check expect status 200" in lines
    pg, mqtt, web = (
        {line.split()[1]: line.split() for line in backends[name] if line.startswith("server ")}
        for name in ("postgresql_primary", "mqtt_leader", "web_leader")
    )
    assert set(pg) == set(mqtt) == set(web) == set(NODES)
    for node in NODES:
        patroni_config = patroni(folder, node)
        postgres = host_port(patroni_config["postgresql"]["connect_address"])
        rest = host_port(patroni_config["restapi"]["connect_address"])
        assert postgres[0] == rest[0] == hosts[node]
        assert pg[node][2] == f"{hosts[node]}:{postgres[1]}"
        assert pg[node][3:] == ["check", "port", str(rest[1])]
        controller = jackpotd(folder, node, tmp_path)
        broker = controller.settings("broker")
        assert mqtt[node][2] == f"{hosts[node]}:{broker.port}"
        assert (broker.host, controller.web.host) == (hosts[node], hosts[node])
        assert mqtt[node][3:] == ["check", "port", str(controller.web.port)]
        assert web[node][2] == f"{hosts[node]}:{controller.web.port}"


@pytest.mark.parametrize("folder", [LAB, PRODUCTION], ids=["lab", "production"])
def test_every_controller_journals_through_the_primary_door(folder: Path, tmp_path: Path) -> None:
    configs = {node: jackpotd(folder, node, tmp_path) for node in NODES}
    journals = {config.controller.journal for config in configs.values()}
    assert len(journals) == 1, "one journal for the three nodes"
    (journal,) = journals
    assert isinstance(journal, DatabaseUrl)
    door = DOOR_PORTS.postgres if folder == LAB else 5000
    assert re.fullmatch(rf"postgresql://jackpotd@[^/]+:{door}/jackpot(\?.*)?", journal.url)
    assert len({config.controller.controller_id for config in configs.values()}) == 1, (
        "one controller on three nodes"
    )
    assert {config.controller.node for config in configs.values()} == set(NODES)
    assert len({config.controller.site for config in configs.values()}) == 1
    assert len({tuple(p.pool_id for p in config.pools) for config in configs.values()}) == 1
    assert len({tuple(t.table_id for t in config.tables) for config in configs.values()}) == 1


def test_wal_archiving_copies_a_segment_once_and_never_over_another(tmp_path: Path) -> None:
    archive, segment = tmp_path / "archive", tmp_path / "000000010000000000000001"
    archive.mkdir()
    segment.write_bytes(b"wal" * 1000)

    def archive_wal() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PRODUCTION / "archive-wal.sh"), str(segment), segment.name],
            env={"PATH": "/usr/bin:/bin", "JACKPOT_WAL_ARCHIVE": str(archive)},
            capture_output=True, text=True, check=False,
        )  # fmt: skip

    assert archive_wal().returncode == 0
    assert (archive / segment.name).read_bytes() == segment.read_bytes()
    assert archive_wal().returncode == 0, "archived again after a crash: the same bytes are done"
    segment.write_bytes(b"other")
    refused = archive_wal()
    assert refused.returncode == 1
    assert "exists and differs" in refused.stderr
    assert (archive / segment.name).read_bytes() == b"wal" * 1000
    assert sorted(path.name for path in archive.iterdir()) == [segment.name]


@pytest.mark.parametrize("node", NODES)
def test_production_archives_every_wal_segment_with_the_shipped_script(node: str) -> None:
    parameters = patroni(PRODUCTION, node)["bootstrap"]["dcs"]["postgresql"]["parameters"]
    assert parameters["archive_mode"] == "on"
    assert parameters["archive_command"] == "/usr/local/bin/jackpot-archive-wal %p %f"
