"""Helpers shared by the service benchmarks (throughput, durability, scale, journal growth).

* :class:`Mosquitto`: a broker configured as ``deploy/mosquitto/mosquitto.conf`` ships (the
  delivery directives: ``set_tcp_nodelay``, persistence, ``autosave_on_changes``, queue and
  packet limits...), with only what names this machine changed: a plain listener on loopback,
  anonymous clients (no TLS, password file or ACL), and the persistence folder and user.
* :class:`ProcessSample`, :func:`thread_cpu_s`: CPU time and resident memory of a process, and
  its main thread's CPU apart from its other threads', from ``/proc`` (Linux).
* :func:`machine`, :func:`percentile`, :func:`write_results`: the report's common parts.
* :class:`Target`, :func:`print_targets`: the targets each script judges
  (docs/benchmarks.md, "Targets"), in one shape in every results file and on every output.
* :class:`CaptureLink`: keeps what simulated tables send, to journal it afterwards.

The daemon itself is started by bench/service.py, as an operator starts it. The scripts are
run as ``python bench/<name>.py`` from the repository root, so this module is imported as
``common``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import pwd
import signal
import socket
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import DeviceInput

REPO: Final = Path(__file__).resolve().parent.parent
RESULTS: Final = Path(os.environ.get("JACKPOTD_BENCH_RESULTS") or REPO / "bench" / "results")
"""Where the figures go: ``bench/results``, or ``$JACKPOTD_BENCH_RESULTS`` (the short forms that
``make test`` runs, tests/bench/, write theirs to a temporary folder)."""
MOSQUITTO: Final = os.environ.get("MOSQUITTO", "/usr/sbin/mosquitto")
SHIPPED_BROKER_CONFIG: Final = REPO / "deploy" / "mosquitto" / "mosquitto.conf"
HOST: Final = "127.0.0.1"
SEATS: Final = 6
"""Player seats per simulated table: with the dealer, 7 hands of 7 cards, 49 of the 53 cards.

A table of 7 player seats would need 8 hands (56 cards) when every seat plays, which
:class:`drivers.simulator.SimulatedTable` does not guard against (it fails with IndexError)."""
CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
KEY_FILE: Final = "controller.key"
"""The controller key a configuration names, beside it (``jackpotd run`` signs checkpoints)."""

DROPPED_DIRECTIVES: Final = frozenset(
    {
        # TLS: the benchmark runs plain TCP on loopback.
        "cafile",
        "certfile",
        "keyfile",
        "tls_version",
        "require_certificate",
        "use_identity_as_username",
        # Users and ACL: anonymous clients instead (so no session named after a user).
        "password_file",
        "acl_file",
        "use_username_as_clientid",
        # Logging: errors and warnings only, to the broker's log file.
        "log_type",
        "connection_messages",
    }
)


class CaptureLink:
    """A device link that keeps what a simulated table sends (nothing is acknowledged)."""

    def __init__(self, sink: list[DeviceInput]) -> None:
        self.sink = sink

    async def send(self, event: DeviceInput) -> None:
        """Keep the event; let the other tables play, so that their events interleave."""
        self.sink.append(event)
        await asyncio.sleep(0)

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Heartbeats are never journaled."""


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def broker_config(port: int, persistence: Path, overrides: dict[str, str] | None = None) -> str:
    """The shipped broker configuration, for a plain loopback listener (see the module doc).

    ``overrides`` replaces directives by name (an experiment, e.g. another autosave interval);
    an override the shipped file does not have is appended.
    """
    overrides = overrides or {}
    substituted = {
        "user": f"user {pwd.getpwuid(os.getuid()).pw_name}",
        "persistence_location": f"persistence_location {persistence}/",
        "allow_anonymous": "allow_anonymous true",
        "log_dest": "log_dest stderr\nlog_type error\nlog_type warning",
        "listener": f"listener {port} {HOST}",
    }
    lines = ["# deploy/mosquitto/mosquitto.conf without TLS, users and ACL (bench/common.py)"]
    for shipped_line in SHIPPED_BROKER_CONFIG.read_text(encoding="utf-8").splitlines():
        words = shipped_line.split()
        if not words or words[0].startswith("#") or words[0] in DROPPED_DIRECTIVES:
            continue
        line = f"{words[0]} {overrides[words[0]]}" if words[0] in overrides else shipped_line
        lines.append(substituted.get(words[0], line))
    shipped = {line.split()[0] for line in lines[1:]}
    lines += [f"{key} {value}" for key, value in overrides.items() if key not in shipped]
    return "\n".join([*lines, ""])


