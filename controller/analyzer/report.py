"""A paytable's exact figures from the counts: per-line probabilities, return, house edge.

Every figure is an exact :class:`fractions.Fraction` of integer counts; floats appear only when
printing. "Return" is what comes back per unit wagered, the wager included: an ``N to 1`` win
returns ``N + 1``, a push returns 1, a loss 0. For a progressive paytable the return is a
linear function of the meter ``M`` (in cents): ``R(M) = a + b * M``; see docs/analyzer.md for
the long-run return including contributions.

Each line's count is also split into the hands that make it with their natural cards alone
and those that need the joker (:func:`controller.analyzer.census.natural_lines`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Final, Protocol

from controller.analyzer.ace_high import AceHighCounts, ace_high_counts
from controller.analyzer.census import SplitCensus, masks_of, split_census
from controller.analyzer.deck import FULL_DECK, Deck
from controller.analyzer.levels import LevelledFigures
from controller.analyzer.progressive import PayClass, ProgressiveFigures
from controller.rules.lines import Line
from controller.rules.paytable import FixedPay, Odds, Push

if TYPE_CHECKING:
    from controller.rules.cards import JokerMode
    from controller.rules.paytable import Paytable, PaytableLine, ProgressiveTerms


QUALIFYING_WAGER_CENTS: Final = 500
"""58 Pa. Code § 688a.1: a Qualifying Wager for the Envy Bonus is at least $5."""


class Progress(Protocol):
    """Where an :class:`Analyzer` says what it counts (``jackpotd analyze`` shows it on stderr)."""

    def __call__(self, step: str) -> None:
        """A step begins."""

    def counted(self, hands: int, total: int) -> None:
        """``hands`` of the step's ``total`` are counted so far."""


@dataclass(frozen=True, slots=True)
class LineFigures:
    """One paytable row: how many hands (or dealer/player pairs) it pays, and what that returns."""

    row: PaytableLine
    count: int
    probability: Fraction
    meter_share: Fraction
    """Return per unit wagered from the meter part of the pay, per cent of meter (b of R(M))."""
    fixed_return: Fraction
    """Return per unit wagered from the rest: odds, fixed pays and the returned wager (a)."""
    natural: int | None = None
    """Of ``count``, the hands whose natural cards make the line without the joker; None for
    Ace High, whose outcomes are about two hands and name the joker themselves."""

    @property
    def with_joker(self) -> int | None:
        """Of ``count``, the hands that make the line only with the joker."""
        return None if self.natural is None else self.count - self.natural

    @property
    def one_in(self) -> Fraction | None:
        """The line comes once in this many hands (or pairs)."""
        return 1 / self.probability if self.probability else None


@dataclass(frozen=True, slots=True)
class Analysis:
    """The exact analysis of one paytable."""

    paytable: Paytable
    total: int
    """Hands, or ordered (dealer, player) pairs for Ace High."""
    lines: tuple[LineFigures, ...]
    progressive: ProgressiveFigures | None
    ace_high: AceHighCounts | None
    levelled: LevelledFigures | None = None
    """A multi-level paytable's figures by level (its ``progressive`` is then None: one meter
    would not say which level's it is)."""

    @property
    def losing_count(self) -> int:
        """Hands (pairs) that win no line."""
        return self.total - sum(line.count for line in self.lines)

    @property
    def return_(self) -> Fraction:
        """Return per unit wagered (at the meter seed for a progressive paytable)."""
        if self.levelled is not None:
            return self.levelled.return_at_seeds
        if self.progressive is not None:
            return self.progressive.return_at_seed
        return sum((line.fixed_return for line in self.lines), Fraction(0))

    def line_return_at_seed(self, line: LineFigures) -> Fraction:
        """A row's return per unit wagered with its level's meter at its seed."""
        return line.fixed_return + line.meter_share * self.paytable.seed_of(line.row.level)

    @property
    def house_edge(self) -> Fraction:
        """1 - return."""
        return 1 - self.return_

    @property
    def envy_per_other_hand_cents(self) -> Fraction | None:
        """Expected Envy paid to a Qualifying Wager for each other *player's* hand at the table.

        Every other player's hand has the single-hand distribution, so the figure for a table
        is this times the other players; the dealer's hand never pays Envy (§ 688a.1).
        """
        if not self.paytable.has_envy:
            return None
        return sum(
            (line.probability * (line.row.envy_cents or 0) for line in self.lines), Fraction(0)
        )

    @property
    def envy_return_at_minimum(self) -> Fraction | None:
        """That Envy per unit wagered on the least Qualifying Wager, $5 (§ 688a.1)."""
        envy = self.envy_per_other_hand_cents
        return None if envy is None else envy / QUALIFYING_WAGER_CENTS


