"""Benchmark: what levels cost, against a one-level pool measured in the same run.

docs/benchmarks.md, "Levels".

The same events (simulated tables of 6 seats and a dealer: bets, locks, cards, deal complete,
a $1 progressive wager) go through the real sequencer on a real journal file (WAL,
``synchronous=FULL``), on tables configured three ways:

* **one level** (the baseline): the seed ``progressive-1`` (58 Pa. Code § 688a.12(d),
  Paytable 1), one meter per pool;
* **four levels**: a $1 house paytable of four hand-paid levels (grand, major, minor, mini:
  each a pool of its own in the ledger, docs/money.md "Levels"), the same 28 % of the wager
  spread over them, so that every wager makes four contributions instead of one;
* **four levels, a mystery grand**: the same, the grand a must-hit-by level from $10 to $20 at
  10 % of the wager, its amount past the trigger onto the major. Its trigger is reached about
  every fifty wagers, so the draws and reveals (each a row signed with the controller key, the
  keeper asked after every lock: controller/runtime/mystery_watch.py) come far more often than
  on a floor, where a grand takes weeks: an upper bound on what the sealed trigger costs.

Each journal is readied as an operator readies one (bench/service.py: the controller key, a
manager, the approved configuration), then opened in this process, its sequencer given the
mystery watch the daemon wires (controller/service/mystery_keeper.py). Each is measured two
ways: one event at a time (a quiet floor: every event its own commit) and every table at once
(group commit; the sequencer ends a batch at each lock that feeds a mystery level, so that the
keeper is asked before the next event is applied). The figures: events per second, the
process's CPU time per event (the journal's commit thread included), commits, the rows the
controller added (draws and reveals), and the journal's bytes per round; each against the one
level of the same run and mode. Best of ``--runs`` runs, the three interleaved so that each
sees the same disk and load. Writes bench/results/levels.json.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import KEY_FILE, config_text, machine, write_results
from durability import device_events, every_table_at_once
from service import approve_site

from controller.config.load import load_config
from controller.events import BetsLocked
from controller.ledger_journal.sqlite import Journal
from controller.runtime.broadcast import Broadcast
from controller.runtime.sequencer import Sequencer
from controller.security.controller_key import load_key
from controller.service.mystery_keeper import mystery_watch

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.events import DeviceInput

SITE: Final = "levels"
LEVELS_TEMPLATE: Final = """\
name = "{name}"
title = "Benchmark four-level progressive{what} ($1 wager)"
wager = "progressive"
source = "bench/levels.py (house rules, for measurement only)"
joker = "semi-wild"

[progressive]
wager = "$1"
original_wager_returned = false

[[progressive.levels]]
level = "grand"
{grand}

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "8%"

[[progressive.levels]]
level = "minor"
meter_seed = "$250"
rate_of_progression = "6%"

[[progressive.levels]]
level = "mini"
meter_seed = "$100"
rate_of_progression = "4%"
{lines}
[[lines]]
line = "four-of-a-kind"
outcome = "Four-of-a-kind"
pays = "$75"
"""
"""The two house paytables' shared text: the same levels, their grand and meter lines apart."""
METER_LINE: Final = """
[[lines]]
line = "{line}"
outcome = "{outcome}"
pays = "{pays}"{level}
"""
HANDS: Final = (
    ("seven-card-straight-flush", "7 card straight flush"),
    ("five-aces", "Five aces"),
    ("royal-flush", "Royal flush"),
    ("straight-flush", "Straight flush"),
)


def paytable_text(name: str, *, mystery: bool) -> str:
    """A four-level house paytable: every level paid by hands, or the grand a mystery level.

    With a mystery grand the hands pay from the levels below it, and the straight flush a
    fixed $100.
    """
    levels = ("major", "minor", "mini") if mystery else ("grand", "major", "minor", "mini")
    lines = ""
    for (line, outcome), level in zip(HANDS, (*levels, None), strict=False):
        pays = "100% of meter" if level else "$100"
        named = f'\nlevel = "{level}"' if level else ""
        lines += METER_LINE.format(line=line, outcome=outcome, pays=pays, level=named)
    grand = (
        'meter_seed = "$10"\nrate_of_progression = "10%"\nreserve_rate = "0.5%"\n'
        'must_hit_by = "$20"\npast_trigger = "next-level"'
        if mystery
        else 'meter_seed = "$10,000"\nrate_of_progression = "10%"'
    )
    what = ", a mystery grand" if mystery else ""
    return LEVELS_TEMPLATE.format(name=name, what=what, grand=grand, lines=lines)


@dataclass(frozen=True, slots=True)
class Pools:
    """One way of configuring the tables' progressive."""

    name: str
    paytable: str
    text: str | None
    """The house paytable's file, or None for a seed."""


WAYS: Final = (
    Pools("one level", "progressive-1", None),
    Pools("four levels", "bench-levels-1", paytable_text("bench-levels-1", mystery=False)),
    Pools(
        "four levels, a mystery grand",
        "bench-mystery-1",
        paytable_text("bench-mystery-1", mystery=True),
    ),
)
MODES: Final = ("one event at a time", "every table at once")


@dataclass(frozen=True, slots=True)
class Ready:
    """A journal readied for one way, kept pristine so that every run starts from it."""

    config: Path
    journal: Path
    pristine: Path


