"""The lab of deploy/ha/ running: three etcd members, three Patroni over PostgreSQL 15, HAProxy.

Each test starts the shipped lab files on free loopback ports (tests/support/ha/ha_cluster.py)
and ends every process after. They prove what deploy/ha/README.md and docs/ha.md promise:
the cluster comes up with one primary and one synchronous standby, and a switchover moves
HAProxy's door with the primary; a row committed through HAProxy survives kill -9 of the
primary and is read back through HAProxy from the promoted standby; a primary left without a
standby holds a COMMIT until one returns, so the tables would close rather than pay from a
meter that is not replicated; and a primary whose Patroni is paused past its leader key
commits nothing more, HAProxy leads away from it, and it rejoins as a standby without the
write it was given. With each node's mosquitto running, HAProxy leads tables (MQTT) and
displays (web) only to the node whose controller answers /leader with 200, and cuts a table's
connection when that node stops answering. The timings are printed (pytest -s), not asserted
beyond the bounds.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
import urllib.request
from typing import TYPE_CHECKING

import psycopg
import pytest
from support.drivers.mosquitto import HOST
from support.ha.ha_cluster import START_TIMEOUT_S, HaCluster, running_cluster
from support.ha.ha_lab import NODES
from support.ha.ha_processes import Service
from support.runtime.floor import WAIT_S

if TYPE_CHECKING:
    from collections.abc import Iterator

    from support.ha.etcd_watch import ClusterState

pytestmark = pytest.mark.slow

FAILOVER_TIMEOUT_S = 60.0
BLOCKED_S = 3.0
"""How long a COMMIT that must not return is watched not returning."""
PAID = "CREATE TABLE paid (id integer PRIMARY KEY, cents bigint NOT NULL)"
CONNACK = b"\x20\x02\x00\x00"
"""MQTT 3.1.1: connection accepted, no session present."""
LEADER = """
import http.server, sys
class Leader(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"display of " + sys.argv[2].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Leader).serve_forever()
"""
"""A stand-in for the leading jackpotd's web server: 200 on every GET, /leader included
(tests/web/test_display_leader.py proves jackpotd's own answers)."""


@pytest.fixture
def cluster() -> Iterator[HaCluster]:
    """A lab of its own, for a test that kills or pauses a node."""
    with running_cluster() as running:
        yield running


@pytest.fixture(scope="module")
def shared_cluster() -> Iterator[HaCluster]:
    """One lab for the tests that leave it running (they run last, so it starts last)."""
    with running_cluster() as running:
        yield running


def door_server(cluster: HaCluster) -> tuple[int, bool]:
    """The port of the server HAProxy's PostgreSQL door leads to, and whether it is a standby."""
    with psycopg.connect(cluster.door_url(), autocommit=True) as connection:
        row = connection.execute("SELECT inet_server_port(), pg_is_in_recovery()").fetchone()
    assert row is not None
    return int(row[0]), bool(row[1])


def mqtt_connect(cluster: HaCluster) -> socket.socket:
    """A table's MQTT 3.1.1 CONNECT (clean session, client id "t1") through HAProxy's MQTT door."""
    connection = socket.create_connection((HOST, cluster.doors.mqtt), timeout=WAIT_S)
    body = b"\x00\x04MQTT\x04\x02\x00\x3c" + b"\x00\x02t1"
    connection.sendall(bytes([0x10, len(body)]) + body)
    return connection


def answer(connection: socket.socket) -> bytes:
    """What comes back (a CONNACK is four bytes); b"" when the connection was closed."""
    try:
        return connection.recv(4)
    except ConnectionResetError:
        return b""


def paid_on_the_primary(cluster: HaCluster) -> tuple[str, str]:
    """Row 1 of a new table ``paid``, committed through HAProxy; the primary and its standby."""
    state = cluster.state()
    primary, standby = state.primary(), state.sync_standby
    assert primary is not None
    assert standby is not None
    with psycopg.connect(cluster.door_url(), autocommit=True) as connection:
        connection.execute(PAID)
        connection.execute("INSERT INTO paid VALUES (1, 1000000)")
    return primary, standby


@pytest.mark.fault
def test_a_row_committed_through_haproxy_survives_kill_9_of_the_primary(
    cluster: HaCluster,
) -> None:
    old, standby = paid_on_the_primary(cluster)
    crashed = time.monotonic()
    cluster.nodes[old].crash()
    after = cluster.wait_for(
        lambda state: state.primary() not in {None, old}, "a new primary", FAILOVER_TIMEOUT_S
    )
    promoted = time.monotonic()
    assert after.primary() == standby, "only the synchronous standby may be promoted"
    cluster.wait_for_door(standby, FAILOVER_TIMEOUT_S)
    routed = time.monotonic()
    with psycopg.connect(cluster.door_url(), autocommit=True) as connection:
        assert connection.execute("SELECT id, cents FROM paid").fetchall() == [(1, 1000000)]
    # Strict mode: the new primary commits once the last node is its synchronous standby.
    last = next(n for n in NODES if n not in {old, standby})
    cluster.wait_for(
        lambda state: state.sync_standby == last and last in state.running(),
        f"{last} the new primary's synchronous standby",
        FAILOVER_TIMEOUT_S,
    )
    with psycopg.connect(cluster.door_url(), autocommit=True) as connection:
        connection.execute("INSERT INTO paid VALUES (2, 500)")
        assert connection.execute("SELECT count(*) FROM paid").fetchone() == (2,)
    committed = time.monotonic()
    print(  # noqa: T201 - the figures, with pytest -s
        f"\nfailover after kill -9 of the primary {old}: {standby} promoted after "
        f"{promoted - crashed:.1f} s, HAProxy's door to it after {routed - crashed:.1f} s, "
        f"first new commit after {committed - crashed:.1f} s"
    )
    assert cluster.state().primary() == standby


@pytest.mark.fault
async def test_a_paused_primary_commits_nothing_and_rejoins_without_its_write(
    cluster: HaCluster,
) -> None:
    old, standby = paid_on_the_primary(cluster)
    paused = cluster.nodes[old]
    # A client connected to the server itself, as a libpq multi-host URL would leave it.
    stray = await psycopg.AsyncConnection.connect(paused.url())
    try:
        paused.patroni.pause()
        cluster.wait_for(
            lambda state: state.primary() == standby,
            f"{standby} promoted while {old}'s Patroni is paused",
            FAILOVER_TIMEOUT_S,
        )
        cluster.wait_for_door(standby, FAILOVER_TIMEOUT_S)
        cursor = await stray.execute("SELECT pg_is_in_recovery()")
        assert await cursor.fetchone() == (False,), "the paused node's server is still a primary"
        await stray.execute("INSERT INTO paid VALUES (2, 999)")
        commit = asyncio.ensure_future(stray.commit())
        done, _ = await asyncio.wait({commit}, timeout=BLOCKED_S)
        assert not done, "a primary whose standby was promoted must not commit"
        paused.patroni.resume()
        # Its Patroni finds another leader and demotes it: the COMMIT never reports success.
        done, _ = await asyncio.wait({commit}, timeout=FAILOVER_TIMEOUT_S)
        assert done, "the demoted server ended the session"
        assert isinstance(commit.exception(), psycopg.OperationalError)
    finally:
        await stray.close()

    def rejoined(state: ClusterState) -> bool:
        member, primary = state.members.get(old), state.members.get(standby)
        return (
            state.healthy(len(NODES))
            and member is not None
            and primary is not None
            and member.role == "replica"
            and member.timeline == primary.timeline
        )

    state = cluster.wait_for(rejoined, f"{old} a standby on the new timeline", FAILOVER_TIMEOUT_S)
    assert state.primary() == standby
    with psycopg.connect(cluster.door_url(), autocommit=True) as connection:
        assert connection.execute("SELECT id FROM paid").fetchall() == [(1,)]
    with psycopg.connect(paused.url(), autocommit=True) as connection:
        assert connection.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        assert connection.execute("SELECT id FROM paid").fetchall() == [(1,)]


def test_the_lab_comes_up_with_one_primary_and_one_synchronous_standby(
    shared_cluster: HaCluster,
) -> None:
    state = shared_cluster.state()
    primary = shared_cluster.nodes[state.primary() or ""]
    assert state.sync_standby is not None
    assert door_server(shared_cluster) == (primary.ports.postgres, False)
    with psycopg.connect(primary.url(), autocommit=True) as connection:
        replicas = connection.execute(
            "SELECT application_name, sync_state FROM pg_stat_replication ORDER BY 1"
        ).fetchall()
        settings = connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit')"
        ).fetchall()
        owner = connection.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'jackpot'"
        ).fetchone()
    standbys = set(NODES) - {primary.name}
    assert [name for name, sync in replicas if sync == "sync"] == [state.sync_standby]
    assert {name for name, _ in replicas} <= standbys
    assert dict(settings) == {"fsync": "on", "synchronous_commit": "on"}
    assert owner == ("jackpotd",), "post-bootstrap.sh made the journal's database and role"
    # A planned switchover (deploy/ha/README.md) moves the door with the primary. In
    # synchronous mode only the synchronous standby may take over.
    candidate = state.sync_standby
    shared_cluster.switchover(candidate)
    shared_cluster.wait_for_door(candidate)
    assert door_server(shared_cluster) == (shared_cluster.nodes[candidate].ports.postgres, False)


