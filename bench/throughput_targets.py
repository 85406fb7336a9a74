"""The targets bench/throughput.py judges, over its passes (docs/benchmarks.md, "Targets").

Each pass's summary (bench/throughput.py: ``summarize``) gives the figures; :func:`judge`
judges them over the passes, each target by the rule that suits its figure:

* the throughput ratios (each daemon's against the bare relay's, measured in the same pass):
  on the **median** of the passes, since a slow spell of a shared machine while one side is at
  its limit takes a step off that side alone; how many passes met it is kept beside;
* the daemon's CPU and bytes written per event: on the median of the passes too (a cost,
  which the machine's noise bends either way);
* the p99 latencies: on the **worst** pass (a tail that a single bad pass shows).

A target whose load the run was not given (``--rates``), or whose side it did not run
(``--sides``), is not measured at this size: ``met`` is None (bench/common.py: Target).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from common import Target

if TYPE_CHECKING:
    from collections.abc import Sequence

LATENCY_LOAD: Final = 1000.0
"""The load the latency and CPU targets are judged at."""
WRITES_LOADS: Final = (35.0, 120.0)
"""The loads of tables as they play (about one event a commit), where writes per event count."""
REPORTED_LOADS: Final = (*WRITES_LOADS, LATENCY_LOAD)
"""The loads a pass's summary gives the daemon's per-event figures at."""

THROUGHPUT: Final = Target(">= 0.9 of the bare relay's throughput", 0.9, at_least=True)
POSTGRESQL: Final = Target(">= 0.5 of the bare relay's throughput", 0.5, at_least=True)
"""Lower than the file's: every commit is a round trip to the server (docs/benchmarks.md)."""
CPU: Final = Target("<= 0.30 ms of the daemon's CPU per event at 1000 events/s", 0.30)
LATENCY: Final = Target("<= 5 ms p99 (lock published -> meter shown) at 1000 events/s", 5.0)
WRITES: Final = Target("<= 2048 bytes written by the daemon per event at 35 and 120 events/s", 2048)
"""A journal on an SD card or eMMC wears with every block written (docs/benchmarks.md,
"Writes per event")."""
TABLE_LOADS_LATENCY: Final = Target("<= 10 ms p99 at 35 and 120 events/s", 10.0)
"""What a commit may cost a table at its own pace, while it writes the bytes above."""


def _at(summary: dict[str, Any], figure: str, load: float) -> float | None:
    value: float | None = summary[figure].get(f"{load:.0f}")
    return value


def judge(
    summaries: Sequence[dict[str, Any]], rates: Sequence[float], sides: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Every target over the passes' summaries, for the loads and sides the run was given."""
    passes = len(summaries)

    def ratio_target(target: Target, name: str, daemon: str) -> dict[str, Any]:
        ratios = [summary.get(name) for summary in summaries]
        return target.judge(
            target.median(ratios),
            reached={"relay", daemon} <= set(sides),
            passes_met=sum(1 for ratio in ratios if ratio is not None and target.holds(ratio)),
            passes=passes,
            measured_as="median of the passes",
        )

    def at_loads(
        target: Target, figure: str, loads: Sequence[float], *, worst: bool
    ) -> dict[str, Any]:
        over = target.worst if worst else target.median
        measured = [over([_at(summary, figure, load) for summary in summaries]) for load in loads]
        return target.judge(
            measured[0] if len(loads) == 1 else measured,
            reached="controller" in sides and all(load in rates for load in loads),
            measured_as=f"the {'worst' if worst else 'median'} of the passes",
        )

    return {
        "throughput_ratio_vs_relay": ratio_target(
            THROUGHPUT, "throughput_ratio_vs_relay", "controller"
        ),
        "postgresql_throughput_ratio_vs_relay": ratio_target(
            POSTGRESQL, "postgresql_throughput_ratio_vs_relay", "postgresql"
        ),
        "cpu_ms_per_event": at_loads(CPU, "daemon_cpu_ms_per_event", (LATENCY_LOAD,), worst=False),
        "p99_latency_ms": at_loads(LATENCY, "p99_latency_ms_by_load", (LATENCY_LOAD,), worst=True),
        "bytes_written_per_event": at_loads(
            WRITES, "daemon_bytes_written_per_event", WRITES_LOADS, worst=False
        ),
        "p99_latency_ms_at_table_loads": at_loads(
            TABLE_LOADS_LATENCY, "p99_latency_ms_by_load", WRITES_LOADS, worst=True
        ),
    }


def median_pass(summaries: Sequence[dict[str, Any]]) -> int:
    """The index of the pass whose SQLite ratio is the median (its steps are the top-level)."""
    ratios = [summary.get("throughput_ratio_vs_relay") for summary in summaries]
    return ratios.index(THROUGHPUT.median(ratios))
