"""Benchmark: memory and CPU per event as the floor grows: 10, 100 and 1,000 tables.

docs/benchmarks.md.

For each size the daemon runs as in production (``jackpotd run``, its own process, on a journal
an operator readied: bench/service.py) on a configuration of that many tables, spread over a
few pools, whose transport is ``simulator``: each table's bet sensor, shoe and console are
simulated in the daemon's process
(:mod:`drivers.simulator`) and play whole rounds back to back, every event waiting for its
journal commit as a device waits for its acknowledgement. So the load grows with the floor,
and the sequencer's batches with it. After a warm-up, over a measured window:

* **events/s**: the tables' events journaled (read from the journal, counted by their devices'
  sequence numbers: the controller's own rows, its checkpoints, are not the tables' load);
* **CPU per event**: the daemon's CPU time (user + system, from ``/proc``) over the window,
  divided by those events. It includes the simulated devices, which live in the same
  process (they are a small part: they only pick cards and build events);
* **memory**: the daemon's resident set at the end of the window, and its peak (VmHWM);
* **start-up**: from the daemon's process started until it answers ``/healthz``, which it
  does once it serves, its start-up self-check (the installed files against the approved
  manifest) done.

The targets are judged at 1,000 tables (:data:`TARGET_TABLES`): start-up and peak memory,
beside the smaller floors of the same run; a run without that size does not measure them.

Writes bench/results/scale.json.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import (
    HOST,
    SEATS,
    ProcessSample,
    Target,
    config_text,
    free_port,
    machine,
    print_targets,
    write_results,
)
from service import Daemon, Journaled

if TYPE_CHECKING:
    from collections.abc import Sequence

TARGET_TABLES = 1000
STARTUP: Final = Target("<= 2 s from start to serving at 1000 tables, the self-check included", 2.0)
RSS: Final = Target("<= 150 MB peak resident memory at 1000 tables", 150.0)
MB = 1024 * 1024


def _wait_ready(web_port: int, daemon: Daemon, timeout: float) -> float:
    """Wait until the daemon answers /healthz; return how long start-up took."""
    start = time.perf_counter()
    deadline = start + timeout
    while True:
        daemon.check()
        try:
            url = f"http://{HOST}:{web_port}/healthz"
            with urllib.request.urlopen(url, timeout=2):
                return time.perf_counter() - start
        except OSError:
            if time.perf_counter() > deadline:
                raise
            time.sleep(0.1)  # nothing tells us when the service is up


def measure(
    directory: Path, tables: int, pools: int, warmup_s: float, window_s: float
) -> dict[str, Any]:
    """One floor size: start the daemon, warm up, measure, stop."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    journal = directory / "journal.db"
    web_port = free_port()
    config = directory / "jackpotd.toml"
    config.write_text(
        config_text(
            site="scale",
            journal=journal,
            tables=[f"t{n:04d}" for n in range(1, tables + 1)],
            pools=pools,
            transport="simulator",
            web_port=web_port,
            heartbeat_timeout_s=30,
            simulator="round_interval_s = 0.001\nseed = 1",
        )
    )
    daemon = Daemon(config)
    daemon.start()
    try:
        startup_s = _wait_ready(web_port, daemon, timeout=300)
        time.sleep(warmup_s)
        daemon.check()
        journaled = Journaled(journal)
        before, events_before = ProcessSample.of(daemon.pid), journaled.device_events()
        started = time.perf_counter()
        time.sleep(window_s)
        after, events_after = ProcessSample.of(daemon.pid), journaled.device_events()
        elapsed = time.perf_counter() - started
        journaled.close()
        daemon.check()
    finally:
        code = daemon.stop()
    events = events_after - events_before
    cpu_s = after.cpu_s - before.cpu_s
    return {
        "tables": tables,
        "seats": SEATS,
        "pools": pools,
        "startup_s": round(startup_s, 2),
        "events": events,
        "events_per_s": round(events / elapsed, 1),
        "cpu_ms_per_event": round(cpu_s * 1000 / events, 4) if events else None,
        "cpu_cores_used": round(cpu_s / elapsed, 2),
        "rss_mb": round(after.rss_bytes / MB, 1),
        "peak_rss_mb": round(after.peak_rss_bytes / MB, 1),
        "journal_mb": round(sum(p.stat().st_size for p in directory.glob("journal.db*")) / MB, 1),
        "exit_code": code,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="10,100,1000", help="floor sizes, comma-separated")
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
    parser.add_argument("--window", type=float, default=20.0, help="seconds measured")
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    args = parser.parse_args(argv)
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-scale-", dir="/var/tmp"))
    sizes = []
    for tables in [int(item) for item in args.tables.split(",")]:
        result = measure(directory / f"t{tables}", tables, args.pools, args.warmup, args.window)
        sizes.append(result)
        print(
            f"{tables:5d} tables: {result['events_per_s']:8,.0f} events/s, "
            f"{result['cpu_ms_per_event']} ms CPU/event ({result['cpu_cores_used']} cores), "
            f"RSS {result['rss_mb']} MB (peak {result['peak_rss_mb']} MB), "
            f"start-up {result['startup_s']} s",
            flush=True,
        )
    judged = next((size for size in sizes if size["tables"] == TARGET_TABLES), None)
    results: dict[str, Any] = {
        "benchmark": "scale",
        "machine": machine(),
        "method": {
            "pools": args.pools,
            "seats": SEATS,
            "warmup_s": args.warmup,
            "window_s": args.window,
            "load": "simulated tables in the daemon's process, rounds back to back",
        },
        "sizes": sizes,
        "targets": {
            "startup_s": STARTUP.judge(
                judged["startup_s"] if judged else None, reached=judged is not None
            ),
            "peak_rss_mb": RSS.judge(
                judged["peak_rss_mb"] if judged else None, reached=judged is not None
            ),
        },
    }
    path = write_results("scale", results)
    print_targets(results["targets"])
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