@pytest.mark.fault
async def test_a_primary_without_a_standby_holds_its_commit_until_one_returns(
    shared_cluster: HaCluster,
) -> None:
    state = shared_cluster.wait_healthy()
    primary = shared_cluster.nodes[state.primary() or ""]
    shared_cluster.wait_for_door(primary.name)
    standbys = [node for name, node in shared_cluster.nodes.items() if name != primary.name]
    with psycopg.connect(shared_cluster.door_url(), autocommit=True) as connection:
        connection.execute(PAID)
    for standby in standbys:
        standby.stop()
    writer = await psycopg.AsyncConnection.connect(shared_cluster.door_url())
    try:
        backend = writer.info.backend_pid
        await writer.execute("INSERT INTO paid VALUES (1, 1000000)")
        commit = asyncio.ensure_future(writer.commit())
        # Never cancelled: cancelling a COMMIT that waits on replication reports it done.
        done, _ = await asyncio.wait({commit}, timeout=BLOCKED_S)
        assert not done, "a primary alone must not commit"
        with psycopg.connect(primary.url(), autocommit=True) as watcher:
            waiting = watcher.execute(
                "SELECT wait_event FROM pg_stat_activity WHERE pid = %s", (backend,)
            ).fetchone()
        assert waiting == ("SyncRep",), "the COMMIT waits on synchronous replication"
        returning = standbys[0]
        returning.start()
        done, _ = await asyncio.wait({commit}, timeout=START_TIMEOUT_S)
        assert done, f"the COMMIT did not return once {returning.name} was back"
        commit.result()
    finally:
        await writer.close()
    with psycopg.connect(shared_cluster.door_url(), autocommit=True) as connection:
        assert connection.execute("SELECT id, cents FROM paid").fetchall() == [(1, 1000000)]
        streaming = connection.execute(
            "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'"
        ).fetchall()
    assert streaming == [(returning.name,)]


