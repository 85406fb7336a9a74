"""The failover chaos test: a seeded series of faults on the three-node cluster, checked after each.

:func:`chaos_session` starts the lab cluster (tests/support/ha/ha_cluster.py) with its brokers,
the three supervised controller nodes (:mod:`support.ha.chaos.nodes`) and the floor's process
(:mod:`support.ha.chaos.floor`, its tables reaching HAProxy's MQTT door through a
:class:`support.ha.tcp_proxy.LinkProxy`). :meth:`ChaosSession.run` injects one fault chosen by the
seed (:mod:`support.ha.chaos.faults`), heals it, waits for the cluster to be whole, drains the
floor and checks everything (:mod:`support.ha.chaos.checks`); then the floor plays on.

``python -m support.ha.chaos.run [--runs N] [--tables N] [--seed N]`` (``make chaos``) is the full
form: it writes ``bench/results/failover.json`` with the counts that must be 0, the failover
seconds by fault kind, and the PostgreSQL journal's throughput beside SQLite's measured in
the same run (bench/postgres_durability.py's measurement). Every process is killed, by its
process group, whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import msgspec

from support.drivers.mosquitto import HOST
from support.ha.chaos import checks, faults
from support.ha.chaos.floor import FloorSettings
from support.ha.chaos.nodes import CHILD, ROOT, SITE, Timing, start_nodes
from support.ha.ha_cluster import start_cluster
from support.ha.tcp_proxy import LinkProxy

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from support.ha.chaos.nodes import Nodes
    from support.ha.ha_cluster import HaCluster

FLOOR_S: Final = 240.0
"""The longest the floor may take to answer a command (a drain after a fault)."""
ROUND_PAUSE_S: Final = 6.0
"""About a round every 6 s a table: ten times a busy floor's pace (about one a minute)."""
HIT_EVERY: Final = 4
"""A rigged jackpot hand every fourth round of each table: near-simultaneous hits on the pool."""
RESULTS: Final = ROOT / "bench" / "results" / "failover.json"


class FloorProcess:
    """The floor's process: commands on its standard input, one JSON answer a line."""

    def __init__(self, folder: Path, settings: FloorSettings) -> None:
        path = folder / "floor.json"
        path.write_bytes(msgspec.json.encode(settings))
        self.log = folder / "floor.log"
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "support.ha.chaos.floor", str(path)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=ROOT,
                env=CHILD | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"},
                start_new_session=True,
            )  # fmt: skip
        self._buffer = b""
        self.answer(FLOOR_S)  # ready

    def command(self, line: str, timeout: float = FLOOR_S) -> dict[str, Any]:
        """Send a command; its answer."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(line.encode() + b"\n")
        stdin.flush()
        return self.answer(timeout)

    def answer(self, timeout: float) -> dict[str, Any]:
        """The floor's next line, waited for up to ``timeout``."""
        stdout = self.process.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise TimeoutError(f"the floor said nothing in {timeout:g} s ({self.log})")
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    raise EOFError(f"the floor ended ({self.log}): {self.log.read_text()[-3000:]}")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        """End the floor (its input closed), killed if it does not."""
        with contextlib.suppress(OSError, ValueError):
            stdin: IO[bytes] | None = self.process.stdin
            if stdin is not None:
                stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, 9)
            self.process.wait(10)


@dataclass
class ChaosSession:
    """A running cluster, its nodes, the floor, and every run's findings."""

    cluster: HaCluster
    nodes: Nodes
    tables_link: LinkProxy
    floor: FloorProcess
    rng: random.Random
    results: list[checks.Findings] = field(default_factory=list)

    def run(self, kind: str | None = None) -> checks.Findings:
        """One fault (``kind``, else one the seed chooses), healed, drained and checked."""
        chosen = kind or self.rng.choice(faults.KINDS)
        fault = faults.INJECT[chosen](self.cluster, self.nodes, self.rng, self.tables_link)
        try:
            faults.settle(self.cluster, self.nodes)
        except TimeoutError as error:
            raise AssertionError(
                f"the cluster did not settle after {fault}: {error}\n{self.logs()}"
            ) from error
        drained = self.floor.command("drain")
        if not drained.get("drained"):
            raise AssertionError(f"the floor did not drain after {fault}: {drained}\n{self.logs()}")
        verified = checks.verify(self.nodes.url, ROOT)
        try:
            leader = checks.leader_meters(self.cluster.doors.web)
        except OSError as error:
            raise AssertionError(f"the leader's /api/state: {error}\n{self.logs()}") from error
        wanted = {pool: int(cents) for pool, cents in verified.get("pools", {}).items()}
        followers = self.floor.command(f"meters {json.dumps(wanted)}")
        floor = checks.read_floor(Path(self.cluster.directory) / "floor" / "floor.jsonl")
        found = checks.findings(
            fault, floor=floor, url=self.nodes.url, verified=verified, leader=leader,
            revealed=checks.reveals(self.nodes.url, ROOT),
            followers=followers,
        )  # fmt: skip
        self.results.append(found)
        self.floor.command("resume")
        return found

    def logs(self) -> str:
        """Every process's log tail."""
        return f"{self.cluster.logs()}\n{self.nodes.logs()}"


