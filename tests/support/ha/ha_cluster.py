"""A real three-node high-availability cluster on loopback: etcd, Patroni, PostgreSQL, HAProxy.

:func:`start_cluster` renders the shipped lab (``deploy/ha/lab/``, :mod:`support.ha.ha_lab`) into a
temporary folder, on free ports, and starts it: three etcd members, three Patroni nodes (each
starting its PostgreSQL; the first to take the leader key bootstraps the cluster and the
others clone it) and HAProxy. It returns once etcd holds a running primary and a running
synchronous standby, and HAProxy's PostgreSQL door leads to that primary. A test's fixture
enters :func:`running_cluster` (tests/deploy/test_deploy_ha_cluster.py).

Faults (:mod:`support.ha.ha_processes`): :meth:`PatroniNode.crash` (SIGKILL to Patroni and to every
PostgreSQL process at once: a host lost, though its page cache is kept),
:meth:`PatroniNode.kill_postgres` (the server alone), :meth:`Service.pause` and
:meth:`Service.resume` (SIGSTOP, SIGCONT), :meth:`PatroniNode.stop` and ``start``; and
:meth:`HaCluster.switchover` and :meth:`HaCluster.failover` (``patronictl``).
:meth:`HaCluster.start_brokers` starts each node's mosquitto. Other processes (a chaos test's
jackpotd, on the rendered ``nodeN/jackpotd.toml``) join with :meth:`HaCluster.add` and are
ended with the rest.

Waits are bounded and wake on events: ``READY=1`` (the notify protocol systemd uses) from
the etcd members and the brokers, a watch on Patroni's keys in etcd for the cluster's state.
HAProxy says nothing when a check changes a server's state, so :meth:`HaCluster.wait_for_door`
reads its statistics page, with a short pause between reads, until a deadline.

Run as root (CI), Patroni runs as the ``postgres`` system user, in a folder that user owns.
:meth:`HaCluster.close` kills every process the cluster started, PostgreSQL's included,
whatever state a failed test left them in, and removes the folder.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from support.drivers.mosquitto import HOST, MOSQUITTO
from support.ha.etcd_watch import ClusterState, Watch, WatchEndedError, read_state, remaining
from support.ha.ha_lab import (
    DOOR_PORTS,
    NAMESPACE,
    NODE_PORTS,
    NODES,
    SCOPE,
    DoorPorts,
    NodePorts,
    moved,
    port_map,
    write_lab,
)
from support.ha.ha_processes import STOP_TIMEOUT_S, PatroniNode, Service, server_account
from support.journal.postgres import INSTALL, postgres_bin

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

START_TIMEOUT_S: Final = 60.0
DOOR_POLL_S: Final = 0.1
PRIMARY_DOOR: Final = "postgresql_primary"
"""HAProxy's backend to the primary; ``mqtt_leader`` and ``web_leader`` go to the leader."""
PREFIX: Final = f"{NAMESPACE}{SCOPE}/"
BINARIES: Final = {
    "etcd": "/usr/bin/etcd",
    "patroni": "/usr/bin/patroni",
    "patronictl": "/usr/bin/patronictl",
    "haproxy": "/usr/sbin/haproxy",
    "mosquitto": MOSQUITTO,
}
HA_INSTALL: Final = (
    "the high-availability tests need etcd, Patroni and HAProxy: apt-get install etcd-server "
    f"patroni haproxy (make system-deps does); and {INSTALL}"
)


