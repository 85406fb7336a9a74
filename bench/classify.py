"""Benchmark: seven-card line classification against the pure-Python treys evaluator.

Both classify the same 200,000 random joker-free seven-card hands, in the same run, so the
ratio means something on a shared, noisy machine. treys ranks a hand by trying its 21 five-card
subsets; the controller reduces a hand to its rank profile and flush suit and looks the line up
in a paytable. Target (docs/benchmarks.md, "Targets"): at least 3x treys. Prints both rates and
the ratio.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import TYPE_CHECKING

from treys import Card as TreysCard
from treys import Evaluator

from controller.rules.cards import DECK, JokerMode
from controller.rules.paytable_files import seed_paytables
from controller.rules.qualify import qualifier

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def _best_of(runs: int, work: Callable[[], object]) -> float:
    """Fastest of several runs, in seconds: the least disturbed by other load."""
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return min(timings)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--paytable", default="fortune-1")
    args = parser.parse_args(argv)

    rng = random.Random(20261129)
    naturals = [card for card in DECK if not card.is_joker]
    hands = [rng.sample(naturals, 7) for _ in range(args.hands)]
    ours = [tuple(card.index for card in hand) for hand in hands]
    theirs = [[TreysCard.new(card.code) for card in hand] for hand in hands]

    table = seed_paytables()[args.paytable]
    qualify = qualifier(table.joker)
    line_for = table.line_for
    evaluator = Evaluator()
    evaluate = evaluator.evaluate

    def run_ours() -> None:
        for hand in ours:
            line_for(qualify(hand))

    def run_treys() -> None:
        for hand in theirs:
            evaluate(hand[:2], hand[2:])

    run_ours()  # fill the memo tables once, as a running daemon would have
    ours_s = _best_of(args.runs, run_ours)
    treys_s = _best_of(args.runs, run_treys)
    ours_rate = args.hands / ours_s
    treys_rate = args.hands / treys_s
    print(f"hands: {args.hands:,} random joker-free seven-card hands, best of {args.runs} runs")
    print(
        f"controller ({args.paytable}, {JokerMode(table.joker).value}): {ours_rate:12,.0f} lines/s"
    )
    print(f"treys 7-card evaluator:            {treys_rate:12,.0f} hands/s")
    print(f"ratio: {ours_rate / treys_rate:.1f}x treys (target >= 3x)")


if __name__ == "__main__":
    main()