def test_haproxy_leads_tables_and_displays_to_the_leading_controller_only(
    shared_cluster: HaCluster,
) -> None:
    shared_cluster.start_brokers()
    # No controller answers /leader 200: the MQTT door leads nowhere.
    shared_cluster.wait_for_door(None, backend="mqtt_leader")
    assert answer(mqtt_connect(shared_cluster)) == b"", "no broker behind the door without a leader"
    leader = shared_cluster.nodes["node2"]
    stand_in = shared_cluster.add(
        Service(
            "leader stand-in node2",
            [sys.executable, "-c", LEADER, str(leader.ports.web), leader.name],
            shared_cluster.directory / "leader-stand-in.log",
        )
    )
    for backend in ("mqtt_leader", "web_leader"):
        shared_cluster.wait_for_door(leader.name, backend=backend)
    table = mqtt_connect(shared_cluster)
    assert answer(table) == CONNACK, "the leader's broker answers through the door"
    door = f"http://{HOST}:{shared_cluster.doors.web}/"
    with urllib.request.urlopen(door, timeout=5) as page:
        assert page.read() == b"display of node2"
    # The leader stops answering: HAProxy closes the door and cuts the table's connection to
    # the node that no longer leads (on-marked-down shutdown-sessions).
    stand_in.stop()
    table.settimeout(FAILOVER_TIMEOUT_S)
    assert answer(table) == b"", "the open connection to the old leader's broker is cut"
    shared_cluster.wait_for_door(None, backend="web_leader")
