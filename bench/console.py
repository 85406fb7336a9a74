"""Benchmark: the supervisors' console's cost on the display server, and the tables beside it.

docs/benchmarks.md, "The console's cost on the display server".

The daemon runs as bench/throughput.py's controller side runs it (bench/sides.py: its own
mosquitto, simulated tables on MQTT, a display on ``meter/+``, ``jackpotd run`` readied as an
operator readies it by bench/service.py), with its operator socket configured, so that the
display server serves the console (controller/web/console.py) on its localhost bind. A second
operator, a supervisor, is added with the command line as the manager was; each enrolls a
passkey at the console as a supervisor's tablet does (``/console/api/enroll``, the
registration, the manager's key file signing the enrollment through the operator socket).

The passkeys are software authenticators (tests/support/web/authenticator.py: ES256, the bytes a
browser hands the page, byte for byte), so every action is really signed and checked by the
ledger. The action is a meter correction of one cent to a pool's reserve (``adjust``), up then
down: it can be repeated without end, touches no meter the tables feed, and is always under
dual control, so each one is the page's whole path: a draft, two assertions, the submission
through the operator socket, three requests in all.

Three measurements, in one run, on the same daemon:

* **capacity**: no table plays; one supervisor's tablet signs actions back to back for
  ``--capacity-s``: signed actions per second, requests per second, each action's latency;
  then ``/console/api/state`` polled back to back: polls per second.
* **tables, console idle**: bench/sides.py's step at ``--rate`` events/s: table events
  journaled per second and the lock-to-meter p99 (bench/sides.py ``meter_latencies``).
* **tables, console busy**: the same step while the console takes a steady load: signed
  actions at ``--action-rate`` a second, ``/console/api/state`` polled by ``--screens``
  screens every ``--poll-s`` (the page polls), and the page itself fetched once a second.

Idle and busy take turns (``--passes`` of each, busy first in every other pass, the load
average after each pass kept beside it); the figures are the medians of the passes, and the
ratios busy/idle. The console's load runs in a process of its own, so that the load generator,
which times the tables' locks and meters, is not slowed by it. Nothing is
asserted about speed: the machine is shared (docs/benchmarks.md).

The daemon and the tablet are bench/console_rig.py; the busy step's load and its process,
bench/console_load.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import aiohttp
from common import Mosquitto, machine, ms, percentile, write_results
from console_load import Load, Steady
from console_rig import SOCKET, SUPERVISOR, ConsoleController, Tablet
from service import MANAGER

if TYPE_CHECKING:
    from collections.abc import Sequence


async def capacity(tablet: Tablet, seconds: float) -> dict[str, Any]:
    """Signed actions back to back, then state polls back to back (no table playing)."""
    latencies: list[float] = []
    async with aiohttp.ClientSession() as session:
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            begun = time.perf_counter()
            await tablet.action(session)
            latencies.append(time.perf_counter() - begun)
        elapsed = time.perf_counter() - started
        polls = 0
        polling = time.perf_counter()
        while time.perf_counter() - polling < seconds:
            await tablet.poll(session)
            polls += 1
        polled = time.perf_counter() - polling
    return {
        "actions": len(latencies),
        "actions_per_s": round(len(latencies) / elapsed, 2),
        "requests_per_s": round(3 * len(latencies) / elapsed, 2),
        "p50_action_ms": ms(percentile(latencies, 0.50)),
        "p99_action_ms": ms(percentile(latencies, 0.99)),
        "state_polls_per_s": round(polls / polled, 2),
    }


TABLE_FIGURES: Final = ("events", "delivered", "events_per_s", "kept_up", "p50_latency_ms",
                        "p99_latency_ms", "latency_samples", "cpu_ms_per_event")  # fmt: skip


async def measure(args: argparse.Namespace, directory: Path) -> dict[str, Any]:
    """Capacity, then idle and busy steps taking turns (see the module docstring)."""
    side = ConsoleController(args, directory)
    await side.start()
    try:
        tablet = Tablet(side.base, side.origin)
        socket = directory / SOCKET
        async with aiohttp.ClientSession() as session:
            for operator in (MANAGER, SUPERVISOR):
                await tablet.enroll(session, operator, socket)
        alone = await asyncio.to_thread(asyncio.run, capacity(tablet, args.capacity_s))
        print(
            f"console alone: {alone['actions_per_s']} signed actions/s "
            f"({alone['requests_per_s']} requests/s, p99 {alone['p99_action_ms']} ms an action), "
            f"{alone['state_polls_per_s']} state polls/s",
            flush=True,
        )
        passes: list[dict[str, Any]] = []
        for number in range(1, args.passes + 1):
            # Busy first in every other pass: a machine whose load rises through the run
            # (others' work) would otherwise count against the console each time.
            busy_first = number % 2 == 0
            if not busy_first:
                idle = await side.step(args.rate, args.duration)
            load = Load(tablet, Steady(args.action_rate, args.screens, args.poll_s))
            async with load:
                busy = await side.step(args.rate, args.duration)
            busy |= load.figures()
            if busy_first:
                idle = await side.step(args.rate, args.duration)
            one = {
                "pass": number,
                "order": "busy, idle" if busy_first else "idle, busy",
                "load_average": round(os.getloadavg()[0], 2),
                "idle": {name: idle[name] for name in TABLE_FIGURES},
                "busy": {name: busy[name] for name in TABLE_FIGURES}
                | {name: value for name, value in busy.items() if name.startswith("console_")},
            }
            passes.append(one)
            print(_line(one), flush=True)
        side.daemon.check()
    finally:
        await side.close()
    return {"capacity": alone, "passes": passes}


def _line(one: dict[str, Any]) -> str:
    idle, busy = one["idle"], one["busy"]
    return (
        f"pass {one['pass']}: tables {idle['events_per_s']} ev/s journaled, p99 "
        f"{idle['p99_latency_ms']} ms, console idle | {busy['events_per_s']} ev/s, p99 "
        f"{busy['p99_latency_ms']} ms, console busy ({busy['console_actions_per_s']} signed "
        f"actions/s, {busy['console_requests_per_s']} requests/s)"
    )


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def _daemon_cpu(passes: Sequence[dict[str, Any]], side: str) -> float:
    """The daemon's CPU per table event (the display server, and so the console, is in it)."""
    return float(statistics.median(one[side]["cpu_ms_per_event"]["daemon"] for one in passes))


