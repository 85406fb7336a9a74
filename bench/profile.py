"""Benchmark: where the daemon's time goes, per event and at start-up, sampled with py-spy.

docs/benchmarks.md, "Where an event's time goes" and "Where start-up's time goes".

Three modes (``--modes``), each measured beside its baseline in the same run:

* **daemon**: ``jackpotd run`` as an operator starts it (bench/service.py), on its broker, fed
  by the simulated tables of bench/load.py at a steady ``--rate`` (the controller side of
  bench/throughput.py). One step unsampled gives the daemon's CPU per event (the baseline);
  the next, alike, is sampled by ``py-spy record --nonblocking --gil --format raw`` on the
  running process: the stacks of the thread that holds the interpreter's lock, so that a
  thread waiting (on a core of a full machine, on an fsync, on SQLite's COMMIT) is no
  sample. The unsampled step's CPU is split between the main thread (the event loop) and the
  others (the commit thread, executors) as ``/proc`` counts each; a layer's cost per event
  is its share of each one's samples times that one's CPU per event (bench/profile_layers.py
  says which frames are whose). The other threads' CPU with no sample (SQLite committing
  without the lock) is the commit's.
* **isolation**: the sequencer and the journal in this process, without the broker or the
  service: simulated tables' events, every table submitting at once (bench/durability.py's
  rig), signed heads as the daemon signs them (every 100 rows or 1 s); a run unsampled, then
  one sampled, on fresh journals.
* **startup**: the daemon at ``--startup-tables`` tables (bench/scale.py's floor): started
  once unsampled (start to ``/healthz``, the self-check included: the baseline), then afresh
  with py-spy attached as soon as it has started itself again without a bytecode cache
  (controller/security/bytecode.py); the samples by phase, in seconds (every sample, the
  lock held or not: start-up is one thread, and hashing a file holds no lock).

py-spy reads another process's memory (ptrace): as root it can; elsewhere it may be refused
(``kernel.yama.ptrace_scope``). Then each mode still runs and gives its unsampled figures, and
says that the layers were not measured. The machine is shared: the load average is kept
beside each figure. Writes bench/results/profile.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import ProcessSample, config_text, free_port, machine, thread_cpu_s, write_results
from durability import device_events, every_table_at_once, fresh_journal
from profile_layers import Split, by_layer, by_phase, hottest
from scale import MB, _wait_ready
from service import Daemon, approve_site
from sides import Controller

from controller.runtime.broadcast import Broadcast
from controller.runtime.heads import HeadSchedule
from controller.runtime.sequencer import Sequencer
from controller.security.bytecode import NOWHERE
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from controller.events import DeviceInput

MODES: Final = ("daemon", "isolation", "startup")
PY_SPY: Final = Path(sys.executable).with_name("py-spy")
UNSAMPLED: Final = "commit (the commit thread, SQLite's COMMIT)"
"""Where the other threads' CPU goes when none of their samples held the interpreter's lock."""
ATTACH_S: Final = 30.0
"""How long the daemon may take to start itself again without a cache."""


class Spy:
    """``py-spy record`` of one process into a raw file, from :meth:`start` to :meth:`stop`."""

    def __init__(self, pid: int, output: Path, rate: int, *, gil: bool = True) -> None:
        self.output = output
        self.log = output.with_suffix(".log")
        self.samples = 0
        self.refused = "" if PY_SPY.exists() else f"{PY_SPY} is not installed (the bench extra)"
        self.process: subprocess.Popen[bytes] | None = None
        if not self.refused:
            command = [str(PY_SPY), "record", "--pid", str(pid), "--format", "raw"]
            command += ["--output", str(output), "--rate", str(rate), "--nonblocking"]
            command += ["--gil"] if gil else []
            with self.log.open("wb") as log:
                self.process = subprocess.Popen(command, stdout=log, stderr=log)

    def stop(self) -> Path | None:
        """Stop sampling; the raw file, or None (and :attr:`refused` says why)."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.output.exists() and self.output.stat().st_size > 0:
            split = by_layer(self.output)
            self.samples = split.working + split.waits
            return self.output
        if not self.refused:
            said = self.log.read_text(errors="replace").strip().splitlines()
            self.refused = f"py-spy sampled nothing: {said[-1] if said else 'no output'}"
        return None


def load() -> float:
    """The machine's load average over the last minute."""
    return round(os.getloadavg()[0], 2)


def shares(split: Split, main_ms: float, others_ms: float) -> dict[str, dict[str, float]]:
    """Each layer's cost in ms per event and its share of the CPU, costliest first.

    The main thread's CPU per event is shared out by its working samples, the other threads'
    by theirs (bench/profile_layers.py): a layer's cost is what it took of each.
    """
    cost: dict[str, float] = {}
    for counts, per_event in ((split.main, main_ms), (split.others, others_ms)):
        total = sum(counts.values())
        for name, count in counts.items():
            cost[name] = cost.get(name, 0.0) + count / total * per_event
        if not total and per_event:  # no sample holds the lock: SQLite's COMMIT, in C
            cost[UNSAMPLED] = cost.get(UNSAMPLED, 0.0) + per_event
    spent = sum(cost.values()) or 1.0
    return {
        name: {"share": round(ms / spent, 4), "ms_per_event": round(ms, 4)}
        for name, ms in sorted(cost.items(), key=lambda item: -item[1])
    }


