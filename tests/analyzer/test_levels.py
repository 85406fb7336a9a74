"""A multi-level paytable's exact return against every level's meter (docs/analyzer.md, "Levels").

1. A one-level paytable is the case of one unnamed level: on every seed progressive paytable the
   levelled figures are exactly controller/analyzer/progressive.py's.
2. On a four-level paytable (docs/paytables.md, "Levels") the return moves with each level's
   meter, hands move between rows of different levels where one meter passes another, and each
   level's break-even meter is where R reaches 100 % with the others at their seeds.
3. On a reduced deck every hand is classified by the independent oracle and paid by hand at
   the meters: the analyzer's R must equal that sum exactly.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations

import pytest
from support.rules import oracle

from controller.analyzer.deck import Deck
from controller.analyzer.levels import LevelledFigures
from controller.analyzer.progressive import ProgressiveFigures
from controller.analyzer.report import Analyzer
from controller.rules.cards import DECK
from controller.rules.lines import Line
from controller.rules.paytable import MAIN_LEVEL, Paytable, pay_value
from controller.rules.paytable_files import parse_paytable, seed_paytables

LEVELLED = """
name = "house-levels"
title = "House levels"
wager = "progressive"
source = "house rules"
joker = "semi-wild"

[progressive]
wager = "$5"
original_wager_returned = false

[[progressive.levels]]
level = "grand"
meter_seed = "$10,000"
rate_of_progression = "1%"
must_hit_by = "$20,000"
past_trigger = "next-level"

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "3%"
reserve_rate = "0.5%"
limit = "$50,000"

[[progressive.levels]]
level = "minor"
meter_seed = "$250"
rate_of_progression = "2%"

[[progressive.levels]]
level = "mini"
meter_seed = "$50"
rate_of_progression = "1%"

[[lines]]
line = "seven-card-straight-flush"
outcome = "Seven-card straight flush"
pays = "100% of meter"
level = "major"

[[lines]]
line = "five-aces"
outcome = "Five aces"
pays = "100% of meter"
level = "minor"

[[lines]]
line = "royal-flush"
outcome = "Royal flush"
pays = "100% of meter"
level = "mini"

