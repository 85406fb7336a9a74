"""Benchmark: what the signed heads cost, the high-water mark that keeps history from going back.

docs/benchmarks.md, "Signed heads"; docs/security.md, "History never goes back".

The running sequencer signs its journal's head every ``head_rows`` rows (default 100), or
``head_interval_s`` seconds after a row (default 1), and keeps it in the high-water file
(written beside, flushed, renamed, the folder flushed) before publishing it. Here the same
events (simulated tables' bets, locks and cards) go through the real sequencer on a real journal
file (WAL, ``synchronous=FULL``), in the same run, three ways:

* **baseline**: no signed heads (the sequencer as it was);
* **defaults**: a head every 100 rows or 1 s (what ``jackpotd run`` does);
* **every row**: a head after every commit (``head_rows = 1``), the tightest bound;
* the same two **through the signer**: the controller key held by a real ``jackpotd signer``
  process on a Unix socket, which flushes its own marks before it answers (docs/security.md,
  "The key and the writer are split").

Each is measured twice: one event at a time (a quiet floor: every event its own commit, the
case where a head per commit would cost most) and every table at once (group commit). The
ratio to the baseline of the same run is the cost. A last line times one head alone (sign and
keep it durably). Writes bench/results/heads.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import machine, write_results
from durability import device_events, every_table_at_once, fresh_journal

from controller.journal.high_water import sign_head, write_high_water
from controller.runtime.broadcast import Broadcast
from controller.runtime.heads import HeadSchedule
from controller.runtime.remote_signer import RemoteSigner
from controller.runtime.sequencer import Sequencer
from controller.security.controller_key import ControllerKey, write_key
from controller.security.signer import Signer, as_controller_key

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from controller.events import DeviceInput
    from controller.ledger_journal.sqlite import Journal

WAYS = {
    "baseline": None,
    "defaults": (100, 1.0, False),
    "every row": (1, 1.0, False),
    "signer, defaults": (100, 1.0, True),
    "signer, every row": (1, 1.0, True),
}
"""Each way's (head_rows, head_interval_s, through the signer process); None: no heads."""
ROOT = Path(__file__).resolve().parents[1]
SIGNER_WAIT_S = 20.0


async def run(
    journal: Journal,
    events: Sequence[DeviceInput],
    heads: HeadSchedule | None,
    *,
    concurrent: bool,
) -> dict[str, Any]:
    """Submit the events (one at a time, or every table at once); the rate and heads signed."""
    broadcast = Broadcast()
    sequencer = Sequencer(journal, broadcast)
    sequencer.heads = heads
    runner = asyncio.create_task(sequencer.run())
    start = time.perf_counter()
    if concurrent:
        await every_table_at_once(sequencer, events)
    else:
        for event in events:
            await sequencer.submit(event)
    elapsed = time.perf_counter() - start
    await sequencer.close()
    runner.cancel()
    return {
        "events_per_s": len(events) / elapsed,
        "commits": sequencer.stats.commits,
        "heads": 0 if heads is None else heads.signed,
    }


@contextlib.contextmanager
def signer(directory: Path, key: ControllerKey) -> Iterator[RemoteSigner]:
    """A real ``jackpotd signer`` process with fresh marks, and a client of it."""
    folder = Path(tempfile.mkdtemp(prefix="signer-", dir=directory))
    write_key(folder / "controller.key", key)
    socket_path = folder / "socket"
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "signer", "--key", str(folder / "controller.key"),
         "--socket", str(socket_path), "--state", str(folder / "marks.json"),
         "--controller", "bench", "--log-level", "WARNING"],
        cwd=ROOT, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + SIGNER_WAIT_S
        while True:  # a benchmark's bounded wait for another process's socket, not a test's
            try:
                client = RemoteSigner(socket_path)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.05)
        yield client
    finally:
        process.terminate()
        process.wait(timeout=SIGNER_WAIT_S)


def one_head_ms(directory: Path, key: Signer, count: int) -> float:
    """Milliseconds to sign one head and keep it durably (the median of ``count``)."""
    path = directory / "alone.high-water"
    times = []
    for seq in range(1, count + 1):
        start = time.perf_counter()
        write_high_water(
            path, sign_head(as_controller_key(key), "bench", "", (seq, "ab" * 32), "t")
        )
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1000


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="jackpotd-heads-", dir="/var/tmp"))
    key = ControllerKey.generate()
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = device_events(tables, args.events, args.seed)[: args.events]
    print(f"{len(events):,} events of {args.tables} tables, best of {args.runs} runs")
    steps: list[dict[str, Any]] = []
    for concurrent in (False, True):
        best: dict[str, dict[str, Any]] = {}
        for _ in range(args.runs):  # interleaved, so that every way sees the same disk and load
            for way, setting in WAYS.items():
                with contextlib.ExitStack() as stack:
                    journal = stack.enter_context(fresh_journal(directory / "journal", tables, 1))
                    heads = None
                    if setting is not None:
                        rows, seconds, remote = setting
                        signs: Signer = (
                            stack.enter_context(signer(directory, key)) if remote else key
                        )
                        heads = HeadSchedule(
                            signs, "bench", directory / "journal.high-water",
                            every_rows=rows, every_s=seconds,
                        )  # fmt: skip
                    found = asyncio.run(run(journal, events, heads, concurrent=concurrent))
                if way not in best or found["events_per_s"] > best[way]["events_per_s"]:
                    best[way] = found
        baseline = best["baseline"]["events_per_s"]
        for way, found in best.items():
            step = {
                "submitted": "every table at once" if concurrent else "one event at a time",
                "way": way,
                "events_per_s": round(found["events_per_s"], 1),
                "commits": found["commits"],
                "heads_signed": found["heads"],
                "ratio_vs_baseline": round(found["events_per_s"] / baseline, 3),
            }
            steps.append(step)
            print(
                f"{step['submitted']:>20}, {way:>17}: {step['events_per_s']:9,.0f} events/s, "
                f"{step['commits']:5d} commits, {step['heads_signed']:5d} heads, "
                f"{step['ratio_vs_baseline']:.3f} of the baseline"
            )
    alone = one_head_ms(directory, key, 200)
    print(f"one head alone (sign, write beside, fsync, rename, fsync the folder): {alone:.3f} ms")
    with signer(directory, key) as remote:
        through = one_head_ms(directory, remote, 200)
    print(f"one head alone through the signer (its marks flushed too): {through:.3f} ms")
    results = {
        "benchmark": "heads",
        "machine": machine(),
        "method": {"events": len(events), "tables": args.tables, "runs": args.runs},
        "steps": steps,
        "one_head_ms": round(alone, 3),
        "one_head_through_signer_ms": round(through, 3),
    }
    path = write_results("heads", results)
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
