"""Every benchmark script in bench/ runs to its end in a short form, so none can rot unseen.

``make bench`` takes the better part of two hours, and nothing else runs it: a benchmark that
no longer starts the daemon the way start-up now requires, or reads a journal column that is
gone, is found only by whoever runs it next. Here each script runs as ``make bench`` runs it
(``python bench/<name>.py`` from the repository root, in its own process), on the same code
path with small sizes: a few tables, a second or two a step, one pass. Nothing is asserted
about speed (a shared 2-core machine's timings prove nothing in seconds); what is asserted is
that it ends with status 0, prints its figures, and writes results that are sane: events
counted, every event the simulated tables sent journaled, ratios above zero. Each script that
judges targets (docs/benchmarks.md, "Targets") prints a line for every one and keeps its entry
in the results; whether one is met is the machine's to say, so only the verdict's shape is
asserted, and a target the short sizes do not reach (1,000 tables, 1,000 events/s) is
``None`` there, not measured rather than missed. The figures go to a temporary folder
(``$JACKPOTD_BENCH_RESULTS``), never over bench/results/.

A script added to bench/ without a short form here fails :func:`test_every_script_has_a_short_form`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT: Final = Path(__file__).resolve().parents[2]
BENCH: Final = ROOT / "bench"
TIMEOUT_S: Final = 180
"""Each short form takes seconds (the longest, throughput, about 30 s on the 2-core machine
with two sides; with its three, 80 s there at a load average of 10)."""


@dataclass(frozen=True)
class ShortForm:
    """A script's small sizes, what it must print, and what its results file must hold."""

    args: tuple[str, ...]
    prints: tuple[str, ...]
    results: str | None = None
    """The name of its ``<name>.json``; None for a script that only prints."""
    check: Callable[[dict[str, Any]], None] | None = None
    targets: dict[str, bool] | None = None
    """The targets it judges, each with whether the short form's sizes reach it."""


def _check_targets(form: ShortForm, stdout: str, results: dict[str, Any]) -> None:
    """A line and an entry for every target, met or not where measured, None where not."""
    assert form.targets is not None
    assert set(results["targets"]) == set(form.targets)
    for name, reached in form.targets.items():
        entry = results["targets"][name]
        assert entry["target"], entry
        if reached:
            assert entry["met"] in (True, False), entry
            verdict = "met" if entry["met"] else "MISSED"
            assert f"target {name} {entry['target']}: {entry['measured']} ({verdict})" in stdout
        else:
            assert entry["met"] is None, entry
            assert entry["measured"] is None, entry
            line = f"target {name} {entry['target']}: None (not measured at this size)"
            assert line in stdout, stdout


def _throughput(results: dict[str, Any]) -> None:
    (step,) = results["steps"]
    for side in ("relay", "controller", "postgresql"):
        figures = step[side]
        assert figures["events"] > 0
        assert figures["delivered"] == figures["events"], figures  # every event sent, journaled
    for daemon in ("controller", "postgresql"):
        figures = step[daemon]
        assert figures["latency_samples"] > 0
        assert figures["unmatched_locks"] == 0
        assert figures["cpu_ms_per_event"]["daemon"] > 0
        assert figures["events_per_commit"] >= 1
    # The database's own processes are counted: its backends commit and write the WAL.
    server = step["postgresql"]
    assert server["postgresql_processes"] >= 1
    assert server["cpu_ms_per_event"]["postgresql"] > 0
    assert server["bytes_written_per_event"]["postgresql"] > 0
    # Whether a side kept up at the short form's load is the machine's to say, not the code's:
    # a shared machine can tip either over for a second. The ratios are computed either way.
    for ratio in (
        results["summary"]["throughput_ratio_vs_relay"],
        results["summary"]["postgresql_throughput_ratio_vs_relay"],
    ):
        assert ratio is None or ratio > 0


def _scale(results: dict[str, Any]) -> None:
    (size,) = results["sizes"]
    assert size["exit_code"] == 0
    assert size["events"] > 0
    assert size["cpu_ms_per_event"] > 0
    assert size["startup_s"] > 0
    assert 0 < size["rss_mb"] <= size["peak_rss_mb"]


def _durability(results: dict[str, Any]) -> None:
    assert results["steps"]
    for step in results["steps"]:
        assert step["events_per_s"] > 0
        assert step["bare_events_per_s"] > 0
    assert results["sequencer"]["events_per_commit"] >= 1
    assert results["summary"]["sequencer_ratio_vs_bare_one_commit_per_event"] > 0


def _postgres(results: dict[str, Any]) -> None:
    for step in results["steps"]:
        assert step["sqlite_events_per_s"] > 0
        assert step["postgresql_events_per_s"] > 0
    assert results["summary"]["sequencer_ratio_postgresql_vs_sqlite"] > 0