def summarize(passes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The median of the passes, and the ratios busy over idle."""

    def median(side: str, name: str) -> float | None:
        figures = [one[side][name] for one in passes if one[side][name] is not None]
        return round(statistics.median(figures), 3) if figures else None

    idle_rate, busy_rate = median("idle", "events_per_s"), median("busy", "events_per_s")
    idle_p99, busy_p99 = median("idle", "p99_latency_ms"), median("busy", "p99_latency_ms")
    return {
        "idle_events_per_s": idle_rate,
        "busy_events_per_s": busy_rate,
        "events_per_s_ratio_busy_vs_idle": _ratio(busy_rate, idle_rate),
        "idle_p99_latency_ms": idle_p99,
        "busy_p99_latency_ms": busy_p99,
        "p99_latency_ratio_busy_vs_idle": _ratio(busy_p99, idle_p99),
        "idle_daemon_cpu_ms_per_event": _daemon_cpu(passes, "idle"),
        "busy_daemon_cpu_ms_per_event": _daemon_cpu(passes, "busy"),
        "console_actions_per_s_under_play": median("busy", "console_actions_per_s"),
        "console_requests_per_s_under_play": median("busy", "console_requests_per_s"),
        "every_event_journaled": all(
            one[side]["delivered"] == one[side]["events"]
            for one in passes
            for side in ("idle", "busy")
        ),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=500.0, help="table events/s offered")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per step")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before each step")
    parser.add_argument("--passes", type=int, default=3, help="idle and busy steps, in turn")
    parser.add_argument("--capacity-s", type=float, default=15.0, help="the console alone")
    parser.add_argument(
        "--action-rate", type=float, default=2.0, help="signed actions/s, busy (0: none)"
    )
    parser.add_argument(
        "--screens", type=int, default=4, help="console pages polling, busy (0: none)"
    )
    parser.add_argument("--poll-s", type=float, default=1.0, help="each screen's state poll")
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--occupancy", type=float, default=0.4)
    parser.add_argument("--bet-probability", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    parser.add_argument("--output", default="console", help="bench/results/<name>.json")
    args = parser.parse_args(argv)
    args.broker_set, args.broker_dir = [], None  # bench/load.py's: the broker as it ships
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-bench-", dir="/var/tmp"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"working in {directory}", flush=True)
    measured = asyncio.run(measure(args, directory / "controller"))
    summary = summarize(measured["passes"])
    results = {
        "benchmark": "console",
        "machine": machine()
        | {"broker": Mosquitto(directory).version(), "load_average_at_end": os.getloadavg()},
        "method": {
            "tables": args.tables,
            "pools": args.pools,
            "table_events_per_s_offered": args.rate,
            "step_duration_s": args.duration,
            "warmup_s": args.warmup,
            "passes": args.passes,
            "capacity_s": args.capacity_s,
            "action": "adjust: 1 cent to a pool's reserve and back, dual control, 2 passkeys",
            "requests_per_action": 3,
            "busy_load": {
                "signed_actions_per_s": args.action_rate,
                "screens_polling_state": args.screens,
                "poll_every_s": args.poll_s,
                "page_fetches_per_s": 1,
            },
            "latency": "progressive lock publish -> first meter/<pool> with seq >= the lock's row",
        },
        "capacity": measured["capacity"],
        "summary": summary,
        "passes": measured["passes"],
    }
    path = write_results(args.output, results)
    print(
        f"tables journaled: {summary['idle_events_per_s']} ev/s console idle, "
        f"{summary['busy_events_per_s']} ev/s console busy, ratio "
        f"{summary['events_per_s_ratio_busy_vs_idle']}; p99 lock-to-meter "
        f"{summary['idle_p99_latency_ms']} ms idle, {summary['busy_p99_latency_ms']} ms busy, "
        f"ratio {summary['p99_latency_ratio_busy_vs_idle']}"
    )
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
