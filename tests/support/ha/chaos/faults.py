"""The chaos test's faults: each injected, then healed as an operator or systemd would.

Every fault returns a :class:`Fault`: its kind, what it hit, and the wall-clock time it was
injected (the failover is measured from there to the first new commit). Each function heals
what it broke (a paused process resumed, a cut link healed, a killed Patroni started again
once another node is primary); the runner then waits for the cluster to be whole again
(:func:`settle`). Kinds:

* ``leader-kill``: kill -9 of the leading ``jackpotd`` (the supervisor starts it again);
* ``primary-kill``: kill -9 of the PostgreSQL primary (its Patroni and every server process),
  started again once a standby is promoted;
* ``zombie``: SIGSTOP of the leading ``jackpotd`` until another node leads, then SIGCONT;
* ``table-link``: the tables' link to HAProxy's MQTT door cut (``stall`` or ``reset``) for a
  few seconds, then healed;
* ``db-link``: the leader's link to the database stalled until another node leads, then healed;
* ``everything``: every process of the cluster killed (controllers, PostgreSQL and Patroni,
  etcd, the brokers, HAProxy) and started again. The floor (the tables' own hardware) lives on.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from support.ha.etcd_watch import remaining

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from support.ha.chaos.nodes import Node, Nodes
    from support.ha.ha_cluster import HaCluster
    from support.ha.tcp_proxy import Cut, LinkProxy

KINDS: Final = ("leader-kill", "primary-kill", "zombie", "table-link", "db-link", "everything")
DAEMON_KINDS: Final = frozenset({"leader-kill", "zombie", "db-link"})
"""Faults whose failover is a daemon's loss (target 10 s); ``primary-kill``'s is 30 s."""
SETTLE_S: Final = 180.0
LOOK_S: Final = 0.1


@dataclass(frozen=True)
class Fault:
    """One fault injected."""

    kind: str
    target: str
    at: float
    """Wall-clock time of the injection."""
    epoch: int
    """The leader's epoch before it (0: none known)."""


def until(condition: Callable[[], bool], what: str, timeout: float) -> None:
    """Until ``condition`` holds, looked at every :data:`LOOK_S`; raises after ``timeout``.

    What it waits on (HTTP answers of the nodes, etcd, a process's status) tells nobody when
    it changes: it is read again soon, up to a deadline.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if remaining(deadline) <= 0:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        threading.Event().wait(LOOK_S)


def lasting(seconds: float) -> None:
    """A fault that lasts ``seconds`` (a cut link held cut): the fault's length, not a wait."""
    threading.Event().wait(seconds)


def the_leader(nodes: Nodes, timeout: float = SETTLE_S) -> tuple[Node, int]:
    """The leading node and its epoch, waited for."""
    found: list[tuple[Node, int]] = []

    def leads() -> bool:
        for node in nodes.nodes:
            body = node.leads()
            if body is not None:
                epoch = body.get("epoch")
                found[:] = [(node, epoch if isinstance(epoch, int) else 0)]
                return True
        return False

    until(leads, "a node to lead", timeout)
    return found[0]


def another_leads(nodes: Nodes, old: Node, timeout: float = SETTLE_S) -> None:
    until(lambda: any(n.leads() is not None for n in nodes.nodes if n is not old),
          f"a node other than {old.name} to lead", timeout)  # fmt: skip


def leader_kill(cluster: HaCluster, nodes: Nodes, rng: random.Random, tables: LinkProxy) -> Fault:
    del cluster, rng, tables
    leader, epoch = the_leader(nodes)
    at = time.time()
    with nodes.supervisor.lock:
        leader.service.kill()
    return Fault("leader-kill", leader.name, at, epoch)


def primary_kill(cluster: HaCluster, nodes: Nodes, rng: random.Random, tables: LinkProxy) -> Fault:
    del rng, tables
    _, epoch = the_leader(nodes)
    primary = cluster.state().primary()
    assert primary is not None, "no primary to kill"
    at = time.time()
    cluster.nodes[primary].crash()
    until(lambda: cluster.state().primary() not in {None, primary},
          f"a standby promoted after {primary}", SETTLE_S)  # fmt: skip
    cluster.nodes[primary].start()  # it rejoins as a standby (pg_rewind)
    return Fault("primary-kill", primary, at, epoch)


def zombie(cluster: HaCluster, nodes: Nodes, rng: random.Random, tables: LinkProxy) -> Fault:
    del cluster, rng, tables
    leader, epoch = the_leader(nodes)
    at = time.time()
    leader.service.signal(signal.SIGSTOP)
    try:
        another_leads(nodes, leader)
    finally:
        leader.service.signal(signal.SIGCONT)
    return Fault("zombie", leader.name, at, epoch)


def table_link(cluster: HaCluster, nodes: Nodes, rng: random.Random, tables: LinkProxy) -> Fault:
    del cluster
    _, epoch = the_leader(nodes)
    how: Cut = "stall" if rng.random() < 0.5 else "reset"
    at = time.time()
    tables.cut(how)
    try:
        lasting(rng.uniform(2.0, 8.0))
    finally:
        tables.heal()
    return Fault("table-link", how, at, epoch)


def db_link(cluster: HaCluster, nodes: Nodes, rng: random.Random, tables: LinkProxy) -> Fault:
    del cluster, rng, tables
    leader, epoch = the_leader(nodes)
    at = time.time()
    leader.link.cut("stall")
    try:
        another_leads(nodes, leader)
    finally:
        leader.link.heal()
    return Fault("db-link", leader.name, at, epoch)


def everything(cluster: HaCluster, nodes: Nodes, rng: random.Random, tables: LinkProxy) -> Fault:
    del rng, tables
    _, epoch = the_leader(nodes)
    at = time.time()
    with nodes.supervisor.lock:  # systemd starts them again once the lock is let go
        for node in nodes.nodes:
            node.service.kill()
        cluster.haproxy.kill()
        for broker in cluster.brokers.values():
            broker.kill()
        for patroni in cluster.nodes.values():
            patroni.crash()
        for member in cluster.etcd.values():
            member.kill()
        for member in cluster.etcd.values():
            member.start()
        for patroni in cluster.nodes.values():
            patroni.start()
        for broker in cluster.brokers.values():
            broker.start()
        cluster.haproxy.start()
    return Fault("everything", "all", at, epoch)


INJECT: Final[dict[str, Callable[[HaCluster, Nodes, random.Random, LinkProxy], Fault]]] = {
    "leader-kill": leader_kill,
    "primary-kill": primary_kill,
    "zombie": zombie,
    "table-link": table_link,
    "db-link": db_link,
    "everything": everything,
}


def settle(cluster: HaCluster, nodes: Nodes) -> Node:
    """Until the cluster is whole; the leader.

    Three members and a synchronous standby, and one leader behind HAProxy's MQTT and web doors.
    """
    cluster.wait_healthy(SETTLE_S, members=3)
    leader, _ = the_leader(nodes)
    cluster.wait_for_door(leader.name, SETTLE_S, backend="mqtt_leader")
    cluster.wait_for_door(leader.name, SETTLE_S, backend="web_leader")
    return leader
