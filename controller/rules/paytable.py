"""Paytables as typed values: what each line pays, its Envy amount, and the progressive terms.

A hand is paid on exactly one line: the **highest-paying** line of the paytable that it
qualifies for (docs/rules.md § 4.2), ties going to the line listed first (the seed lists lines in
order of pay, and the loader checks that odds and fixed pays never rise down the list). Where a
percent-of-meter pay competes with a fixed one, which pays more depends on the meter: on
Progressive Paytable 5 (§ 688a.12(d)) four aces and the joker are both "Five aces" (10 % of the
meter) and "Five-of-a-kind" ($1,000), so they are paid $1,000 while the meter is under $10,000
and 10 % of it above. :meth:`Paytable.line_for` therefore takes the meter; without one it uses
the meter seed.

A **multi-level** progressive (docs/paytables.md, "Levels") has several meters, each a
:class:`LevelTerms` with its own seed and rates; each meter-paid row names the level it pays
from, so the meter that decides a row's worth is its level's: ``line_for`` then takes the
meters by level. A one-level paytable is the case of one unnamed level (``""``), as every seed
paytable is, and reads exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from controller.money import format_cents, format_percent
from controller.rules.lines import BIT, Line

if TYPE_CHECKING:
    from controller.rules.cards import JokerMode


class Wager(StrEnum):
    """The side wagers whose paytables the rules engine knows."""

    ACE_HIGH = "ace-high"
    FORTUNE_BONUS = "fortune-bonus"
    EMPERORS_TREASURE = "emperors-treasure"
    DYNASTY_BONUS = "dynasty-bonus"
    PROGRESSIVE = "progressive"
    INSURANCE = "insurance"


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


def pay_value(pays: Pay, meter_cents: int | Fraction) -> Fraction:
    """What a pay is worth on one wager, to compare pays within one paytable.

    Odds tables compare in units of the wager (a push is 0), progressive ones in cents at the
    given meter; one paytable never mixes the two (the loader sees to it).
    """
    if isinstance(pays, Odds):
        return Fraction(pays.to_one)
    if isinstance(pays, Push):
        return Fraction(0)
    if isinstance(pays, FixedPay):
        return Fraction(pays.cents)
    return pays.fixed_cents + pays.percent * meter_cents


MAIN_LEVEL: Final = ""
"""The level of a one-level paytable's meter: the pool's only one, unnamed."""

Meter = int | Fraction
Meters = Meter | Mapping[str, Meter]
"""The meter a choice of row is made at: one meter, or (multi-level) each level's by name."""


def meter_percent(pays: Pay) -> Fraction:
    """The share of the meter a pay takes (0 for anything but a meter pay)."""
    return pays.percent if isinstance(pays, MeterPay) else Fraction(0)


@dataclass(frozen=True, slots=True)
class PaytableLine:
    """One row of a paytable: the line it pays, the seed's words for it, the pay and the Envy."""

    line: Line
    outcome: str
    pays: Pay
    envy_cents: int | None = None
    level: str = MAIN_LEVEL
    """The level whose meter a meter pay takes (a multi-level paytable's rows name it)."""


@dataclass(frozen=True, slots=True)
class LevelTerms:
    """One level of a multi-level progressive: its meter's seed, rates, limit and kind.

    A **mystery** level (``must_hit_by_cents`` set) is won by no hand: it hits when a
    contribution carries its meter to a trigger drawn in ``[seed, must hit by)``
    (controller/mystery), and the amount past the trigger goes to the next level's meter
    (``spill_to_next``) or to its own overflow.
    """

    level: str
    meter_seed_cents: int
    rate_of_progression: Fraction
    reserve_rate: Fraction = Fraction(0)
    limit_cents: int | None = None
    must_hit_by_cents: int | None = None
    spill_to_next: bool = False

    @property
    def mystery(self) -> bool:
        """Whether the level hits at a hidden trigger rather than on a hand."""
        return self.must_hit_by_cents is not None