def _figures(
    row: PaytableLine, count: int, total: int, terms: ProgressiveTerms | None
) -> LineFigures:
    """A row's figures; its natural split is added by :meth:`Analyzer.analyze`."""
    probability = Fraction(count, total)
    pays = row.pays
    if isinstance(pays, Odds):
        return LineFigures(row, count, probability, Fraction(0), probability * (pays.to_one + 1))
    if isinstance(pays, Push):
        return LineFigures(row, count, probability, Fraction(0), probability)
    if terms is None:  # the loader allows dollar pays on progressive paytables only
        raise ValueError(f"{row.outcome}: a dollar pay needs progressive terms")
    wager = terms.wager_cents
    returned = wager if terms.original_wager_returned else 0
    if isinstance(pays, FixedPay):
        return LineFigures(
            row, count, probability, Fraction(0), probability * (pays.cents + returned) / wager
        )
    share = probability * pays.percent / wager
    return LineFigures(
        row, count, probability, share, probability * (pays.fixed_cents + returned) / wager
    )


class Analyzer:
    """Analyses paytables over one deck, computing each joker mode's census only once."""

    def __init__(self, deck: Deck = FULL_DECK, progress: Progress | None = None) -> None:
        self.deck = deck
        self._progress = progress
        self._split: dict[JokerMode, SplitCensus] = {}
        self._census: dict[JokerMode, Counter[int]] = {}
        self._ace_high: AceHighCounts | None = None

    def split_census(self, mode: JokerMode) -> SplitCensus:
        """(Qualifying mask, its natural part) -> hands, for one joker mode."""
        if mode not in self._split:
            progress, hands = self._progress, self.deck.hands
            if progress is not None:
                progress(f"counting {hands:,} hands, joker {mode.value}")
            report = None if progress is None else (lambda done: progress.counted(done, hands))
            self._split[mode] = split_census(self.deck, mode, report)
        return self._split[mode]

    def census(self, mode: JokerMode) -> Counter[int]:
        """Qualifying mask -> hands, for one joker mode."""
        if mode not in self._census:
            self._census[mode] = masks_of(self.split_census(mode))
        return self._census[mode]

    def ace_high(self) -> AceHighCounts:
        """The dealer/player ace-high counts."""
        if self._ace_high is None:
            if self._progress:
                self._progress("counting dealer/player ace-high pairs")
            self._ace_high = ace_high_counts(self.deck)
        return self._ace_high

    def pay_classes(self, paytable: Paytable) -> tuple[PayClass, ...]:
        """Hands grouped by the rows of the paytable they qualify for (not for Ace High)."""
        grouped: Counter[tuple[PaytableLine, ...]] = Counter()
        for mask, hands in self.census(paytable.joker).items():
            rows = paytable.qualifying_rows(mask)
            if rows:
                grouped[rows] += hands
        return tuple(PayClass(rows, count) for rows, count in grouped.items())

    def line_counts(
        self, paytable: Paytable, meter_cents: int | None = None
    ) -> tuple[int, dict[Line, int]]:
        """Total hands (or pairs) and how many each line pays (at a meter; default the seed)."""
        if paytable.dealer_and_player:
            counts = self.ace_high()
            return counts.pairs, {
                Line.BOTH_ACE_HIGH: counts.both,
                Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER: counts.dealer_only_with_joker,
                Line.DEALER_ONLY_ACE_HIGH_NO_JOKER: counts.dealer_only_no_joker,
            }
        by_line: Counter[Line] = Counter()
        for pay_class in self.pay_classes(paytable):
            row = paytable.best_of(pay_class.rows, meter_cents)
            if row is not None:
                by_line[row.line] += pay_class.count
        return self.deck.hands, dict(by_line)

    def natural_counts(self, paytable: Paytable, meter_cents: int | None = None) -> dict[Line, int]:
        """How many of the hands each line pays make it without the joker (not for Ace High)."""
        natural: Counter[Line] = Counter()
        for (mask, natural_mask), hands in self.split_census(paytable.joker).items():
            row = paytable.best_of(paytable.qualifying_rows(mask), meter_cents)
            if row is not None and natural_mask & row.line.bit:
                natural[row.line] += hands
        return dict(natural)

    def analyze(self, paytable: Paytable) -> Analysis:
        """The exact analysis of one paytable."""
        total, by_line = self.line_counts(paytable)
        terms = paytable.progressive
        lines = [_figures(row, by_line.get(row.line, 0), total, terms) for row in paytable.lines]
        if not paytable.dealer_and_player:
            natural = self.natural_counts(paytable)
            lines = [replace(line, natural=natural.get(line.row.line, 0)) for line in lines]
        progressive = levelled = None
        if terms is not None and paytable.levels:
            levelled = LevelledFigures(paytable, terms, total, self.pay_classes(paytable))
        elif terms is not None:
            classes = self.pay_classes(paytable)
            progressive = ProgressiveFigures(paytable, terms, total, classes)
        ace_high = self.ace_high() if paytable.dealer_and_player else None
        return Analysis(paytable, total, tuple(lines), progressive, ace_high, levelled)
