"""The chaos test's three controller nodes on the lab cluster, restarted as systemd would.

Each lab node (tests/support/ha/ha_cluster.py) gets a ``jackpotd run`` of its own: its
``[controller] node``, its own broker (the node's mosquitto) and web port (HAProxy asks its
``GET /leader``), and the journal through HAProxy's PostgreSQL door as deploy/ha decides,
but by way of a :class:`support.ha.tcp_proxy.LinkProxy` of its own so that a fault can cut one
node's link to the database. The journal is readied once (operators, the configuration and
each node's software approved) and the nodes started.

:class:`Supervisor` is systemd's ``Restart=on-failure`` with the shipped unit's
``RestartSec=2`` (systemd/jackpotd.service): a node that ends with any status but 0, or is
killed, is started again two seconds later. It runs in a thread of the harness, as systemd
runs beside the service, and notes every exit status (75 fenced, 74 a hung commit).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.clock import utc_now as now
from controller.events import ManifestApproved
from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import PostgresJournal
from controller.mystery.envelope import SealingKey
from controller.security.sealing_key import write_sealing_key
from support.deploy.software_rig import seen_manifest
from support.drivers.mosquitto import HOST
from support.ha.ha_processes import Service
from support.ha.tcp_proxy import LinkProxy
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

if TYPE_CHECKING:
    from support.ha.ha_cluster import HaCluster
    from support.ledger.approvals import Site

log = logging.getLogger(__name__)

ROOT: Final = Path(__file__).resolve().parents[4]
CHILD: Final = os.environ | {"PYTHONPATH": str(ROOT)}
"""What the nodes run with: the environment the approved manifest was seen in."""
SITE: Final = "chaos"
POOL: Final = "floor"
PAYTABLE_NAME: Final = "chaos-mystery-1"
PAYTABLE: Final = f"""\
name = "{PAYTABLE_NAME}"
title = "The chaos floor's progressive: a mystery grand over Paytable 1's major ($1 wager)"
wager = "progressive"
source = "tests/support/ha/chaos/nodes.py (house rules, for the failover chaos test)"
joker = "semi-wild"

[progressive]
wager = "$1"
original_wager_returned = false

[[progressive.levels]]
level = "grand"
meter_seed = "$10"
rate_of_progression = "10%"
must_hit_by = "$10.50"
past_trigger = "next-level"

[[progressive.levels]]
level = "major"
meter_seed = "$10,000"
rate_of_progression = "18%"

[[lines]]
line = "seven-card-straight-flush"
outcome = "7 card straight flush"
pays = "100% of meter"
level = "major"

[[lines]]
line = "five-aces"
outcome = "Five aces"
pays = "10% of meter"
level = "major"

[[lines]]
line = "royal-flush"
outcome = "Royal flush"
pays = "$500"

[[lines]]
line = "straight-flush"
outcome = "Straight flush"
pays = "$100"

[[lines]]
line = "four-of-a-kind"
outcome = "Four-of-a-kind"
pays = "$75"