@dataclass(frozen=True, slots=True)
class ProgressiveTerms:
    """The progressive attributes a seed paytable states.

    A multi-level paytable lists its ``levels``; its seed is then its first level's and its
    rates the sums of its levels' (what one wager puts into the pool as a whole).
    """

    wager_cents: int
    meter_seed_cents: int
    rate_of_progression: Fraction
    reserve_rate: Fraction
    original_wager_returned: bool
    levels: tuple[LevelTerms, ...] = ()

    def level(self, name: str) -> LevelTerms | None:
        """A level by name (None: no such level, or a one-level paytable)."""
        return next((level for level in self.levels if level.level == name), None)

    def seed_of(self, name: str) -> int:
        """A level's meter seed (a one-level paytable's seed for its only level)."""
        found = self.level(name)
        return found.meter_seed_cents if found is not None else self.meter_seed_cents


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
    sample: bool = False
    """A sample the project ships for a wager whose regulation prints no pays; never a filing."""
    _by_mask: dict[int, PaytableLine | tuple[PaytableLine, ...] | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def qualifying_rows(self, mask: int) -> tuple[PaytableLine, ...]:
        """The rows whose lines are set in a qualifying mask, in listed order."""
        return tuple(row for row in self.lines if mask & BIT[row.line])

    def line_for(self, mask: int, meter_cents: Meters | None = None) -> PaytableLine | None:
        """The highest-paying row among those a hand qualifies for, at a meter (default: seed).

        A multi-level paytable's meters are given by level (a level left out is at its seed).
        """
        try:
            found = self._by_mask[mask]
        except KeyError:
            found = self._by_mask[mask] = self._settle(self.qualifying_rows(mask))
        if isinstance(found, tuple):
            return self.best_of(found, meter_cents)
        return found

    def best_of(
        self, rows: tuple[PaytableLine, ...], meter_cents: Meters | None = None
    ) -> PaytableLine | None:
        """The highest-paying of some rows at a meter; ties go to the row listed first."""
        if not rows:
            return None
        best = rows[0]
        best_value = pay_value(best.pays, self.meter_of(best, meter_cents))
        for row in rows[1:]:
            value = pay_value(row.pays, self.meter_of(row, meter_cents))
            if value > best_value:
                best, best_value = row, value
        return best

    def meter_of(self, row: PaytableLine, meters: Meters | None) -> Meter:
        """The meter a row's pay is worth its amount at: its level's (default: the seed)."""
        if isinstance(meters, Mapping):
            found = meters.get(row.level)
            return self.seed_of(row.level) if found is None else found
        if meters is None:
            return self.seed_of(row.level)
        return meters

    def seed_of(self, level: str) -> int:
        """A level's meter seed (the seed, on a one-level paytable; 0 if not progressive)."""
        return self.progressive.seed_of(level) if self.progressive is not None else 0

    @property
    def levels(self) -> tuple[LevelTerms, ...]:
        """A multi-level paytable's levels, in the file's order (none: one level)."""
        return self.progressive.levels if self.progressive is not None else ()

    def _settle(
        self, rows: tuple[PaytableLine, ...]
    ) -> PaytableLine | tuple[PaytableLine, ...] | None:
        """The winning row if no meter can change it, else the rows to choose from at a meter.

        A meter never shows less than its seed, so a row that pays most at the seed and gains
        at least as fast as any other as the meter grows wins at every meter.
        """
        if len(rows) <= 1:
            return rows[0] if rows else None
        if len({row.level for row in rows if meter_percent(row.pays)}) > 1:
            return rows  # meters of several levels: which pays more depends on each
        at_seed = self.best_of(rows)
        if at_seed is not None and all(
            meter_percent(at_seed.pays) >= meter_percent(row.pays) for row in rows
        ):
            return at_seed
        return rows

    @property
    def seed_cents(self) -> int:
        """The meter seed of a progressive paytable, 0 for the others."""
        return self.progressive.meter_seed_cents if self.progressive is not None else 0

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
    Wager.INSURANCE: frozenset(
        {
            Line.INSURANCE_ACE_HIGH,
            Line.INSURANCE_ACE_HIGH_WITH_JOKER,
            Line.INSURANCE_ACE_HIGH_NO_JOKER,
            Line.INSURANCE_KING_HIGH,
            Line.INSURANCE_QUEEN_HIGH,
            Line.INSURANCE_JACK_HIGH,
            Line.INSURANCE_TEN_HIGH,
            Line.INSURANCE_NINE_HIGH,
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

``pa`` reads § 645a.6(g)(3) by its defining text (a natural royal flush and a natural ace and
queen; NJ (i)3 also names the ace and queen but accepts a royal with the joker);
``pa-caption`` reads it by its caption ("ace/king suited"). See docs/rules.md.
"""