[[lines]]
line = "straight-flush"
outcome = "Straight flush"
pays = "$40"
"""


def levelled(analyzer: Analyzer, paytable: Paytable) -> LevelledFigures:
    assert paytable.progressive is not None
    classes = analyzer.pay_classes(paytable)
    return LevelledFigures(paytable, paytable.progressive, analyzer.deck.hands, classes)


@pytest.fixture(scope="module")
def house(analyzer: Analyzer) -> LevelledFigures:
    return levelled(analyzer, parse_paytable(LEVELLED, "levels.toml"))


PROGRESSIVES = [table for table in seed_paytables().values() if table.progressive is not None]


@pytest.mark.parametrize("paytable", PROGRESSIVES, ids=lambda table: table.name)
def test_a_one_level_paytable_gives_exactly_the_progressive_figures(
    analyzer: Analyzer, paytable: Paytable
) -> None:
    assert paytable.progressive is not None
    one = ProgressiveFigures(
        paytable, paytable.progressive, analyzer.deck.hands, analyzer.pay_classes(paytable)
    )
    many = levelled(analyzer, paytable)
    assert many.level_names == (MAIN_LEVEL,)
    assert many.return_at_seeds == one.return_at_seed
    piece = many.piece()
    assert (piece.base, piece.shares) == (
        one.return_base,
        {MAIN_LEVEL: one.return_per_meter_cent},
    )
    assert many.break_even_meter_cents(MAIN_LEVEL) == one.break_even_meter_cents
    assert many.break_even_meters == {MAIN_LEVEL: one.break_even_meter_cents}
    seed = paytable.seed_cents
    crossings = [crossover.meter_cents for crossover in one.crossovers]
    assert set(crossings) <= set(many.switch_points(MAIN_LEVEL))
    assert many.crossovers(MAIN_LEVEL) == one.crossovers
    meters: list[int | Fraction] = [seed, seed + 1, 3 * seed, *crossings]
    for meter in [*meters, *(crossing - 1 for crossing in crossings)]:
        assert many.return_at({MAIN_LEVEL: meter}) == one.return_at(meter)


def test_each_levels_meter_adds_its_own_share_of_the_return(house: LevelledFigures) -> None:
    seeds = house.seeds
    assert seeds == {"grand": 1_000_000, "major": 100_000, "minor": 25_000, "mini": 5_000}
    piece = house.piece()
    assert piece.shares["grand"] == 0  # a mystery level: no hand wins it
    assert all(piece.shares[name] > 0 for name in ("major", "minor", "mini"))
    assert house.return_at_seeds == piece.at(seeds)
    # Below any crossing R is linear in each meter with slope b_i.
    raised = house.return_at({"minor": 30_000})
    assert raised - house.return_at_seeds == piece.shares["minor"] * 5_000


def test_hands_move_to_the_mini_where_its_meter_passes_the_majors(
    house: LevelledFigures,
) -> None:
    """A seven-card straight flush to the ace holds a royal: major or mini, whichever shows more."""
    both = sum(
        pay_class.count
        for pay_class in house.classes
        if {row.line for row in pay_class.rows}
        >= {Line.SEVEN_CARD_STRAIGHT_FLUSH, Line.ROYAL_FLUSH}
    )
    assert both > 0
    assert 100_000 in house.switch_points("mini")  # the major's seed
    (crossover,) = house.crossovers("mini")
    assert (crossover.meter_cents, crossover.count) == (Fraction(100_000), both)
    assert (crossover.below.level, crossover.above.level) == ("major", "mini")
    assert house.crossovers("major") == ()  # the major only gains on the mini above its seed
    below, above = house.piece({"mini": 99_999}), house.piece({"mini": 100_001})
    moved = Fraction(both, house.total * 500)
    assert above.shares["mini"] - below.shares["mini"] == moved
    assert below.shares["major"] - above.shares["major"] == moved
    # At the crossing the two rows pay alike: R is continuous there.
    crossing = {**house.seeds, "mini": Fraction(100_000)}
    assert below.at(crossing) == above.at(crossing)


def test_each_levels_break_even_meter_makes_the_return_100_percent(
    house: LevelledFigures,
) -> None:
    breaks = house.break_even_meters
    assert breaks["grand"] is None  # won at its trigger, by no hand
    for name in ("major", "minor", "mini"):
        meter = breaks[name]
        assert meter is not None
        assert meter > house.seeds[name]
        assert house.return_at({name: meter}) == 1
        assert house.return_at({name: meter - Fraction(1, 100)}) < 1
    with pytest.raises(KeyError, match="no level 'jumbo'"):
        house.return_at({"jumbo": 1})


# On a reduced deck, every hand by the oracle.

REDUCED = Deck((6, 7, 8, 9, 10, 11, 12), 3, joker=True)  # eight to ace, three suits, the joker


@cache
def oracle_hands() -> Counter[frozenset[str]]:
    """The lines each hand of the reduced deck qualifies for, by the oracle, one hand at a time."""
    codes = [DECK[index].code for index in REDUCED.card_indices]
    return Counter(oracle.qualifying_lines(hand, "semi-wild") for hand in combinations(codes, 7))


def oracle_return(paytable: Paytable, meters: dict[str, int]) -> Fraction:
    """Each hand's pay at its rows' levels' meters, the first row kept on a tie, summed."""
    terms = paytable.progressive
    assert terms is not None
    paid = Fraction(0)
    for lines, hands in oracle_hands().items():
        best: Fraction | None = None
        for row in paytable.lines:
            if str(row.line) in lines:
                value = pay_value(row.pays, meters.get(row.level, paytable.seed_of(row.level)))
                best = value if best is None or value > best else best
        paid += hands * (best or 0)
    return paid / (REDUCED.hands * terms.wager_cents)


@pytest.mark.exhaustive
def test_the_return_equals_every_hand_paid_by_the_oracle_on_a_reduced_deck() -> None:
    paytable = parse_paytable(LEVELLED, "levels.toml")
    figures = levelled(Analyzer(REDUCED), paytable)
    for meters in ({}, {"mini": 200_000, "major": 150_000}, {"minor": 1_000_000}):
        assert figures.return_at(meters) == oracle_return(paytable, meters)
