"""Paytables as typed values: what each line pays, its Envy amount, and the progressive terms.

A paytable lists its lines in the seed's order, which is the order of pay: the first line a
hand qualifies for is the highest-paying line it qualifies for (BRIEF §2). The loader
(:mod:`controller.paytable_files`) checks that odds and fixed pays never rise down the list, so
that "first" and "highest-paying" agree wherever pays can be compared; between a
percent-of-meter pay and a fixed pay the seed's order decides, because the meter moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from controller.lines import BIT, Line
from controller.money import format_cents, format_percent

if TYPE_CHECKING:
    from fractions import Fraction

    from controller.cards import JokerMode


class Wager(StrEnum):
    """The side wagers whose paytables the rules engine knows."""

    ACE_HIGH = "ace-high"
    FORTUNE_BONUS = "fortune-bonus"
    EMPERORS_TREASURE = "emperors-treasure"
    DYNASTY_BONUS = "dynasty-bonus"
    PROGRESSIVE = "progressive"


@dataclass(frozen=True, slots=True)
class Odds:
    """``N to 1``: pays N times the wager and returns the wager."""

    to_one: int

    def __str__(self) -> str:
        return f"{self.to_one:,} to 1"


@dataclass(frozen=True, slots=True)
class Push:
    """The wager is returned, nothing more."""

    def __str__(self) -> str:
        return "Push"


@dataclass(frozen=True, slots=True)
class FixedPay:
    """A fixed amount in cents (a progressive paytable's dollar pay)."""

    cents: int

    def __str__(self) -> str:
        return format_cents(self.cents, always_cents=False)


@dataclass(frozen=True, slots=True)
class MeterPay:
    """A percentage of the meter, plus a fixed amount when the seed says ``$5,000/100%``."""

    percent: Fraction
    fixed_cents: int = 0

    def __str__(self) -> str:
        meter = f"{format_percent(self.percent)} of meter"
        if self.fixed_cents:
            return f"{format_cents(self.fixed_cents, always_cents=False)}/{meter}"
        return meter


Pay = Odds | Push | FixedPay | MeterPay


@dataclass(frozen=True, slots=True)
class PaytableLine:
    """One row of a paytable: the line it pays, the seed's words for it, the pay and the Envy."""

    line: Line
    outcome: str
    pays: Pay
    envy_cents: int | None = None


@dataclass(frozen=True, slots=True)
class ProgressiveTerms:
    """The progressive attributes a seed paytable states."""

    wager_cents: int
    meter_seed_cents: int
    rate_of_progression: Fraction
    reserve_rate: Fraction
    original_wager_returned: bool


@dataclass(frozen=True, slots=True)
class Paytable:
    """A whole paytable, with the memo that maps a qualifying mask to its paying line."""

    name: str
    title: str
    wager: Wager
    source: str
    joker: JokerMode
    lines: tuple[PaytableLine, ...]
    progressive: ProgressiveTerms | None = None
    _by_mask: dict[int, PaytableLine | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def line_for(self, mask: int) -> PaytableLine | None:
        """The highest-paying line of this paytable among those set in a qualifying mask."""
        try:
            return self._by_mask[mask]
        except KeyError:
            found = next((row for row in self.lines if mask & BIT[row.line]), None)
            self._by_mask[mask] = found
            return found

    @property
    def has_envy(self) -> bool:
        """Whether any line carries an Envy amount."""
        return any(row.envy_cents is not None for row in self.lines)

    @property
    def dealer_and_player(self) -> bool:
        """Whether the lines are about the dealer's and the player's hands together (Ace High)."""
        return self.wager is Wager.ACE_HIGH


WAGER_LINES: Final[dict[Wager, frozenset[Line]]] = {
    Wager.ACE_HIGH: frozenset(
        {
            Line.BOTH_ACE_HIGH,
            Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER,
            Line.DEALER_ONLY_ACE_HIGH_NO_JOKER,
        }
    ),
    Wager.FORTUNE_BONUS: frozenset(
        {
            Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
            Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN,
            Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
            Line.FIVE_ACES,
            Line.ROYAL_FLUSH,
            Line.NATURAL_ROYAL_FLUSH,
            Line.STRAIGHT_FLUSH,
            Line.STRAIGHT_FLUSH_WITHOUT_JOKER,
            Line.STRAIGHT_FLUSH_WITH_JOKER,
            Line.FOUR_OF_A_KIND,
            Line.FULL_HOUSE,
            Line.FLUSH,
            Line.THREE_OF_A_KIND,
            Line.STRAIGHT,
            Line.THREE_PAIR,
        }
    ),
    Wager.EMPERORS_TREASURE: frozenset(
        {
            Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
            Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
            Line.FIVE_ACES,
            Line.ROYAL_FLUSH,
            Line.STRAIGHT_FLUSH,
            Line.FOUR_OF_A_KIND,
            Line.FULL_HOUSE,
            Line.FLUSH,
            Line.STRAIGHT,
            Line.THREE_OF_A_KIND,
            Line.TWO_PAIR,
            Line.PAIR,
        }
    ),
    Wager.DYNASTY_BONUS: frozenset(
        {
            Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
            Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN,
            Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING,
            Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
            Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH,
            Line.FIVE_ACES,
            Line.ROYAL_FLUSH,
            Line.STRAIGHT_FLUSH,
            Line.FOUR_OF_A_KIND,
            Line.FULL_HOUSE,
            Line.FLUSH,
            Line.STRAIGHT,
            Line.THREE_OF_A_KIND,
            Line.TWO_PAIR,
            Line.PAIR,
        }
    ),
    Wager.PROGRESSIVE: frozenset(
        {
            Line.SEVEN_CARD_STRAIGHT_FLUSH,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
            Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
            Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN,
            Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING,
            Line.FIVE_ACES,
            Line.FIVE_OF_A_KIND,
            Line.ROYAL_FLUSH,
            Line.NATURAL_ROYAL_FLUSH,
            Line.STRAIGHT_FLUSH,
            Line.FOUR_OF_A_KIND,
            Line.FULL_HOUSE,
            Line.FLUSH,
            Line.STRAIGHT,
            Line.THREE_OF_A_KIND,
        }
    ),
}
"""Which lines each wager's paytables may use: the hands its seed clauses define."""

DYNASTY_PROFILES: Final[dict[str, tuple[Line, ...]]] = {
    "pa": (
        Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN,
        Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
        Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN,
        Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
        Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH,
    ),
    "pa-caption": (
        Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN,
        Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
        Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING,
        Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
        Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH,
    ),
    "nj": (
        Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN,
        Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
        Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN,
        Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
    ),
}
"""The Dynasty Bonus seven-card hands, highest first, of § 645a.6(g) and 13:69F-11(i).

``pa`` reads § 645a.6(g)(3) by its defining text (an ace and queen, as NJ (i)3 also says);
``pa-caption`` reads it by its caption ("ace/king suited"). See docs/rules.md.
"""