[[lines]]
line = "full-house"
outcome = "Full house"
pays = "$4"
"""
"""The floor's pool: the grand, a mystery level from $10 to $10.50 at 10 cents a wager, hits
within every five progressive wagers, so that every fault lands in the middle of one of its
draws and every run sees hits; the major is Paytable 1's meter (58 Pa. Code § 688a.12(d)) at
18 %."""
RESTART_S: Final = 2.0
"""systemd/jackpotd.service: ``RestartSec=2``."""
LEASE_S: Final = 3.0
COMMIT_HANG_S: Final = 15.0
HEARTBEAT_TIMEOUT_S: Final = 5.0
WATCH_S: Final = 0.1
START_S: Final = 30.0
"""The longest one node's start holds the next one's."""

Manifest = tuple[str, str, str, list[tuple[str, str]]]
"""What ``jackpotd version --json --verbose`` says of a node: version, digests, files."""


@dataclass(frozen=True)
class Timing:
    """The nodes' fence and the tables' timeouts (the ``[controller]`` keys of the same names)."""

    lease_s: float = LEASE_S
    commit_hang_s: float = COMMIT_HANG_S
    heartbeat_timeout_s: float = HEARTBEAT_TIMEOUT_S


def node_config(
    folder: Path, node: str, journal: str, cluster: HaCluster, *, tables: list[str], timing: Timing
) -> Path:
    """A node's ``jackpotd.toml``: one pool every table plays, the node's broker and web port.

    The pool is :data:`PAYTABLE`'s two levels, its grand a mystery level, filed in the
    cluster's folder with the sealing key every node shares (docs/ha.md, "Mystery levels across
    a failover"), so that every run takes its failovers in the middle of a mystery level.
    """
    ports = cluster.nodes[node].ports if node in cluster.nodes else None
    broker = ports.mqtt if ports else 1
    web = ports.web if ports else 1
    paytables, sealing = shared_files(cluster.directory)
    text = (
        f'[controller]\nsite = "{SITE}"\nid = "pit"\nnode = "{node}"\njournal = "{journal}"\n'
        f"lease_s = {timing.lease_s}\ncommit_hang_s = {timing.commit_hang_s}\n"
        f"heartbeat_timeout_s = {timing.heartbeat_timeout_s}\n{KEY_LINE}"
        f'sealing_key_file = "{sealing}"\npaytable_dirs = ["{paytables}"]\n\n'
        f'[broker]\nhost = "{HOST}"\nport = {broker}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 1.0\n\n"
        f'[[pools]]\nid = "{POOL}"\npaytable = "{PAYTABLE_NAME}"\n\n'
    )
    for table in tables:
        text += (
            f'[[tables]]\nid = "{table}"\ntransport = "mqtt"\nbonus = "fortune-1"\n'
            f'progressive = "{PAYTABLE_NAME}"\npool = "{POOL}"\n\n'
        )
    text += f'[web]\nhost = "{HOST}"\nport = {web}\n'
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "jackpotd.toml"
    path.write_text(text)
    return path


def shared_files(directory: Path) -> tuple[Path, Path]:
    """The cluster's paytable folder and sealing key file, made once (every node the same)."""
    paytables, sealing = directory / "paytables", directory / "sealing.key"
    paytables.mkdir(parents=True, exist_ok=True)
    filed = paytables / f"{PAYTABLE_NAME}.toml"
    if not filed.exists():
        filed.write_text(PAYTABLE, encoding="utf-8")
    if not sealing.exists():
        write_sealing_key(sealing, SealingKey.generate())
    return paytables, sealing


def leader_answer(port: int) -> tuple[int, dict[str, object]] | None:
    """``GET /leader`` on a web port: its status and body; None if nothing answers."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/leader", timeout=2) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, {}
    except (urllib.error.URLError, OSError, ValueError):
        return None


@dataclass
class Node:
    """One controller node: its process, its link to the database, its web port."""

    name: str
    service: Service
    link: LinkProxy
    web: int
    wanted: bool = True
    """Whether systemd would keep it running (a stopped unit is not restarted)."""
    exits: Counter[int] = field(default_factory=Counter)

    def leads(self) -> dict[str, object] | None:
        """Its ``/leader`` body when it answers 200."""
        answer = leader_answer(self.web)
        return answer[1] if answer is not None and answer[0] == 200 else None


class Approver:
    """A manager approving the nodes' files, as ``jackpotd manifest approve`` does.

    One ``--config`` per node: one signed approval naming every node's digest.
    """

    def __init__(self, site: Site, url: str, manifests: dict[str, Manifest]) -> None:
        self.site = site
        self.url = url
        self.manifests = manifests
        self.approvals = 0
        self._journal: PostgresJournal | None = None
        self._failed = False

    def approve(self) -> None:
        """Journal the approval of every node's file, once, before any node starts."""
        version, software, _, files = next(iter(self.manifests.values()))
        digests = sorted(manifest[2] for manifest in self.manifests.values())
        event = ManifestApproved(
            f"manifest-{uuid.uuid4()}", now(), version, software, ",".join(digests), files, "mgr"
        )
        # Kept open: after a broken connection the journal opens a new one at its next write
        # and catches up with the rows written meanwhile, where opening it again replays all.
        try:
            if self._journal is None:
                self._journal = PostgresJournal(DatabaseUrl(self.url))
            self.approvals += self._journal.append(self.site.sign(event, "mgr")).applied
            self._failed = False
        except Exception:
            # The database is down (a fault): the next start tries again, on a journal opened
            # again if this one failed twice running.
            log.warning("approving the nodes failed", exc_info=True)
            if self._failed:
                self.close()
            self._failed = True

    def close(self) -> None:
        """Close its journal."""
        if self._journal is not None:
            with contextlib.suppress(Exception):
                self._journal.close()
            self._journal = None


