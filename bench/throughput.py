"""Benchmark: table events through a real broker into the daemon, and meters back out.

docs/benchmarks.md.

Simulated tables (:class:`drivers.simulator.SimulatedTable`, playing whole rounds: bets, lock,
cards, deal complete) each publish on their own MQTT client
(:class:`drivers.simulator_links.MqttTableLink`: QoS 1, one event at a time, the next once the
broker acknowledged it), from this process (the load generator). Three sides are measured at
each load, in turn (``--sides`` chooses), each on its own mosquitto configured as
``deploy/mosquitto`` ships it (on a plain loopback listener: bench/common.py), so that none can
leave another a backlog:

* **relay** (the baseline): a bare subscriber in its own process (QoS 1, persistent session, as
  the controller's source; no controller) receives the events. Throughput is events / (time
  from the step's first publish to the last arrival); latency is each event's publish to its
  arrival.
* **controller**: the daemon (``jackpotd run``, its own process) journals them and publishes
  the meters; a display here subscribes to ``meter/+``. Throughput is events / (time from the
  step's first publish until the last one is committed in the journal). Latency is measured on
  every progressive wager lock (a ``lock`` that contributed to a pool): from its publish to the
  first ``meter/<pool>`` message whose ``seq`` (the journal row of the change) is at least the
  lock's own row, i.e. until a display shows a meter that includes the contribution. The
  journal gives each lock's row, so the correlation is exact. Meters are published retained
  and coalesced per pool: under load an intermediate value can be skipped, its contribution is
  then shown by the next one, and that is what is measured. The locks whose own value was
  published are also reported apart (``*_own_ms``).
* **postgresql**: the same daemon on a PostgreSQL journal, a database of its own on a cluster
  started for the run (bench/postgres_side.py), measured as the controller is; the server's
  processes' CPU and bytes written are counted beside the daemon's, as ``postgresql``.

The load rises step by step (``--rates``, events/s), paced evenly (open loop: the tables
publish on schedule whatever happens downstream). A side keeps up with a step if it delivers
at least KEPT_UP of the offered rate; its throughput is the highest load it keeps up with. A
side that falls behind leaves messages in its broker, and every autosave of the broker (the
shipped configuration saves every 10 changes) rewrites them all: once that starts, it feeds
on itself, so the side is stopped there. It is started again afresh (new broker, and new
daemon and journal) and tried once more at that load (``--retries``), since a passing
disturbance on a shared machine can tip it over; the second time it falls behind is its
last. The bytes the daemon caused to be written to storage per event (``write_bytes`` of
/proc/PID/io) and its CPU per event are given at every step.

A shared machine's speed drifts, and a slow spell while one side is at its limit takes a step
off that side alone; so the whole rising run is done ``--passes`` times (3 by default), each
afresh. The targets (each daemon's throughput against the relay's, the daemon's CPU and
latency at 1,000 events/s, its bytes written and latency at the loads tables make as they
play, 35 and 120 events/s) are judged over the passes by bench/throughput_targets.py: the
ratios on their median, the latencies on the worst pass. Every pass is kept in the results;
the top-level steps are the median pass's.

Writes bench/results/throughput.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import SEATS, Mosquitto, machine, print_targets, write_results
from load import KEPT_UP, overrides
from postgres_side import PostgresController, cluster, postgresql_summary
from sides import Controller, Relay
from throughput_targets import LATENCY_LOAD, REPORTED_LOADS, judge, median_pass

if TYPE_CHECKING:
    from collections.abc import Sequence

    from support.journal.postgres import PostgresServer


SIDES = ("relay", "controller", "postgresql")
DAEMONS = ("controller", "postgresql")
"""The sides that run the daemon (SQLite journal, PostgreSQL journal)."""


# The run.


async def _fresh(
    name: str, args: argparse.Namespace, directory: Path, server: PostgresServer | None
) -> Relay | Controller:
    """A side started anew (its own broker, daemon and journal) in its own folder."""
    folder = directory / name
    folder.mkdir(parents=True, exist_ok=False)
    side: Relay | Controller
    if name.startswith("relay"):
        side = Relay(args, folder)
    elif name.startswith("postgresql"):
        side = PostgresController(args, folder, server=server)
    else:
        side = Controller(args, folder)
    await side.start()
    return side


def chosen_sides(args: argparse.Namespace) -> list[str]:
    """The sides ``--sides`` names, in their order of :data:`SIDES`; an unknown one refused."""
    named = [name.strip() for name in args.sides.split(",") if name.strip()]
    unknown = sorted(set(named) - set(SIDES))
    if unknown or not named:
        raise SystemExit(f"--sides: {', '.join(unknown) or 'none'}: choose from {', '.join(SIDES)}")
    return [name for name in SIDES if name in named]


async def measure(
    args: argparse.Namespace, directory: Path, server: PostgresServer | None = None
) -> list[dict[str, Any]]:
    """Every step, rising, until every side has fallen behind (see the module docstring)."""
    live: dict[str, Relay | Controller] = {}
    sides = chosen_sides(args)
    attempts = dict.fromkeys(sides, 0)
    steps: list[dict[str, Any]] = []
    try:
        for name in sides:
            live[name] = await _fresh(f"{name}-0", args, directory, server)
        for rate in [float(item) for item in args.rates.split(",")]:
            step: dict[str, Any] = {"load": rate}
            for name in sides:
                side = live.get(name)
                while side is not None:
                    result = await side.step(rate, args.duration)
                    step[name] = result | {"attempt": attempts[name] + 1}
                    if result["kept_up"]:
                        break
                    await side.close()  # its broker keeps a backlog: this one is done
                    del live[name]
                    side = None
                    if attempts[name] < args.retries:
                        # A disturbance can tip the broker over (see the docstring): once more
                        # on a fresh broker (and daemon) before calling this load too much.
                        attempts[name] += 1
                        print(f"  {name} fell behind at {rate:,.0f} ev/s: once more, afresh")
                        side = live[name] = await _fresh(
                            f"{name}-{attempts[name]}", args, directory, server
                        )
            steps.append(step)
            print(_line(step), flush=True)
            if not live:
                break
    finally:
        for side in live.values():
            await side.close()
    return steps


def _line(step: dict[str, Any]) -> str:
    parts = [f"load {step['load']:6,.0f} ev/s:"]
    for name in SIDES:
        result = step.get(name)
        if result is None:
            parts.append(f"{name} -")
            continue
        behind = "" if result["kept_up"] else " (behind)"
        parts.append(
            f"{name} {result['events_per_s']:7,.0f} ev/s{behind}, "
            f"p50 {result['p50_latency_ms']} ms, p99 {result['p99_latency_ms']} ms"
        )
    for name in DAEMONS:
        result = step.get(name)
        if result is None:
            continue
        cpu, written = result["cpu_ms_per_event"], result["bytes_written_per_event"]
        server = name == "postgresql"
        parts.append(
            f"{name} {result['events_per_commit']} ev/commit, daemon {cpu['daemon']}"
            f"{f' + server {cpu[name]}' if server else ''} ms CPU/ev, "
            f"{written['daemon']:,}{f' + server {written[name]:,}' if server else ''} "
            "B written/ev"
        )
    return "; ".join(parts)


def summarize(steps: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One pass's figures: each side's throughput, and the daemon's at the targets' loads.

    A side's throughput is the highest load it kept up with; the loads are those
    bench/throughput_targets.py judges the daemon's latency, CPU and writes at.
    """

    def sustained(name: str) -> float | None:
        kept = [s[name]["events_per_s"] for s in steps if name in s and s[name]["kept_up"]]
        return max(kept, default=None)

    def exhausted(name: str) -> bool:
        return any(name in s and not s[name]["kept_up"] for s in steps)

    def at_loads(*figure: str) -> dict[str, Any]:
        found = {}
        for step in steps:
            if step["load"] in REPORTED_LOADS and "controller" in step:
                value = step["controller"][figure[0]]
                found[f"{step['load']:.0f}"] = value[figure[1]] if len(figure) > 1 else value
        return found

    relay, controller = sustained("relay"), sustained("controller")
    summary: dict[str, Any] = {
        "events_per_s": controller,
        "relay_events_per_s": relay,
        "throughput_ratio_vs_relay": round(controller / relay, 3) if relay and controller else None,
        "relay_limit_reached": exhausted("relay"),
        "controller_limit_reached": exhausted("controller"),
        "p99_latency_ms_by_load": at_loads("p99_latency_ms"),
        "daemon_cpu_ms_per_event": at_loads("cpu_ms_per_event", "daemon"),
        "daemon_bytes_written_per_event": at_loads("bytes_written_per_event", "daemon"),
    }
    if any("postgresql" in step for step in steps):
        summary |= postgresql_summary(
            steps,
            relay,
            sustained("postgresql"),
            limit=exhausted("postgresql"),
            loads=(LATENCY_LOAD, REPORTED_LOADS),
        )
    return summary