@contextlib.contextmanager
def chaos_session(tables: int, seed: int, followers: int = 2) -> Iterator[ChaosSession]:
    """The cluster, the nodes and the floor running, the floor playing; all killed after."""
    table_ids = [f"t{n:02d}" for n in range(1, tables + 1)]
    cluster = start_cluster()
    nodes: Nodes | None = None
    floor: FloorProcess | None = None
    link = LinkProxy(HOST, cluster.doors.mqtt)
    try:
        cluster.start_brokers()
        link.start()
        nodes = start_nodes(cluster, table_ids, Timing())
        faults.settle(cluster, nodes)
        folder = cluster.directory / "floor"
        folder.mkdir()
        settings = FloorSettings(
            folder=str(folder), site=SITE, mqtt_host=HOST, mqtt_port=link.port,
            tables=table_ids, seed=seed, round_pause_s=ROUND_PAUSE_S, hit_every=HIT_EVERY,
            followers=followers, closed_after_s=3.0, heartbeat_s=0.5, wait_s=FLOOR_S,
        )  # fmt: skip
        floor = FloorProcess(folder, settings)
        yield ChaosSession(cluster, nodes, link, floor, random.Random(seed))  # noqa: S311 - the faults' order
    finally:
        if floor is not None:
            floor.close()
        if nodes is not None:
            nodes.supervisor.close()
        link.close()
        cluster.close()


def percentile(values: Sequence[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summary(results: Sequence[checks.Findings]) -> dict[str, Any]:
    """The figures of bench/results/failover.json."""
    by_kind: dict[str, list[float]] = {}
    for found in results:
        if found.failover_s is not None:
            by_kind.setdefault(found.kind, []).append(found.failover_s)
    daemon = [s for kind, values in by_kind.items() if kind in faults.DAEMON_KINDS for s in values]
    primary = by_kind.get("primary-kill", [])
    return {
        "runs": len(results),
        "acked_events_lost": sum(f.acked_events_lost for f in results),
        "events_applied_twice": sum(f.events_applied_twice for f in results),
        "jackpots_awarded_twice": sum(f.jackpots_awarded_twice for f in results),
        "display_regressions": sum(f.display_regressions for f in results),
        "wagers_while_closed": sum(f.wagers_while_closed for f in results),
        # The mystery grand's hits in the journal by the last run (the report counts them all),
        # and the reveals of any run that did not check.
        "mystery_hits": results[-1].mystery_hits if results else 0,
        "reveals_unchecked": sum(f.reveals_unchecked for f in results),
        "failover_seconds_p50": {
            "daemon_loss": percentile(daemon, 0.5), "primary_loss": percentile(primary, 0.5),
            **{kind: percentile(values, 0.5) for kind, values in sorted(by_kind.items())},
        },
        "failover_seconds_p99": {
            "daemon_loss": percentile(daemon, 0.99), "primary_loss": percentile(primary, 0.99),
            **{kind: percentile(values, 0.99) for kind, values in sorted(by_kind.items())},
        },
        "targets_s": {"daemon_loss": 10, "primary_loss": 30},
        "failed_runs": [dataclasses.asdict(f) for f in results if not f.passed],
    }  # fmt: skip


def throughput() -> dict[str, Any]:
    """The PostgreSQL journal's write path beside the SQLite file's (bench/postgres_durability)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import postgres_durability  # noqa: PLC0415 - bench/ is on the path only now
    from durability import arguments, device_events  # noqa: PLC0415

    from support.journal.postgres import start_server, stop_server  # noqa: PLC0415

    args = arguments(postgres_durability.__doc__).parse_args(
        ["--events", "4000", "--tables", "20", "--runs", "2", "--batches", "1,32"]
    )

    directory = Path(tempfile.mkdtemp(prefix="jackpotd-chaos-bench-", dir="/var/tmp"))
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = device_events(tables, args.events, args.seed)[: args.events]
    server = start_server()
    try:
        measured: dict[str, Any] = postgres_durability._measure(
            server, directory, tables, events, args
        )
    finally:
        stop_server(server)
    return {
        "summary": measured["summary"],
        "steps": measured["steps"],
        "method": measured["method"],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args(argv)
    started = time.monotonic()
    results: list[checks.Findings] = []
    kinds = list(faults.KINDS)
    with chaos_session(args.tables, args.seed) as session:
        for n in range(args.runs):
            # Every kind in turn, in an order the seed shuffles: each kind again and again.
            if n % len(kinds) == 0:
                session.rng.shuffle(kinds)
            found = session.run(kinds[n % len(kinds)])
            results.append(found)
            sys.stdout.write(
                f"run {n + 1}: {found.kind} ({found.target}) failover {found.failover_s} s, "
                f"{found.stored} events, problems {found.problems}\n"
            )
            sys.stdout.flush()
    document = {
        "benchmark": "failover",
        "seed": args.seed,
        "tables": args.tables,
        "timing": dataclasses.asdict(Timing()),
        **summary(results),
        "runs_detail": [dataclasses.asdict(f) for f in results],
        "throughput": throughput(),
        "wall_s": round(time.monotonic() - started, 1),
    }
    RESULTS.write_text(json.dumps(document, indent=2) + "\n")
    sys.stdout.write(f"results in {RESULTS}\n")
    if any(not f.passed for f in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