class Mosquitto:
    """One mosquitto process on a free loopback port (see :func:`broker_config`)."""

    def __init__(self, directory: Path, overrides: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.overrides = overrides or {}
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def config_file(self) -> Path:
        """Where the configuration is written."""
        return self.directory / "mosquitto.conf"

    def start(self, timeout: float = 10.0) -> None:
        """Start the broker and wait until it accepts connections."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(broker_config(self.port, self.directory, self.overrides))
        with (self.directory / "mosquitto.log").open("ab") as log:
            self.process = subprocess.Popen(
                [MOSQUITTO, "-c", str(self.config_file)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        wait_for_port(self.port, timeout, self.process)

    @property
    def pid(self) -> int:
        """The broker's process id."""
        if self.process is None:
            raise RuntimeError("mosquitto is not running")
        return self.process.pid

    def stop(self) -> None:
        """Stop the broker (SIGTERM) and wait for it."""
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def version(self) -> str:
        """The broker's version line."""
        result = subprocess.run([MOSQUITTO, "-h"], capture_output=True, text=True, check=False)
        return (result.stdout or result.stderr).splitlines()[0].strip()


def wait_for_port(port: int, timeout: float, process: subprocess.Popen[bytes]) -> None:
    """Return once ``port`` accepts connections; raise if ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on {port} after {timeout} s") from None
            time.sleep(0.02)  # nothing tells us when a port opens
        else:
            return


def stop_process(process: subprocess.Popen[bytes], timeout: float = 30.0) -> int:
    """SIGTERM (the service's graceful stop), then SIGKILL if it does not exit in time."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
    return process.returncode


@dataclass(frozen=True, slots=True)
class ProcessSample:
    """A process's CPU time (user + system) and memory, read from ``/proc``."""

    cpu_s: float
    rss_bytes: int
    peak_rss_bytes: int
    written_bytes: int
    """Bytes the process caused to be written to storage (``write_bytes`` of /proc/PID/io)."""

    @classmethod
    def of(cls, pid: int) -> ProcessSample:
        """Sample a process now."""
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        # Fields 14 and 15 of proc(5) (utime, stime) are at 11 and 12 after the command name.
        cpu_s = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        status = {}
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            status[key] = value.strip()
        io = {}
        with contextlib.suppress(OSError):  # readable by the process's owner only
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                key, _, value = line.partition(":")
                io[key] = int(value)
        rss, peak = _kib(status.get("VmRSS", "0 kB")), _kib(status.get("VmHWM", "0 kB"))
        return cls(cpu_s, rss, peak, io.get("write_bytes", 0))


def thread_cpu_s(pid: int) -> tuple[float, float]:
    """CPU seconds of a process's main thread, and of all its other threads together.

    The daemon's event loop is its main thread; the commit thread and the executors' threads
    are the others (bench/profile.py splits an event's CPU between them).
    """
    main = others = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            stat = (task / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            spent = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            if task.name == str(pid):
                main += spent
            else:
                others += spent
    return main, others


def _kib(text: str) -> int:
    return int(text.split(maxsplit=1)[0]) * 1024


def config_text(  # noqa: PLR0913 - a configuration's knobs, all keyword arguments
    *,
    site: str,
    journal: Path | str,
    tables: Sequence[str],
    pools: int,
    transport: str,
    web_port: int,
    broker_port: int | None = None,
    heartbeat_timeout_s: float = 3600,
    simulator: str = "",
    paytable: str = "progressive-1",
    paytable_dirs: Sequence[Path] = (),
) -> str:
    """``jackpotd.toml`` for tables of SEATS seats over ``pools`` pools of ``paytable``.

    Each table offers the Fortune bonus and the progressive; table ``i`` feeds pool
    ``p<i mod pools + 1>``. ``journal`` is a file's path or a ``postgresql://`` URL.
    ``simulator`` is the body of a ``[simulator]`` table, if any; ``paytable_dirs`` the
    folders of a house ``paytable`` (``controller.paytable_dirs``). The
    controller key is :data:`KEY_FILE` beside the file (bench/service.py makes it).
    """
    folders = ", ".join(f'"{folder}"' for folder in paytable_dirs)
    text = (
        f'[controller]\nsite = "{site}"\nid = "{site}"\njournal = "{journal}"\n'
        f'key_file = "{KEY_FILE}"\nheartbeat_timeout_s = {heartbeat_timeout_s}\n'
        + (f"paytable_dirs = [{folders}]\n" if folders else "")
        + "\n"
    )
    if broker_port is not None:
        text += f'[broker]\nhost = "{HOST}"\nport = {broker_port}\nkeepalive_s = 15\n\n'
    for number in range(1, pools + 1):
        text += f'[[pools]]\nid = "p{number}"\npaytable = "{paytable}"\n\n'
    for index, table_id in enumerate(tables):
        text += (
            f'[[tables]]\nid = "{table_id}"\ntransport = "{transport}"\nseats = {SEATS}\n'
            f'bonus = "fortune-1"\nprogressive = "{paytable}"\npool = "p{index % pools + 1}"\n\n'
        )
    if simulator:
        text += f"[simulator]\n{simulator}\n\n"
    return text + f'[web]\nhost = "{HOST}"\nport = {web_port}\n'


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile (``fraction`` 0.5 for p50, 0.99 for p99); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(-(-fraction * len(ordered) // 1)))  # ceil, at least the first
    return ordered[min(rank, len(ordered)) - 1]


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    with Path("/proc/cpuinfo").open() as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory_kib = int(line.split()[1])
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gib": round(memory_kib / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "commit": source_commit(),
    }


def source_commit() -> str:
    """The git commit measured, with ``+changes`` if the working tree differs from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],  # noqa: S607 - git from PATH
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],  # noqa: S607
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head}+changes" if changed else head


def write_results(name: str, results: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json``; return its path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    return path


def ms(seconds: float | None) -> float | None:
    """Seconds as milliseconds, rounded to the microsecond (None stays None)."""
    return None if seconds is None else round(seconds * 1000, 3)


# The targets (docs/benchmarks.md, "Targets").


@dataclass(frozen=True, slots=True)
class Target:
    """A target the project set: a bound on a figure measured beside its baseline in the run."""

    condition: str
    """What it asks, as printed and kept in the results: ``>= 0.9 of the bare relay's ...``."""
    bound: float
    at_least: bool = False
    """True: every figure must be at least :attr:`bound`; False: at most."""

    def judge(
        self,
        measured: float | list[float | None] | None,
        *,
        reached: bool = True,
        **details: float | str,
    ) -> dict[str, Any]:
        """The target's entry in a results file: ``target``, ``measured``, ``met`` (and details).

        ``measured`` is one figure or a list of them (each must hold); None, or a None among
        them, where the run gave none: a miss. ``reached`` says whether the sizes the script was
        run at reach the target's (a short form runs 6 tables, not 1,000): where they do not,
        ``measured`` and ``met`` are None, so that a short run neither meets nor misses a target
        it never measured (what it measured at its own size is in its results all the same).
        """
        figures = measured if isinstance(measured, list) else [measured]
        if not reached or all(figure is None for figure in figures):
            measured = None  # a figure at another size is in the results, not judged here
        met = (
            None
            if not reached
            else all(figure is not None and self.holds(figure) for figure in figures)
        )
        return {"target": self.condition, "measured": measured, "met": met} | details

    def holds(self, figure: float) -> bool:
        """Whether one figure is within the bound."""
        return figure >= self.bound if self.at_least else figure <= self.bound

    def median(self, figures: Sequence[float | None]) -> float | None:
        """The median of a few passes' figures: the worse of the middle two, a missing one worst."""
        ranked = sorted(figures, key=self._badness)
        return ranked[len(ranked) // 2] if ranked else None

    def worst(self, figures: Sequence[float | None]) -> float | None:
        """The worst of the passes' figures (None if one is missing)."""
        return max(figures, key=self._badness, default=None)

    def _badness(self, figure: float | None) -> float:
        if figure is None:
            return float("inf")
        return -figure if self.at_least else figure


VERDICTS: Final = {True: "met", False: "MISSED", None: "not measured at this size"}


def print_targets(targets: dict[str, dict[str, Any]]) -> None:
    """One line a target: ``target <name> <condition>: <measured> (met|MISSED|not measured...)``."""
    for name, entry in targets.items():
        print(f"target {name} {entry['target']}: {entry['measured']} ({VERDICTS[entry['met']]})")