@dataclass
class HaCluster:
    """The running lab; :meth:`close` ends every process it started."""

    directory: Path
    doors: DoorPorts
    etcd: dict[str, Service]
    nodes: dict[str, PatroniNode]
    haproxy: Service
    brokers: dict[str, Service] = field(default_factory=dict)
    extra: list[Service] = field(default_factory=list)

    def add(self, service: Service) -> Service:
        """A process of the test's (a jackpotd), ended with the cluster; started."""
        self.extra.append(service)
        service.start()
        return service

    def door_url(self, database: str = "postgres", user: str = "postgres") -> str:
        """A URL through HAProxy's PostgreSQL door (to whichever node is the primary)."""
        return f"postgresql://{user}@{HOST}:{self.doors.postgres}/{database}"

    def _etcd_member(self) -> NodePorts:
        alive = [self.nodes[name].ports for name, member in self.etcd.items() if member.running()]
        if not alive:
            pytest.fail("no etcd member of the cluster is running", pytrace=False)
        return alive[0]

    def state(self) -> ClusterState:
        """Patroni's state as etcd holds it now."""
        return read_state(HOST, self._etcd_member().etcd_client, PREFIX)

    def wait_for(
        self, condition: Callable[[ClusterState], bool], what: str, timeout: float
    ) -> ClusterState:
        """The first state that meets ``condition``, woken by each change in etcd."""
        deadline = time.monotonic() + timeout
        watch: Watch | None = None
        try:
            while True:
                if watch is None:
                    watch = Watch(HOST, self._etcd_member().etcd_client, PREFIX)
                state = self.state()
                if condition(state):
                    return state
                if remaining(deadline) <= 0:
                    pytest.fail(
                        f"timed out after {timeout:g} s waiting for {what}; last state {state}\n"
                        f"{self.logs()}",
                        pytrace=False,
                    )
                try:
                    watch.wait(remaining(deadline))
                except WatchEndedError:
                    watch.close()
                    watch = None
        finally:
            if watch is not None:
                watch.close()

    def wait_healthy(self, timeout: float = START_TIMEOUT_S, members: int = 3) -> ClusterState:
        """A running primary with a running synchronous standby, ``members`` nodes running."""
        return self.wait_for(
            lambda state: state.healthy(members),
            f"a primary, a synchronous standby and {members} running members",
            timeout,
        )

    def door_servers(self, backend: str) -> dict[str, str]:
        """HAProxy's view of a backend: each server's status (UP, DOWN...)."""
        with urllib.request.urlopen(f"http://{HOST}:{self.doors.stats}/;csv", timeout=5) as page:
            text = page.read().decode().lstrip("# ")
        return {
            row["svname"]: row["status"]
            for row in csv.DictReader(io.StringIO(text))
            if row["pxname"] == backend and row["svname"] not in {"FRONTEND", "BACKEND"}
        }

    def wait_for_door(
        self,
        node: str | None,
        timeout: float = START_TIMEOUT_S,
        backend: str = "postgresql_primary",
    ) -> None:
        """Until HAProxy's ``backend`` leads to ``node`` alone (None: to no node)."""
        deadline = time.monotonic() + timeout
        wanted = {node} if node is not None else set()
        while True:
            up = {name for name, status in self.door_servers(backend).items()
                  if status.startswith("UP")}  # fmt: skip
            if up == wanted:
                return
            if remaining(deadline) <= 0:
                pytest.fail(
                    f"HAProxy's {backend} led to {up or 'nobody'}, not {node}", pytrace=False
                )
            # HAProxy tells nobody when a check changes a server's state: read it again soon.
            time.sleep(DOOR_POLL_S)

    def start_brokers(self) -> None:
        """Each node's mosquitto (``nodeN/mosquitto.conf``), once each has said ``READY=1``."""
        with _notify_socket(self.directory / "brokers.sock") as listener:
            for name in self.nodes:
                self.brokers[name] = broker = Service(
                    f"mosquitto {name}",
                    [BINARIES["mosquitto"], "-c", str(self.directory / name / "mosquitto.conf")],
                    self.directory / name / "mosquitto.log",
                    environment={"NOTIFY_SOCKET": str(self.directory / "brokers.sock")},
                )
                broker.start()
            _await_ready(listener, len(self.brokers), "mosquitto", self)

    def patronictl(self, *arguments: str) -> str:
        """Run ``patronictl`` with a node's configuration (any: they share the store)."""
        config = next(iter(self.nodes.values())).config
        done = subprocess.run(
            [BINARIES["patronictl"], "-c", str(config), *arguments],
            capture_output=True, text=True, check=False, timeout=STOP_TIMEOUT_S,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"patronictl {' '.join(arguments)}: {done.stdout}{done.stderr}")
        return done.stdout

    def switchover(self, candidate: str) -> ClusterState:
        """A planned switchover to ``candidate``; the state once it is the healthy primary."""
        leader = self.state().primary() or ""
        said = self.patronictl(
            "switchover", "--leader", leader, "--candidate", candidate, "--force"
        )
        if "Successfully" not in said:
            pytest.fail(f"patronictl switchover to {candidate} refused: {said}", pytrace=False)
        return self.wait_for(
            lambda state: state.primary() == candidate and state.healthy(len(self.running())),
            f"{candidate} primary after a switchover",
            START_TIMEOUT_S,
        )

    def failover(self, candidate: str) -> ClusterState:
        """A manual failover to ``candidate`` (``patronictl failover``)."""
        said = self.patronictl("failover", "--candidate", candidate, "--force")
        if "Successfully" not in said:
            pytest.fail(f"patronictl failover to {candidate} refused: {said}", pytrace=False)
        return self.wait_for(
            lambda state: state.primary() == candidate,
            f"{candidate} primary after a failover",
            START_TIMEOUT_S,
        )

    def running(self) -> list[PatroniNode]:
        """The nodes whose Patroni is alive."""
        return [node for node in self.nodes.values() if node.patroni.running()]

    def logs(self) -> str:
        """The tail of every process's log, for a failure's message."""
        services = [
            *self.etcd.values(),
            *(n.patroni for n in self.nodes.values()),
            self.haproxy,
            *self.brokers.values(),
        ]
        return "\n".join(
            f"--- {service.name} ({service.log_file}):\n{service.log()[-3000:]}"
            for service in [*services, *self.extra]
        )

    def close(self) -> None:
        """Kill everything the cluster started, PostgreSQL's processes too; remove its folder."""
        for service in [*self.extra, self.haproxy, *self.brokers.values()]:
            service.kill()
        for node in self.nodes.values():
            node.crash()
        for service in self.etcd.values():
            service.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