def threads_split(
    total_ms: float, before: tuple[float, float], after: tuple[float, float]
) -> tuple[float, float]:
    """``total_ms`` split between the main thread and the others as their CPU grew."""
    main, others = after[0] - before[0], after[1] - before[1]
    spent = main + others
    if spent <= 0:
        return total_ms, 0.0
    return total_ms * main / spent, total_ms * others / spent


def print_layers(title: str, found: dict[str, Any]) -> None:
    """The per-layer table of one mode."""
    print(f"{title}: {found['cpu_ms_per_event']} ms CPU/event unsampled, load {found['load']}")
    if not found["layers"]:
        print(f"  layers not measured: {found['py_spy']}")
        return
    for name, layer in found["layers"].items():
        print(f"  {name:<46} {layer['share']:6.1%} {layer['ms_per_event']:8.4f} ms/event")
    print(
        f"  ({found['samples']} samples, {found['waiting_samples']} of them waiting; main thread "
        f"{found['main_thread_ms']} ms, other threads {found['other_threads_ms']} ms an event; "
        f"the sampled step {found['sampled_cpu_ms_per_event']} ms)"
    )


def _sampled(spy: Spy, recording: Path | None, main_ms: float, others_ms: float) -> dict[str, Any]:
    """A mode's sampled figures: the layers, the samples, the hottest functions."""
    split = by_layer(recording) if recording else None
    return {
        "load": load(),
        "main_thread_ms": round(main_ms, 4),
        "other_threads_ms": round(others_ms, 4),
        "samples": spy.samples,
        "waiting_samples": split.waits if split else 0,
        "py_spy": spy.refused or "sampled",
        "layers": shares(split, main_ms, others_ms) if split else {},
        "hottest": hottest(recording) if recording else [],
    }


# The daemon under a steady load.


