"""Benchmark and full-deck cross-check of the exact analyzer (docs/benchmarks.md).

1. Times ``jackpotd analyze --all`` (all 18 seed paytables, one process, wall clock) against
   the 10 s target, and each paytable on its own in a fresh process.
2. With ``--brute-force``: enumerates all 154,143,080 seven-card hands one by one through the
   live classifier, on every core, and checks that the census (hence every line count of
   every paytable, and its natural and joker split) equals the combinatorial one exactly: each
   hand's mask, and the part of it its natural cards make without the joker. This takes
   minutes, which is why it lives here and not in the tests; the tests check the same thing on
   reduced decks, against the independent oracle.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations
from typing import TYPE_CHECKING

from controller.analyzer.census import natural_lines, split_census
from controller.analyzer.deck import FULL_DECK
from controller.rules.cards import DECK_SIZE, JOKER_INDEX, JokerMode
from controller.rules.paytable_files import seed_paytables
from controller.rules.qualify import qualifier

if TYPE_CHECKING:
    from collections.abc import Sequence

TARGET_S = 10.0


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_cli(repeats: int, alone: Sequence[str]) -> None:
    """``--all`` at its best of ``repeats`` runs, then each paytable of ``alone`` on its own."""
    jackpotd = [sys.executable, "-m", "controller", "analyze"]
    total = min(_timed([*jackpotd, "--all", "--quiet"]) for _ in range(repeats))
    print(f"jackpotd analyze --all (18 paytables): {total:.2f} s wall, target < {TARGET_S:.0f} s")
    print(f"  {'paytable':<15}{'alone, fresh process':>22}")
    for name in alone:
        print(f"  {name:<15}{_timed([*jackpotd, name, '--quiet']):>20.2f} s")
    print(f"ratio to target: {total / TARGET_S:.2f} (below 1 meets it)")


def _census_from(first: int, mode: JokerMode) -> Counter[tuple[int, int]]:
    """Brute-force split census of every hand whose lowest card index is ``first``."""
    qualify = qualifier(mode)
    census: Counter[tuple[int, int]] = Counter()
    for rest in combinations(range(first + 1, DECK_SIZE), 6):
        hand = (first, *rest)
        if hand[-1] == JOKER_INDEX:  # the highest index: only such hands hold the joker
            census[qualify(hand), natural_lines(hand, mode)] += 1
        else:
            mask = qualify(hand)
            census[mask, mask] += 1
    return census


def brute_force(mode: JokerMode, workers: int) -> None:
    start = time.perf_counter()
    total: Counter[tuple[int, int]] = Counter()
    with ProcessPoolExecutor(workers) as pool:
        firsts = list(range(DECK_SIZE - 6))
        for part in pool.map(_census_from, firsts, [mode] * len(firsts)):
            total.update(part)
    brute_s = time.perf_counter() - start
    start = time.perf_counter()
    exact = split_census(FULL_DECK, mode)
    census_s = time.perf_counter() - start
    hands = sum(total.values())
    verdict = "AGREE" if total == exact else "DISAGREE"
    print(
        f"brute force, joker {mode.value}: {hands:,} hands in {brute_s:.0f} s on {workers} "
        f"workers; census in {census_s:.2f} s ({brute_s / census_s:,.0f}x faster): {verdict}"
    )
    if total != exact:
        for mask, natural in sorted(set(total) | set(exact)):
            key = mask, natural
            if total[key] != exact[key]:
                print(
                    f"  mask {mask:#x}, natural {natural:#x}: brute force {total[key]:,}, "
                    f"census {exact[key]:,}"
                )
        raise SystemExit(1)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brute-force", action="store_true", help="also enumerate every hand")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=2, help="runs of --all, the best counts")
    parser.add_argument(
        "--alone",
        default=",".join(seed_paytables()),
        help="the paytables timed on their own, comma-separated (default: every seed paytable)",
    )
    args = parser.parse_args(argv)
    time_cli(args.repeats, [name for name in args.alone.split(",") if name])
    if args.brute_force:
        for mode in JokerMode:
            brute_force(mode, args.workers)


if __name__ == "__main__":
    main()
