"""The daemon on a PostgreSQL journal: bench/throughput.py's third side (see its docstring).

:class:`PostgresController` is :class:`sides.Controller` (``jackpotd run``, readied as an
operator readies it, on its own broker, with the same tables and display) whose
``[controller] journal`` is a ``postgresql://`` URL: a new database of its own on a cluster
started for the run (:func:`cluster`, as the journal's tests start theirs:
tests/support/journal/postgres.py, ``initdb`` and ``pg_ctl`` on a free loopback port, durable as the
journal requires). The journal is read as the SQLite side reads its file: the tables' events
by their devices' highest ``seq`` (``device_seqs``, which the database's journal updates in
each commit), the locks by their event ids.

The server's work is the side's too: :class:`ClusterCpu` adds the CPU time and the bytes
written to storage of the postmaster and its children (backends, WAL writer, checkpointer,
background writer, autovacuum) as ``postgresql``, from ``/proc``, beside the daemon's. Left
out: the backend of this benchmark's own reading connection (counted apart as
``postgresql_reader``), and whatever a child that ended during the step had used.

:func:`postgresql_summary` gives its figures over a pass; bench/throughput_targets.py judges
its target over the passes.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import ProcessSample
from load import Cpu
from service import Journaled
from sides import Controller

from controller.journal.location import DatabaseUrl
from controller.journal.postgres.connection import connect
from controller.journal.postgres.reads import committed_seq
from controller.journal.postgres.rows import rows_of_kinds, rows_with_ids

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.journal.postgres import PostgresServer, start_server, stop_server

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from controller.journal.rows import Row

CLUSTER_FOLDER = Path("/var/tmp")  # noqa: S108 - where the benchmark's work folder goes too
"""Where the cluster is made: beside the default work folder, on its disk, and reachable by
the ``postgres`` user the server runs as when the benchmark runs as root."""


@contextlib.contextmanager
def cluster() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster for the run (tests/support/journal/postgres.py), removed after it."""
    tempfile.tempdir = str(CLUSTER_FOLDER)
    try:
        server = start_server()
    finally:
        tempfile.tempdir = None
    try:
        yield server
    finally:
        stop_server(server)


class DatabaseJournaled(Journaled):
    """The database's journal, read while the daemon runs (one autocommit connection)."""

    def __init__(self, url: DatabaseUrl) -> None:
        self.database = connect(url, autocommit=True, writes=False)
        found = self.database.execute("SELECT pg_backend_pid()").fetchone()
        self.backend = int(found[0]) if found else 0

    def rows(self) -> int:
        """The last committed row."""
        return committed_seq(self.database)

    def device_events(self) -> int:
        """The events the tables' devices sent that are journaled: the sum of their highs."""
        found = self.database.execute("SELECT COALESCE(SUM(high), 0) FROM device_seqs").fetchone()
        return int(found[0]) if found else 0

    def of_kind(self, kind: str) -> int:
        """How many rows of ``kind`` are journaled."""
        return len(rows_of_kinds(self.database, kind))

    def with_ids(self, event_ids: list[str]) -> Iterable[Row]:
        """The rows of those event ids."""
        return rows_with_ids(self.database, event_ids)

    def close(self) -> None:
        """Release the connection."""
        self.database.close()


def postmaster(server: PostgresServer) -> int:
    """The cluster's postmaster (the first line of its ``postmaster.pid``)."""
    return int((server.data / "postmaster.pid").read_text().split(maxsplit=1)[0])


def children(parent: int) -> list[int]:
    """The processes whose parent is ``parent``, from ``/proc``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            text = stat.read_text()
            if int(text[text.rindex(")") + 2 :].split()[1]) == parent:
                found.append(int(stat.parent.name))
    return found


def samples(pids: Iterable[int]) -> dict[int, ProcessSample]:
    """Each process's sample now (one that has just ended is left out)."""
    taken = {}
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            taken[pid] = ProcessSample.of(pid)
    return taken


