"""The exact analyzer: its counts proven two ways, and its returns checked against known figures.

1. Counts that can be derived by hand and published counts are reproduced on the full deck.
2. On reduced decks small enough to enumerate, every hand is classified one by one by the
   independent oracle (tests/support/rules/oracle.py) and the resulting census must equal the
   analyzer's combinatorial census exactly, mask for mask, and so must the natural part of each mask
   (the lines a hand makes without the joker); the same for Ace High dealer/player pairs.
   bench/analyze.py --brute-force does the full-deck enumeration (minutes, not for tests).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations
from math import comb

import pytest
from support.rules import oracle

from controller.analyzer.ace_high import ace_high_counts
from controller.analyzer.census import mask_census, split_census, suitings_without_flush
from controller.analyzer.deck import FULL_DECK, Deck
from controller.analyzer.report import Analyzer
from controller.rules.cards import DECK, JokerMode
from controller.rules.lines import BIT, Line
from controller.rules.paytable_files import seed_paytables

TABLES = seed_paytables()
MODES = tuple(JokerMode)
ACE, KING, QUEEN, JACK, TEN, NINE, EIGHT = 12, 11, 10, 9, 8, 7, 6
SEVEN, SIX, FIVE, FOUR, THREE, TWO = 5, 4, 3, 2, 1, 0

# Reduced decks, each small enough for the oracle to classify every hand in seconds.
REDUCED = {
    "8-to-A, 3 suits, joker": Deck((EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE), 3, joker=True),
    "A-to-7, 3 suits, joker": Deck((ACE, TWO, THREE, FOUR, FIVE, SIX, SEVEN), 3, joker=True),
    "9-to-A, 3 suits, no joker": Deck((NINE, TEN, JACK, QUEEN, KING, ACE), 3, joker=False),
    "ace-high ranks, 2 suits, joker": Deck(
        (ACE, KING, QUEEN, JACK, NINE, SEVEN, FIVE, THREE), 2, joker=True
    ),
}


def line_count(analyzer: Analyzer, name: str, line: Line) -> int:
    return analyzer.line_counts(TABLES[name])[1].get(line, 0)


# Counts on the full deck.


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
def test_census_counts_all_154143080_hands_once(mode: JokerMode) -> None:
    assert sum(mask_census(FULL_DECK, mode).values()) == comb(53, 7) == 154_143_080


def test_645a6_d1_natural_seven_card_straight_flushes_are_8_runs_in_4_suits(
    analyzer: Analyzer,
) -> None:
    assert line_count(analyzer, "fortune-1", Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL) == 8 * 4


def test_645a6_d3_seven_card_straight_flushes_with_joker_counted_by_hand(
    analyzer: Analyzer,
) -> None:
    # Per suit: six consecutive cards (9 places, the ace also low) or seven in a row missing
    # one inner card (8 runs x 5 inner cards); the joker completes either.
    assert line_count(analyzer, "fortune-1", Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER) == 4 * (
        9 + 8 * 5
    )


def test_645a6_d2_royal_match_counted_by_hand(analyzer: Analyzer) -> None:
    natural = 4 * 3  # a natural royal, K-Q of one of three other suits
    with_joker = 4 * 5 * 3  # four of a royal, the joker, and K-Q of another suit
    assert (
        line_count(analyzer, "fortune-1", Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN)
        == natural + with_joker
    )


def test_645a6_b1_five_aces_are_four_aces_joker_and_any_two(analyzer: Analyzer) -> None:
    assert line_count(analyzer, "fortune-1", Line.FIVE_ACES) == comb(48, 2)


def test_natural_and_joker_split_of_lines_counted_by_hand(analyzer: Analyzer) -> None:
    def split(name: str, line: Line) -> tuple[int | None, int | None]:
        (figures,) = [f for f in analyzer.analyze(TABLES[name]).lines if f.row.line == line]
        return figures.natural, figures.with_joker

    assert split("fortune-1", Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL) == (32, 0)
    assert split("fortune-1", Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER) == (0, 196)
    # 12 natural royals with K-Q beside them; 60 royals the joker completes (the match is
    # always natural).
    assert split("fortune-1", Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN) == (12, 60)
    assert split("fortune-1", Line.FIVE_ACES) == (0, comb(48, 2))
    # Fully wild, no five-of-a-kind row: four of a kind is natural in the 224,848 joker-free
    # hands that hold it (published) and beside the joker with four of any rank but the ace
    # (four aces and the joker are five aces): 12 ranks x C(48, 2) other cards.
    natural = 224_848 + 12 * comb(48, 2)
    assert split("progressive-7", Line.FOUR_OF_A_KIND) == (natural, 1_134_560 - natural)


def test_688a12_d_four_of_a_kind_on_progressive_7_is_1_in_135_86(analyzer: Analyzer) -> None:
    count = line_count(analyzer, "progressive-7", Line.FOUR_OF_A_KIND)
    assert count == 1_134_560
    assert round(comb(53, 7) / count, 2) == 135.86


def test_joker_free_census_reproduces_the_published_seven_card_poker_counts() -> None:
    # Best five-card hand of seven cards from 52: the standard table (e.g. B. Alspach,
    # "Pai Gow Poker Computations", 2003, Table 1).
    published = {
        "straight-flush": 41_584,
        "four-of-a-kind": 224_848,
        "full-house": 3_473_184,
        "flush": 4_047_644,
        "straight": 6_180_020,
        "three-of-a-kind": 6_461_620,
        "two-pair": 31_433_400,
        "pair": 58_627_800,
        "high-card": 23_294_460,
    }
    order = [Line(slug) for slug in published if slug != "high-card"]
    best: Counter[str] = Counter()
    for mask, hands in mask_census(Deck(joker=False), JokerMode.SEMI_WILD).items():
        best[next((str(line) for line in order if mask & BIT[line]), "high-card")] += hands
    assert best == published


def test_688a12_c_fortune_3_house_edge_and_envy_agree_with_the_published_figures(
    analyzer: Analyzer,
) -> None:
    # 5,000/2,000/1,000/400/150/50/25/5/4/3/2 with Envy up to $3,000: "the house edge is 7.8
    # percent before taking an envy bonus into account", and "each additional player at the
    # table reduces the house edge by 0.92 percent" (J. Grochowski, Casino City Times, 17 May
    # 2015, citing M. Shackelford), the Envy per other player on a $5 wager.
    analysis = analyzer.analyze(TABLES["fortune-3"])
    assert round(float(analysis.house_edge) * 100, 1) == 7.8
    envy = analysis.envy_return_at_minimum
    assert envy is not None
    assert round(float(envy) * 100, 4) == 0.9185
    assert round(float(envy) * 100, 2) == 0.92


def test_every_seed_paytable_pays_each_hand_on_at_most_one_line(analyzer: Analyzer) -> None:
    for table in TABLES.values():
        analysis = analyzer.analyze(table)
        assert analysis.losing_count >= 0
        assert analysis.losing_count + sum(line.count for line in analysis.lines) == analysis.total
        assert all(
            line.probability == Fraction(line.count, analysis.total) for line in analysis.lines
        )


# Returns and progressive figures.


def test_odds_return_counts_the_returned_wager(analyzer: Analyzer) -> None:
    analysis = analyzer.analyze(TABLES["fortune-1"])
    expected = Fraction(0)
    for line in analysis.lines:
        win = line.row.pays.to_one + 1 if hasattr(line.row.pays, "to_one") else 1
        expected += Fraction(line.count * win, analysis.total)
    assert analysis.return_ == expected
    assert analysis.house_edge == 1 - expected


def test_progressive_return_is_linear_above_the_seed_and_breaks_even_exactly(
    analyzer: Analyzer,
) -> None:
    figures = analyzer.analyze(TABLES["progressive-1"]).progressive
    assert figures is not None
    seed = figures.terms.meter_seed_cents
    step = figures.return_at(2 * seed) - figures.return_at(seed)
    assert figures.return_at(3 * seed) - figures.return_at(2 * seed) == step > 0
    break_even = figures.break_even_meter_cents
    assert break_even is not None
    assert figures.return_at(break_even) == 1
    assert break_even > seed


def test_688a12_d_wager_returned_adds_one_wager_per_winning_hand(analyzer: Analyzer) -> None:
    analysis = analyzer.analyze(TABLES["progressive-4"])
    figures = analysis.progressive
    assert figures is not None
    wins = sum(line.count for line in analysis.lines)
    fixed = sum(
        Fraction(
            line.count * getattr(line.row.pays, "cents", getattr(line.row.pays, "fixed_cents", 0)),
            analysis.total * 500,
        )
        for line in analysis.lines
    )
    assert figures.return_base == fixed + Fraction(wins, analysis.total)


def test_wagers_per_top_hit_is_one_over_the_100_percent_lines(analyzer: Analyzer) -> None:
    figures = analyzer.analyze(TABLES["progressive-7"]).progressive
    assert figures is not None
    assert figures.wagers_per_top_hit == Fraction(comb(53, 7), comb(48, 2))  # five aces


def test_rules_4_2_progressive_5_five_aces_move_line_at_a_10000_meter(analyzer: Analyzer) -> None:
    analysis = analyzer.analyze(TABLES["progressive-5"])
    figures = analysis.progressive
    assert figures is not None
    (crossover,) = figures.crossovers
    assert crossover.meter_cents == 1_000_000
    assert crossover.count == comb(48, 2)
    assert (crossover.below.line, crossover.above.line) == (Line.FIVE_OF_A_KIND, Line.FIVE_ACES)
    counts_at_seed = analyzer.line_counts(TABLES["progressive-5"])[1]
    counts_above = analyzer.line_counts(TABLES["progressive-5"], 1_000_001)[1]
    assert counts_above[Line.FIVE_ACES] == counts_at_seed.get(Line.FIVE_ACES, 0) + comb(48, 2)
    # The slope of R(M) grows at the crossover: R is convex, and break-even is exact.
    below = figures.return_at(999_999) - figures.return_at(999_998)
    above = figures.return_at(1_000_002) - figures.return_at(1_000_001)
    assert above > below
    break_even = figures.break_even_meter_cents
    assert break_even is not None
    assert figures.return_at(break_even) == 1


def test_long_run_return_bounds(analyzer: Analyzer) -> None:
    for name in ("progressive-1", "progressive-4", "progressive-7"):
        figures = analyzer.analyze(TABLES[name]).progressive
        assert figures is not None
        low, high = figures.long_run_return
        assert low <= high == figures.return_at_seed + figures.terms.rate_of_progression
    figures = analyzer.analyze(TABLES["progressive-7"]).progressive
    assert figures is not None
    low, high = figures.long_run_return
    assert low == high  # no partial-meter line


def test_envy_value_per_other_hand(analyzer: Analyzer) -> None:
    analysis = analyzer.analyze(TABLES["fortune-1"])
    expected = sum(
        Fraction(line.count * (line.row.envy_cents or 0), analysis.total) for line in analysis.lines
    )
    assert analysis.envy_per_other_hand_cents == expected
    assert analyzer.analyze(TABLES["progressive-1"]).envy_per_other_hand_cents is None


# Ace High.


def test_688a12_b_single_hand_ace_high_counts_agree_with_the_census() -> None:
    counts = ace_high_counts(FULL_DECK)
    census = mask_census(FULL_DECK, JokerMode.SEMI_WILD)
    assert counts.natural_hands == sum(
        n for m, n in census.items() if m & BIT[Line.ACE_HIGH_NO_JOKER]
    )
    assert counts.joker_hands == sum(
        n for m, n in census.items() if m & BIT[Line.ACE_HIGH_WITH_JOKER]
    )


def test_688a12_b_ace_high_pairs_partition_all_dealer_player_pairs() -> None:
    counts = ace_high_counts(FULL_DECK)
    assert counts.pairs == comb(53, 7) * comb(46, 7)
    dealer_ace_high = (counts.natural_hands + counts.joker_hands) * comb(46, 7)
    assert counts.dealer_only_no_joker + counts.dealer_only_with_joker <= dealer_ace_high
    both_with_dealer_ace_high = (
        dealer_ace_high - counts.dealer_only_no_joker - counts.dealer_only_with_joker
    )
    assert both_with_dealer_ace_high == counts.both


def test_suitings_without_flush_add_up_to_all_suitings() -> None:
    # Seven different ranks: 4^7 suitings, minus those with five, six or seven of one suit.
    spoilt = 4 * sum(comb(7, k) * 3 ** (7 - k) for k in (5, 6, 7))
    assert suitings_without_flush((1,) * 7, 4, 5) == 4**7 - spoilt


# Brute force on reduced decks, with the independent oracle.


def bits(slugs: frozenset[str]) -> int:
    return sum(BIT[Line(slug)] for slug in slugs)


@cache
def oracle_split_census(deck: Deck, mode: JokerMode) -> Counter[tuple[int, int]]:
    """(Lines, the lines the natural cards make alone) -> hands, one hand at a time."""
    codes = [DECK[index].code for index in deck.card_indices]
    census: Counter[tuple[int, int]] = Counter()
    for hand in combinations(codes, 7):
        lines, alone = oracle.split_lines(hand, mode.value)
        census[bits(lines), bits(alone)] += 1
    return census


def oracle_census(deck: Deck, mode: JokerMode) -> Counter[int]:
    census: Counter[int] = Counter()
    for (mask, _), hands in oracle_split_census(deck, mode).items():
        census[mask] += hands
    return census


@pytest.mark.exhaustive
@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
@pytest.mark.parametrize("deck", list(REDUCED.values()), ids=list(REDUCED))
def test_census_equals_oracle_enumeration_on_reduced_decks(deck: Deck, mode: JokerMode) -> None:
    exact = mask_census(deck, mode)
    assert sum(exact.values()) == deck.hands
    assert exact == oracle_census(deck, mode)
    # And the lines each hand makes without the joker, mask for mask.
    assert split_census(deck, mode) == oracle_split_census(deck, mode)


@pytest.mark.exhaustive
@pytest.mark.parametrize("deck", list(REDUCED.values()), ids=list(REDUCED))
def test_paytable_line_counts_equal_oracle_enumeration_on_reduced_decks(deck: Deck) -> None:
    reduced = Analyzer(deck)
    for table in TABLES.values():
        if table.dealer_and_player:
            continue
        brute: Counter[Line] = Counter()
        natural: Counter[Line] = Counter()
        for (mask, alone), hands in oracle_split_census(deck, table.joker).items():
            row = table.line_for(mask)
            if row is not None:
                brute[row.line] += hands
                natural[row.line] += hands if alone & row.line.bit else 0
        assert reduced.line_counts(table) == (deck.hands, dict(brute))
        assert reduced.natural_counts(table) == {line: n for line, n in natural.items() if n}


@pytest.mark.exhaustive
@pytest.mark.parametrize(
    "deck",
    [
        REDUCED["ace-high ranks, 2 suits, joker"],
        Deck((ACE, KING, QUEEN, NINE, EIGHT, SIX, FIVE, THREE), 2, joker=True),
    ],
    ids=["AKQJ9753", "AKQ98653"],
)
def test_688a12_b_ace_high_pairs_equal_oracle_enumeration(deck: Deck) -> None:
    cards = [DECK[index].code for index in deck.card_indices]
    bit = {code: 1 << position for position, code in enumerate(cards)}
    ace_high: dict[int, str] = {}
    for hand in combinations(cards, 7):
        lines = oracle.qualifying_lines(hand, "semi-wild")
        for kind in ("ace-high-no-joker", "ace-high-with-joker"):
            if kind in lines:
                ace_high[sum(bit[code] for code in hand)] = kind
    players_per_dealer = comb(len(cards) - 7, 7)
    both = dealer_joker = dealer_natural = 0
    for dealer, kind in ace_high.items():
        player_ace_high = sum(1 for player in ace_high if not player & dealer)
        both += player_ace_high
        if kind == "ace-high-with-joker":
            dealer_joker += players_per_dealer - player_ace_high
        else:
            dealer_natural += players_per_dealer - player_ace_high
    counts = ace_high_counts(deck)
    assert counts.natural_hands + counts.joker_hands == len(ace_high)
    assert counts.joker_hands > 0
    assert (counts.both, counts.dealer_only_with_joker, counts.dealer_only_no_joker) == (
        both,
        dealer_joker,
        dealer_natural,
    )