async def profile_daemon(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The daemon at ``--rate``: a step unsampled, then a step sampled (see the docstring)."""
    side = Controller(args, folder)
    await side.start()
    try:
        before = thread_cpu_s(side.daemon.pid)
        plain = await side.step(args.rate, args.duration)
        main_ms, others_ms = threads_split(
            plain["cpu_ms_per_event"]["daemon"], before, thread_cpu_s(side.daemon.pid)
        )
        spy = Spy(side.daemon.pid, folder / "daemon.raw", args.sample_rate)
        try:
            sampled = await side.step(args.rate, args.duration)
        finally:
            recording = spy.stop()
    finally:
        await side.close()
    cpu = plain["cpu_ms_per_event"]["daemon"]
    return {
        "offered_events_per_s": args.rate,
        "events_per_s": plain["events_per_s"],
        "events_per_commit": plain["events_per_commit"],
        "cpu_ms_per_event": cpu,
        "sampled_cpu_ms_per_event": sampled["cpu_ms_per_event"]["daemon"],
        **_sampled(spy, recording, main_ms, others_ms),
    }


# The sequencer and the journal in this process.


async def _sequence(folder: Path, events: Sequence[DeviceInput], tables: list[str]) -> float:
    """The events through a fresh journal's sequencer, heads signed; CPU seconds taken."""
    journal = fresh_journal(folder, tables, 4)
    sequencer = Sequencer(journal, Broadcast())
    key = ControllerKey.generate()
    sequencer.heads = HeadSchedule(key, "bench", folder / "journal.high-water")
    runner = asyncio.create_task(sequencer.run())
    started = time.process_time()
    await every_table_at_once(sequencer, events)
    spent = time.process_time() - started
    await sequencer.close()
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner
    journal.close()
    return spent


def profile_isolation(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The sequencer and journal alone: a run unsampled, then one sampled (this process)."""
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = device_events(tables, args.events, 20261202)[: args.events]
    before = thread_cpu_s(os.getpid())
    plain = asyncio.run(_sequence(folder / "plain", events, tables))
    cpu = round(plain * 1000 / len(events), 4)
    main_ms, others_ms = threads_split(cpu, before, thread_cpu_s(os.getpid()))
    spy = Spy(os.getpid(), folder / "isolation.raw", args.sample_rate)
    try:
        sampled = asyncio.run(_sequence(folder / "sampled", events, tables))
    finally:
        recording = spy.stop()
    return {
        "events": len(events),
        "cpu_ms_per_event": cpu,
        "sampled_cpu_ms_per_event": round(sampled * 1000 / len(events), 4),
        **_sampled(spy, recording, main_ms, others_ms),
    }


# Start-up at many tables.


@contextlib.contextmanager
def started(folder: Path, tables: int) -> Iterator[tuple[Daemon, int]]:
    """A readied site of ``tables`` simulated tables (bench/scale.py's) and its daemon."""
    folder.mkdir(parents=True)
    web_port = free_port()
    config = folder / "jackpotd.toml"
    config.write_text(
        config_text(
            site="scale", journal=folder / "journal.db",
            tables=[f"t{n:04d}" for n in range(1, tables + 1)], pools=4,
            transport="simulator", web_port=web_port, heartbeat_timeout_s=30,
            simulator="round_interval_s = 0.001\nseed = 1",
        )
    )  # fmt: skip
    approve_site(config)
    daemon = Daemon(config)
    daemon.approved = True
    try:
        yield daemon, web_port
    finally:
        daemon.stop()


def _restarted(daemon: Daemon) -> float:
    """Wait until the daemon runs without a bytecode cache; seconds since it was started."""
    begun = time.perf_counter()
    deadline = begun + ATTACH_S
    while NOWHERE.encode() not in Path(f"/proc/{daemon.pid}/cmdline").read_bytes():
        daemon.check()
        if time.perf_counter() > deadline:
            raise TimeoutError("the daemon did not start itself again without a cache")
        time.sleep(0.002)  # an exec tells nobody: the command line is read until it changes
    return time.perf_counter() - begun


def profile_startup(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Start-up unsampled (the figure), then afresh, sampled from the restart on."""
    with started(folder / "plain", args.startup_tables) as (daemon, port):
        daemon.start()
        plain = _wait_ready(port, daemon, timeout=300)
        peak = ProcessSample.of(daemon.pid).peak_rss_bytes
    with started(folder / "sampled", args.startup_tables) as (daemon, port):
        daemon.start()
        before_restart = _restarted(daemon)
        spy = Spy(daemon.pid, folder / "startup.raw", args.sample_rate, gil=False)
        try:
            sampled = before_restart + _wait_ready(port, daemon, timeout=300)
        finally:
            recording = spy.stop()
    phases = by_phase(recording) if recording else {}
    return {
        "tables": args.startup_tables,
        "startup_s": round(plain, 2),
        "peak_rss_mb_at_ready": round(peak / MB, 1),
        "sampled_startup_s": round(sampled, 2),
        "before_restart_s": round(before_restart, 3),
        "load": load(),
        "samples": spy.samples,
        "py_spy": spy.refused or "sampled",
        "phases": {
            name: {"seconds": round(count / args.sample_rate, 2), "share": round(count / total, 4)}
            for total in [sum(phases.values()) or 1]
            for name, count in sorted(phases.items(), key=lambda item: -item[1])
        },
        "hottest": hottest(recording, 20) if recording else [],
    }


def print_startup(found: dict[str, Any]) -> None:
    """Where start-up's seconds went."""
    print(
        f"start-up at {found['tables']} tables: {found['startup_s']} s unsampled "
        f"(sampled run {found['sampled_startup_s']} s, of which {found['before_restart_s']} s "
        f"before it started itself again uncached), peak RSS {found['peak_rss_mb_at_ready']} "
        f"MB, load {found['load']}"
    )
    if not found["phases"]:
        print(f"  phases not measured: {found['py_spy']}")
    for name, phase in found["phases"].items():
        print(f"  {name:<50} {phase['seconds']:6.2f} s {phase['share']:6.1%}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default=",".join(MODES), help="of daemon,isolation,startup")
    parser.add_argument("--rate", type=float, default=1000.0, help="daemon: events/s offered")
    parser.add_argument("--duration", type=float, default=20.0, help="daemon: seconds a step")
    parser.add_argument("--warmup", type=float, default=2.0, help="daemon: seconds before a step")
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--occupancy", type=float, default=0.4)
    parser.add_argument("--bet-probability", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--events", type=int, default=6000, help="isolation: events")
    parser.add_argument("--startup-tables", type=int, default=1000)
    parser.add_argument("--sample-rate", type=int, default=200, help="py-spy samples a second")
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    parser.add_argument(
        "--keep", action="store_true", help="keep the work folder and its py-spy recordings"
    )
    args = parser.parse_args(argv)
    args.broker_set, args.broker_dir = [], None  # the shipped broker, as bench/load.py has it
    modes = [mode for mode in MODES if mode in args.modes.split(",")]
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-profile-", dir="/var/tmp"))
    directory.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"benchmark": "profile", "machine": machine(), "load": load()}
    results["method"] = {
        "rate": args.rate, "duration_s": args.duration, "tables": args.tables,
        "events": args.events, "startup_tables": args.startup_tables,
        "sample_rate": args.sample_rate,
        "py_spy": "record --nonblocking --format raw (--gil but at start-up)",
    }  # fmt: skip
    if "daemon" in modes:
        results["daemon"] = asyncio.run(profile_daemon(args, directory / "daemon"))
        print_layers(f"the daemon at {args.rate:,.0f} events/s offered", results["daemon"])
    if "isolation" in modes:
        results["isolation"] = profile_isolation(args, directory / "isolation")
        print_layers("the sequencer and journal in isolation", results["isolation"])
    if "startup" in modes:
        results["startup"] = profile_startup(args, directory / "startup")
        print_startup(results["startup"])
    path = write_results("profile", results)
    if args.keep:
        print(f"py-spy's recordings (*.raw) kept in {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