class Supervisor:
    """systemd for the nodes: ``Restart=on-failure``, ``RestartSec=2`` (module docstring).

    The three files (each naming its node and ports, as deploy/ha ships them) are approved
    together before any node starts, as an operator approves a cluster (docs/ha.md,
    "Approving a cluster"): any node passes its self-check whenever it starts. Starts are one
    at a time, as on a loaded host: the next node starts once this one has passed its
    self-check (it answers ``/leader``) or ended.
    """

    def __init__(self, nodes: list[Node], approver: Approver) -> None:
        self.nodes = nodes
        self.approver = approver
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._due: dict[str, float] = {node.name: 0.0 for node in nodes}
        self._starting: tuple[Node, float] | None = None
        self._thread = threading.Thread(target=self._watch, name="chaos-supervisor", daemon=True)

    def start(self) -> None:
        """Start every node, one at a time, then look after them."""
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_S):
            with self.lock:
                for node in self.nodes:
                    self._look_after(node)

    def _started(self) -> bool:
        """Whether the node started last is past its self-check, ended, or given up on."""
        if self._starting is None:
            return True
        node, deadline = self._starting
        answered = not node.service.running() or leader_answer(node.web) is not None
        if answered or time.monotonic() >= deadline:
            self._starting = None
        return self._starting is None

    def _look_after(self, node: Node) -> None:
        if not node.wanted:
            return
        process = node.service.process
        if process is not None:
            status = process.poll()
            if status is None:
                return
            if node.name not in self._due:
                node.exits[status] += 1
                if status == 0:  # on-failure: a clean exit stays down
                    node.wanted = False
                    return
                self._due[node.name] = time.monotonic() + RESTART_S
        if time.monotonic() >= self._due[node.name] and self._started():
            del self._due[node.name]
            node.service.start()
            self._starting = (node, time.monotonic() + START_S)

    def close(self) -> None:
        """Stop looking after them; kill every node and close its link."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self.approver.close()
        for node in self.nodes:
            with contextlib.suppress(Exception):
                node.service.kill()
            node.link.close()


@dataclass
class Nodes:
    """The three nodes, their supervisor, and the journal's URL through the door."""

    url: str
    nodes: list[Node]
    supervisor: Supervisor

    def leader(self) -> Node | None:
        """The node answering ``/leader`` 200 (the first found)."""
        return next((node for node in self.nodes if node.leads() is not None), None)

    def by_name(self, name: str) -> Node:
        """The node called ``name``."""
        return next(node for node in self.nodes if node.name == name)

    def logs(self) -> str:
        """The tail of every node's log, for a failure's message."""
        return "\n".join(
            f"--- {node.name} ({node.service.log_file}):\n{node.service.log()[-4000:]}"
            for node in self.nodes
        )


def start_nodes(cluster: HaCluster, tables: list[str], timing: Timing) -> Nodes:
    """The journal readied and approved, and a supervised ``jackpotd run`` on every node."""
    url = cluster.door_url("jackpot", "jackpotd")
    seed_folder = cluster.directory / "seed"
    write_controller_key(seed_folder)
    seed = node_config(
        seed_folder, "seed", str(seed_folder / "seed.db"), cluster, tables=tables, timing=timing
    )
    site = approved_site(seed)  # operators, the configuration and the software approved
    copied = subprocess.run(
        [sys.executable, "-m", "controller", "journal", "copy", "--from",
         str(seed_folder / "seed.db"), "--to", url],
        capture_output=True, text=True, cwd=ROOT, check=False, env=CHILD, timeout=120,
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    nodes: list[Node] = []
    manifests: dict[str, Manifest] = {}
    for name, patroni in cluster.nodes.items():
        link = LinkProxy(HOST, cluster.doors.postgres)
        link.start()
        folder = cluster.directory / name / "controller"
        write_controller_key(folder)
        journal = f"postgresql://jackpotd@{HOST}:{link.port}/jackpot"
        path = node_config(folder, name, journal, cluster, tables=tables, timing=timing)
        manifests[name] = seen_manifest(path, CHILD)
        service = Service(
            f"jackpotd {name}",
            [sys.executable, "-m", "controller", "run", "--config", str(path)],
            folder / "jackpotd.log",
            environment={"PYTHONPATH": str(ROOT)},
        )
        nodes.append(Node(name, service, link, patroni.ports.web))
    approver = Approver(site, url, manifests)
    approver.approve()
    assert approver.approvals == 1, "the nodes' files were not approved"
    supervisor = Supervisor(nodes, approver)
    supervisor.start()
    return Nodes(url, nodes, supervisor)