def _notify_socket(path: Path) -> socket.socket:
    """A socket for the notify protocol (systemd's): etcd and mosquitto send ``READY=1`` on it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(path))
    # mosquitto started as root says it is ready after it has become the mosquitto user.
    path.chmod(0o666)
    return listener


def _await_ready(listener: socket.socket, count: int, what: str, cluster: HaCluster) -> None:
    """Until ``count`` processes have said ``READY=1`` (etcd does once it has a quorum)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    ready = 0
    while ready < count:
        listener.settimeout(max(remaining(deadline), 0.001))
        try:
            message = listener.recv(4096)
        except TimeoutError:
            pytest.fail(f"{what} was not ready within {START_TIMEOUT_S:g} s\n{cluster.logs()}")
        ready += b"READY=1" in message.split(b"\n")


def _chown_tree(directory: Path, account: pwd.struct_passwd | None) -> None:
    if account is None:
        return
    for path in [directory, *directory.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid)


def start_cluster() -> HaCluster:
    """The lab rendered in a new folder on free ports, running and healthy (module docstring)."""
    for binary in BINARIES.values():
        if not Path(binary).is_file():
            pytest.fail(f"{binary} not found: {HA_INSTALL}", pytrace=False)
    account = server_account()
    directory = Path(tempfile.mkdtemp(prefix="jackpotd-ha-"))
    mapping = port_map()
    write_lab(directory, mapping, postgres_bin())
    for name in NODES:
        (directory / name / "postgres").mkdir(mode=0o700)
        (directory / name / "etcd").mkdir(mode=0o700)
        (directory / name / "jackpotd").mkdir()
        (directory / name / "mosquitto").mkdir()
    _chown_tree(directory, account)
    if account is not None:
        # Started as root, mosquitto runs as its own user (the lab's file names no other).
        broker = pwd.getpwnam("mosquitto")
        for name in NODES:
            os.chown(directory / name / "mosquitto", broker.pw_uid, broker.pw_gid)
    directory.chmod(0o755)
    node_ports = {name: moved(ports, mapping) for name, ports in NODE_PORTS.items()}
    listener = _notify_socket(directory / "notify.sock")
    etcd = {
        name: Service(
            f"etcd {name}",
            [BINARIES["etcd"], "--config-file", str(directory / name / "etcd.yml")],
            directory / name / "etcd.log",
            environment={"NOTIFY_SOCKET": str(directory / "notify.sock")},
        )
        for name in NODES
    }
    nodes = {
        name: PatroniNode(
            name,
            directory / name,
            node_ports[name],
            Service(
                f"patroni {name}",
                [BINARIES["patroni"], str(directory / name / "patroni.yml")],
                directory / name / "patroni.log",
                account,
            ),
        )
        for name in NODES
    }
    haproxy = Service(
        "haproxy",
        [BINARIES["haproxy"], "-db", "-f", str(directory / "haproxy.cfg")],
        directory / "haproxy.log",
    )
    cluster = HaCluster(directory, moved(DOOR_PORTS, mapping), etcd, nodes, haproxy)
    try:
        with listener:
            for member in etcd.values():
                member.start()
            _await_ready(listener, len(etcd), "etcd", cluster)
        for node in nodes.values():
            node.start()
        haproxy.start()
        state = cluster.wait_healthy()
        cluster.wait_for_door(state.primary() or "")
    except BaseException:
        cluster.close()
        raise
    return cluster


@contextlib.contextmanager
def running_cluster() -> Iterator[HaCluster]:
    """A started cluster (:func:`start_cluster`), closed when the block ends, however it ends."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.close()