def _growth(results: dict[str, Any]) -> None:
    assert results["method"]["rounds"] > 0
    assert (
        0
        < results["this_version"]["bytes_per_round"]
        < results["baseline_schema_9"]["bytes_per_round"]
    )
    # Every row the rounds made is in the rounds' segments (the last row stays live).
    segment = results["archived_segment"]
    assert segment["rows"] == results["method"]["events"]
    assert 0 < segment["bytes_per_round"] < results["this_version"]["bytes_per_round"]


def _heads(results: dict[str, Any]) -> None:
    ways = {(step["submitted"], step["way"]): step for step in results["steps"]}
    assert len(ways) == 10  # five ways, each one event at a time and every table at once
    for (_submitted, way), step in ways.items():
        assert step["events_per_s"] > 0
        assert step["ratio_vs_baseline"] > 0
        assert (step["heads_signed"] == 0) == (way == "baseline")
    assert results["one_head_ms"] > 0
    assert results["one_head_through_signer_ms"] > 0


def _levels(results: dict[str, Any]) -> None:
    steps = {(step["submitted"], step["way"]): step for step in results["steps"]}
    assert len(steps) == 6  # three ways, each one event at a time and every table at once
    pools = results["method"]["pools"]
    for (_submitted, way), step in steps.items():
        assert step["events_per_s"] > 0
        assert step["cpu_ms_per_event"] > 0
        assert step["bytes_per_round"] > 0
        if way == "one level":
            assert step["events_per_s_ratio_vs_one_level"] == 1.0
        # The controller's own rows are the draws and the reveals, nothing else.
        assert step["controller_rows"] == step["mystery_draws"] + step["mystery_hits"]
        if "mystery" in way:
            assert step["mystery_draws"] >= pools  # each grand drawn before its first wager
        else:
            assert step["mystery_draws"] == 0


def _writes(results: dict[str, Any]) -> None:
    lines = {line["line"]: line for line in results["lines"]}
    assert set(lines) == {"bare", "bare + unique id", "journal, 1 event(s)/commit"}
    for line in lines.values():
        assert line["bytes_per_event"] >= line["wal_bytes_per_event"] > 0
        assert line["frames_per_commit"] >= 1
    trees = lines["journal, 1 event(s)/commit"]["frames_per_commit_by_btree"]
    assert trees["journal"] > 0
    assert "device_seqs" not in trees  # written every so many rows, not with each commit
    measured = results["targets"]["bytes_per_event"]["measured"]
    assert measured == lines["journal, 1 event(s)/commit"]["bytes_per_event"]


def _console(results: dict[str, Any]) -> None:
    alone = results["capacity"]
    assert alone["actions"] > 0  # each one signed by two passkeys and applied by the ledger
    assert alone["actions_per_s"] > 0
    assert alone["requests_per_s"] > 0
    assert alone["state_polls_per_s"] > 0
    for one in results["passes"]:
        for side in ("idle", "busy"):
            assert one[side]["events"] > 0
            assert one[side]["delivered"] == one[side]["events"], one  # every event journaled
        assert one["busy"]["console_actions"] > 0
        assert one["busy"]["console_polls"] > 0
    summary = results["summary"]
    assert summary["every_event_journaled"] is True
    assert summary["events_per_s_ratio_busy_vs_idle"] > 0
    ratio = summary["p99_latency_ratio_busy_vs_idle"]
    assert ratio is None or ratio > 0


def _fuzz(results: dict[str, Any]) -> None:
    targets = [results[name] for name in ("serial", "card", "config")]
    targets += [*results["mqtt"].values(), *results["structural"].values()]
    for target in targets:
        assert target["findings"] == []


def _profile(results: dict[str, Any]) -> None:
    for mode in ("daemon", "isolation"):
        found = results[mode]
        assert found["cpu_ms_per_event"] > 0
        _sampled(found, "layers", "ms_per_event")
    startup = results["startup"]
    assert startup["startup_s"] > 0
    assert startup["before_restart_s"] < startup["sampled_startup_s"]
    _sampled(startup, "phases", "seconds")


def _sampled(found: dict[str, Any], parts: str, figure: str) -> None:
    """Where py-spy could attach (root may), the samples add up; elsewhere none are made up."""
    if found["py_spy"] != "sampled":
        assert found[parts] == {}, found
        return
    assert found["samples"] > 0
    assert found[parts], found
    assert abs(sum(part["share"] for part in found[parts].values()) - 1) < 0.01
    assert all(part[figure] >= 0 for part in found[parts].values())