@dataclass
class ClusterCpu(Cpu):
    """:class:`load.Cpu`, and the cluster's processes summed as ``postgresql``."""

    postmaster: int = 0
    reader: int = 0
    """The backend of the benchmark's reading connection: counted apart."""
    cluster_before: dict[int, ProcessSample] = field(default_factory=dict)

    def _cluster(self) -> dict[int, ProcessSample]:
        return samples([self.postmaster, *children(self.postmaster)])

    def start(self) -> None:
        """Sample now, the cluster's processes too."""
        super().start()
        self.cluster_before = self._cluster()

    def per_event(self, events: int) -> dict[str, Any]:
        """:meth:`load.Cpu.per_event`, with the server's processes (a new one from zero)."""
        figures = super().per_event(events)
        now, events = self._cluster(), max(events, 1)

        def delta(pid: int) -> tuple[float, int]:
            before = self.cluster_before.get(pid)
            cpu_s = now[pid].cpu_s - (before.cpu_s if before else 0.0)
            return cpu_s, now[pid].written_bytes - (before.written_bytes if before else 0)

        server = [delta(pid) for pid in now if pid != self.reader]
        reader = [delta(pid) for pid in now if pid == self.reader]
        for name, measured in (("postgresql", server), ("postgresql_reader", reader)):
            figures["cpu_ms_per_event"][name] = round(
                sum(cpu for cpu, _ in measured) * 1000 / events, 4
            )
            figures["bytes_written_per_event"][name] = round(
                sum(written for _, written in measured) / events
            )
        figures["postgresql_processes"] = len(server)
        return figures


@dataclass
class PostgresController(Controller):
    """The daemon on a database of its own on ``server`` (dropped when the side closes)."""

    server: PostgresServer | None = None
    database: str = ""

    @property
    def cluster(self) -> PostgresServer:
        """The cluster the side's database is on."""
        if self.server is None:
            raise RuntimeError("the PostgreSQL side needs a running cluster")
        return self.server

    def location(self) -> str:
        """The database's URL."""
        return self.cluster.url(self.database)

    def open_journal(self) -> Journaled:
        """The database's journal, read only."""
        return DatabaseJournaled(DatabaseUrl(self.location()))

    async def start(self) -> None:
        """A new database, then the side as :meth:`sides.Controller.start` starts it."""
        self.database = self.cluster.create_database()
        # First in, last out: dropped once the daemon and the reader have let it go.
        self.stack.callback(self.cluster.drop_database, self.database)
        await super().start()
        reader = self.journaled
        self.cpu = ClusterCpu(
            self.cpu.pids,
            postmaster=postmaster(self.cluster),
            reader=reader.backend if isinstance(reader, DatabaseJournaled) else 0,
        )


# Its figures.


def postgresql_summary(
    steps: Sequence[dict[str, Any]],
    relay: float | None,
    sustained: float | None,
    *,
    limit: bool,
    loads: tuple[float, Sequence[float]],
) -> dict[str, Any]:
    """The side's figures over a pass (bench/throughput.py: summarize).

    ``relay`` and ``sustained`` are the relay's and this side's throughputs, ``limit`` whether
    this side fell behind; ``loads`` the load its p99 latency is given at, and those its CPU
    and bytes written per event are.
    """
    latency_load, reported_loads = loads
    ratio = round(sustained / relay, 3) if relay and sustained else None
    at_load = [s for s in steps if s["load"] == latency_load and "postgresql" in s]
    reported = [s for s in steps if s["load"] in reported_loads and "postgresql" in s]
    return {
        "postgresql_events_per_s": sustained,
        "postgresql_throughput_ratio_vs_relay": ratio,
        "postgresql_limit_reached": limit,
        "postgresql_p99_latency_ms": (
            at_load[0]["postgresql"]["p99_latency_ms"] if at_load else None
        ),
        "postgresql_cpu_ms_per_event": {
            f"{s['load']:.0f}": _daemon_and_server(s["postgresql"]["cpu_ms_per_event"])
            for s in reported
        },
        "postgresql_bytes_written_per_event": {
            f"{s['load']:.0f}": _daemon_and_server(s["postgresql"]["bytes_written_per_event"])
            for s in reported
        },
    }


def _daemon_and_server(figures: dict[str, Any]) -> dict[str, Any]:
    return {"daemon": figures["daemon"], "postgresql": figures["postgresql"]}