def ready(folder: Path, way: Pools, tables: Sequence[str], pools: int) -> Ready:
    """The way's configuration written and approved as an operator does (bench/service.py)."""
    folder.mkdir(parents=True)
    dirs: list[Path] = []
    if way.text is not None:
        dirs.append(folder / "paytables")
        dirs[0].mkdir()
        (dirs[0] / f"{way.paytable}.toml").write_text(way.text, encoding="utf-8")
    journal = folder / "journal.db"
    config = folder / "jackpotd.toml"
    config.write_text(
        config_text(
            site=SITE, journal=journal, tables=tables, pools=pools, transport="simulator",
            web_port=1, paytable=way.paytable, paytable_dirs=dirs,
        ),
        encoding="utf-8",
    )  # fmt: skip
    approve_site(config)
    pristine = folder / "pristine.db"
    shutil.copyfile(journal, pristine)
    return Ready(config, journal, pristine)


def restored(readied: Ready) -> None:
    """The journal as approved, before any event: no draw made, nothing sealed."""
    folder = readied.journal.parent
    for path in folder.glob(f"{readied.journal.name}*"):
        path.unlink()
    shutil.copyfile(readied.pristine, readied.journal)


def journal_bytes(path: Path) -> int:
    """The journal file's size with its WAL folded in."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


async def through(
    readied: Ready, events: Sequence[DeviceInput], *, concurrent: bool
) -> dict[str, Any]:
    """The events through the sequencer of the readied journal; its figures."""
    config = load_config(readied.config)
    journal = Journal(readied.journal)
    sequencer = Sequencer(journal, Broadcast())
    sequencer.mystery = mystery_watch(
        config, journal.state, load_key(readied.config.parent / KEY_FILE)
    )
    first_row = journal.head[0]
    runner = asyncio.create_task(sequencer.run())
    cpu, start = time.process_time(), time.perf_counter()
    if concurrent:
        await every_table_at_once(sequencer, events)
    else:
        for event in events:
            await sequencer.submit(event)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    await sequencer.close()
    runner.cancel()
    levels = [pool for pool in journal.state.pools.values() if pool.terms.must_hit_by_cents]
    rows = journal.head[0] - first_row
    journal.close()
    return {
        "events": len(events),
        "events_per_s": len(events) / elapsed,
        "cpu_ms_per_event": cpu * 1000 / len(events),
        "commits": sequencer.stats.commits,
        "rows": rows,
        "controller_rows": rows - len(events),
        "mystery_draws": sum(pool.draws for pool in levels),
        "mystery_hits": sum(pool.hits_count for pool in levels),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--events", type=int, default=6000)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--pools", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=20261203)
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="jackpotd-levels-", dir="/var/tmp"))
    tables = [f"t{n:03d}" for n in range(1, args.tables + 1)]
    events = device_events(tables, args.events, args.seed)[: args.events]
    rounds = sum(isinstance(event, BetsLocked) for event in events)
    print(f"{len(events):,} events of {args.tables} tables ({rounds} rounds), "
          f"best of {args.runs} runs")  # fmt: skip
    readied = {
        way.name: ready(directory / f"way-{index}", way, tables, args.pools)
        for index, way in enumerate(WAYS)
    }
    steps: list[dict[str, Any]] = []
    for mode in MODES:
        best: dict[str, dict[str, Any]] = {}
        for _ in range(args.runs):  # interleaved, so that every way sees the same disk and load
            for way in WAYS:
                restored(readied[way.name])
                before = journal_bytes(readied[way.name].journal)
                found = asyncio.run(through(readied[way.name], events, concurrent=mode == MODES[1]))
                found["bytes_per_round"] = (
                    (journal_bytes(readied[way.name].journal) - before) / rounds if rounds else 0
                )
                kept = best.get(way.name)
                if kept is None or found["events_per_s"] > kept["events_per_s"]:
                    best[way.name] = found
        baseline = best[WAYS[0].name]
        for way in WAYS:
            found = best[way.name]
            step = {
                "submitted": mode,
                "way": way.name,
                "paytable": way.paytable,
                "events_per_s": round(found["events_per_s"], 1),
                "cpu_ms_per_event": round(found["cpu_ms_per_event"], 4),
                "commits": found["commits"],
                "controller_rows": found["controller_rows"],
                "mystery_draws": found["mystery_draws"],
                "mystery_hits": found["mystery_hits"],
                "bytes_per_round": round(found["bytes_per_round"]),
                "events_per_s_ratio_vs_one_level": round(
                    found["events_per_s"] / baseline["events_per_s"], 3
                ),
                "cpu_ratio_vs_one_level": round(
                    found["cpu_ms_per_event"] / baseline["cpu_ms_per_event"], 3
                ),
            }
            steps.append(step)
            print(
                f"{mode:>20}, {way.name:>28}: {step['events_per_s']:8,.0f} events/s "
                f"({step['events_per_s_ratio_vs_one_level']:.3f} of one level), "
                f"{step['cpu_ms_per_event']:.3f} ms CPU/event "
                f"({step['cpu_ratio_vs_one_level']:.3f} of one level), {step['commits']} commits, "
                f"{step['mystery_draws']} draws, {step['mystery_hits']} hits, "
                f"{step['bytes_per_round']:,} bytes per round"
            )
    results = {
        "benchmark": "levels",
        "machine": machine(),
        "method": {
            "events": len(events),
            "rounds": rounds,
            "tables": args.tables,
            "pools": args.pools,
            "runs": args.runs,
            "ways": {way.name: way.paytable for way in WAYS},
            "pragmas": "journal_mode=WAL, synchronous=FULL",
        },
        "steps": steps,
    }
    path = write_results("levels", results)
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