SHORT_FORMS: Final = {
    "analyze.py": ShortForm(
        ("--repeats", "1", "--alone", "fortune-1"), ("jackpotd analyze --all", "ratio to target")
    ),
    "classify.py": ShortForm(("--hands", "2000", "--runs", "1"), ("lines/s", "hands/s", "ratio")),
    "console.py": ShortForm(
        (
            "--rate",
            "200",
            "--duration",
            "2",
            "--warmup",
            "1",
            "--passes",
            "1",
            "--tables",
            "6",
            "--capacity-s",
            "2",
        ),
        ("console alone", "signed actions/s", "console busy", "ratio"),
        "console",
        _console,
    ),
    "durability.py": ShortForm(
        ("--events", "300", "--batches", "1,32", "--runs", "1", "--tables", "4"),
        ("through the sequencer", "group commit"),
        "durability",
        _durability,
        # 4 tables make batches of 4, not the target's 40 tables; no batch of 128 here.
        {"sequencer_ratio_vs_bare_one_commit_per_event": False, "ratio_vs_bare_at_128": False},
    ),
    "postgres_durability.py": ShortForm(
        ("--events", "300", "--batches", "1,32", "--runs", "1", "--tables", "4"),
        ("through the sequencer", "ratio"),
        "postgres_durability",
        _postgres,
    ),
    "heads.py": ShortForm(
        ("--events", "300", "--tables", "4", "--runs", "1"),
        ("of the baseline", "one head alone"),
        "heads",
        _heads,
    ),
    "levels.py": ShortForm(
        ("--events", "300", "--tables", "4", "--runs", "1"),
        ("of one level", "bytes per round"),
        "levels",
        _levels,
    ),
    "journal_growth.py": ShortForm(
        ("--tables", "4", "--rounds", "3"),
        ("bytes per round", "archived"),
        "journal_growth",
        _growth,
        {"bytes_per_round": True, "archived_bytes_per_round": True},
    ),
    "writes.py": ShortForm(
        ("--tables", "4", "--commits", "60", "--page-sizes", "2048", "--batches", "1"),
        ("B/event", "frames/commit"),
        "writes",
        _writes,
        {"bytes_per_event": True},
    ),
    "fuzz.py": ShortForm(
        (
            "--inputs",
            "300",
        ),
        ("findings: 0",),
        "fuzz",
        _fuzz,
    ),
    "profile.py": ShortForm(
        (
            "--rate",
            "200",
            "--duration",
            "1",
            "--warmup",
            "0.5",
            "--tables",
            "4",
            "--events",
            "300",
            "--startup-tables",
            "4",
        ),
        ("ms CPU/event unsampled", "sequencer and journal in isolation", "start-up at 4 tables"),
        "profile",
        _profile,
    ),
    "scale.py": ShortForm(
        ("--tables", "10", "--warmup", "1", "--window", "2"),
        ("ms CPU/event", "start-up"),
        "scale",
        _scale,
        {"startup_s": False, "peak_rss_mb": False},  # judged at 1,000 tables
    ),
    "throughput.py": ShortForm(
        ("--rates", "400", "--duration", "2", "--warmup", "1", "--passes", "1", "--tables", "6"),
        (
            "ev/commit",
            "ms CPU/ev",
            "B written/ev",
            "+ server",
        ),
        "throughput",
        _throughput,
        # One step of 400 events/s: the ratios are measured, not the figures at 35, 120, 1,000.
        {
            "throughput_ratio_vs_relay": True,
            "postgresql_throughput_ratio_vs_relay": True,
            "cpu_ms_per_event": False,
            "p99_latency_ms": False,
            "bytes_written_per_event": False,
            "p99_latency_ms_at_table_loads": False,
        },
    ),
}
"""What ``make bench`` runs, and ``make fuzz``: every script of bench/ with a ``__main__``."""

WORKDIR: Final = frozenset(
    {
        "console.py",
        "durability.py",
        "journal_growth.py",
        "profile.py",
        "scale.py",
        "throughput.py",
        "writes.py",
    }
)
"""The scripts given a ``--workdir`` here (else they make one under /var/tmp and remove it).

Not bench/postgres_durability.py: its server's cluster goes beside the work folder, where the
``postgres`` user it runs as must reach it (tmp_path is root's alone)."""


def test_every_script_has_a_short_form() -> None:
    scripts = {
        path.name for path in BENCH.glob("*.py") if 'if __name__ == "__main__":' in path.read_text()
    }
    assert scripts == set(SHORT_FORMS)


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SHORT_FORMS))
def test_benchmark_runs_to_its_end_in_short(script: str, tmp_path: Path) -> None:
    form = SHORT_FORMS[script]
    results = tmp_path / "results"
    workdir = ("--workdir", str(tmp_path / "work")) if script in WORKDIR else ()
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *form.args, *workdir],
        cwd=ROOT, env=os.environ | {"JACKPOTD_BENCH_RESULTS": str(results)},
        capture_output=True, text=True, timeout=TIMEOUT_S, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for figure in form.prints:
        assert figure in done.stdout, done.stdout
    if form.results is None:
        assert not results.exists()
        return
    written = json.loads((results / f"{form.results}.json").read_text())
    if form.check is not None:
        form.check(written)
    if form.targets is not None:
        _check_targets(form, done.stdout, written)