def combine(summaries: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The summary of the median pass by ratio (the lower one of two), and its index.

    One pass's limits move with the shared machine (see the module docstring); every pass is
    kept in the results, each ratio beside the median pass's summary.
    """
    median = median_pass(summaries)
    summary = summaries[median] | {
        "throughput_ratio_vs_relay_per_pass": [s["throughput_ratio_vs_relay"] for s in summaries]
    }
    if "postgresql_throughput_ratio_vs_relay" in summary:
        summary["postgresql_throughput_ratio_vs_relay_per_pass"] = [
            s.get("postgresql_throughput_ratio_vs_relay") for s in summaries
        ]
    return summary, median


def flatten(step: dict[str, Any]) -> dict[str, Any]:
    """A step with the benchmark table's fields at the top (and each side's details below)."""
    relay, controller = step.get("relay"), step.get("controller")
    flat: dict[str, Any] = {"load_events_per_s": step["load"]}
    flat["events_per_s"] = controller["events_per_s"] if controller else None
    flat["relay_events_per_s"] = relay["events_per_s"] if relay else None
    flat["throughput_ratio_vs_relay"] = (
        round(controller["events_per_s"] / relay["events_per_s"], 3)
        if relay and controller
        else None
    )
    flat["p50_latency_ms"] = controller["p50_latency_ms"] if controller else None
    flat["p99_latency_ms"] = controller["p99_latency_ms"] if controller else None
    postgresql = step.get("postgresql")
    if postgresql is not None:
        flat["postgresql_events_per_s"] = postgresql["events_per_s"]
        flat["postgresql_throughput_ratio_vs_relay"] = (
            round(postgresql["events_per_s"] / relay["events_per_s"], 3) if relay else None
        )
        flat["postgresql_p99_latency_ms"] = postgresql["p99_latency_ms"]
    return flat | {"controller": controller, "relay": relay, "postgresql": postgresql}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rates",
        default="35,120,500,1000,2000,3000,4000,4250,4500,4750,5000,5250,5500,5750,6000,6500,7000,7500,8000,9000",
        help="offered events/s per step, comma-separated, rising",
    )
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per step")
    parser.add_argument(
        "--passes",
        type=int,
        default=3,
        help="whole rising runs; the ratio target is judged on their median",
    )
    parser.add_argument(
        "--sides",
        default=",".join(SIDES),
        help=f"which of {', '.join(SIDES)} to run (one alone is for experiments such as profiling)",
    )
    parser.add_argument(
        "--retries", type=int, default=1, help="fresh starts of a side that falls behind"
    )
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before each step")
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--occupancy", type=float, default=0.4)
    parser.add_argument("--bet-probability", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument(
        "--broker-set",
        action="append",
        default=[],
        metavar="DIRECTIVE=VALUE",
        help="change a directive of the shipped broker configuration (experiments only)",
    )
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    parser.add_argument(
        "--broker-dir", type=Path, help="the brokers' persistence folder (default: in the workdir)"
    )
    parser.add_argument("--output", default="throughput", help="bench/results/<name>.json")
    args = parser.parse_args(argv)
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-bench-", dir="/var/tmp"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"working in {directory}", flush=True)
    passes: list[list[dict[str, Any]]] = []
    with contextlib.ExitStack() as stack:
        # One cluster for the run; each fresh start of the side has a new database on it.
        server = stack.enter_context(cluster()) if "postgresql" in chosen_sides(args) else None
        for number in range(1, args.passes + 1):
            if args.passes > 1:
                print(f"pass {number} of {args.passes}", flush=True)
            folder = directory / f"pass-{number}"
            folder.mkdir()
            passes.append(asyncio.run(measure(args, folder, server)))
    summaries = [summarize(one) for one in passes]
    summary, median = combine(summaries)
    rates = [float(item) for item in args.rates.split(",")]
    targets = judge(summaries, rates, chosen_sides(args))
    steps = passes[median]
    results = {
        "benchmark": "throughput",
        "machine": machine() | {"broker": Mosquitto(directory).version()},
        "broker_overrides": overrides(args),
        "method": {
            "tables": args.tables,
            "pools": args.pools,
            "seats": SEATS,
            "occupancy": args.occupancy,
            "bet_probability": args.bet_probability,
            "step_duration_s": args.duration,
            "warmup_s": args.warmup,
            "kept_up": f"delivers every event, at {KEPT_UP:.0%} of the offered rate or more",
            "latency": "progressive lock publish -> first meter/<pool> with seq >= the lock's row",
        },
        "summary": summary,
        "targets": targets,
        "steps": [flatten(step) for step in steps],
        "passes": [
            {
                "pass": number,
                "summary": one_summary,
                "steps": [flatten(step) for step in one],
            }
            for number, (one, one_summary) in enumerate(zip(passes, summaries, strict=True), 1)
        ],
    }
    path = write_results(args.output, results)
    if args.passes > 1:
        ratios = summary["throughput_ratio_vs_relay_per_pass"]
        print(f"ratio per pass: {ratios}; the median pass is pass {median + 1}")
    if "postgresql_throughput_ratio_vs_relay_per_pass" in summary and args.passes > 1:
        print(
            f"postgresql ratio per pass: {summary['postgresql_throughput_ratio_vs_relay_per_pass']}"
        )
    on_postgresql = (
        f", postgresql {summary['postgresql_events_per_s']} ev/s"
        if "postgresql_events_per_s" in summary
        else ""
    )
    print(
        f"throughput: controller {summary['events_per_s']} ev/s{on_postgresql}, relay "
        f"{summary['relay_events_per_s']} ev/s"
        f"{'' if summary['relay_limit_reached'] else ' (relay limit not reached)'}"
    )
    print_targets(targets)
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
