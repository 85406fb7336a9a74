"""The Dynasty, pay table "B" and Emperor's Treasure lines: counted exactly, paid as the oracle.

The sample paytables (``controller/paytables/samples``) pay the Dynasty Bonus hands of
58 Pa. Code § 645a.6(g) and N.J.A.C. 13:69F-11(i), the straight flushes with and without the
joker of 13:69F-11(g) (pay table "B") and the Emperor's Treasure hands of § 645a.6(e). Here:

1. the Dynasty profiles list the hands of the texts, as the independent oracle
(tests/support/rules/oracle.py)
   reads them;
2. on random hands and hands built to make the rare lines, each sample pays the line the
   oracle's highest-paying rule picks from the oracle's lines;
3. on reduced decks small enough to enumerate, the analyzer's count of every sample line equals
   the oracle's, hand by hand;
4. on the full deck, the counts that can be derived by hand (or by a count over suits that
   shares nothing with the census) equal the census's.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from functools import cache
from importlib import resources
from itertools import combinations
from math import comb

import pytest
from hypothesis import given, settings
from support.rules import oracle
from support.rules.hands import any_seven, rich_hands

from controller.analyzer.census import mask_census
from controller.analyzer.deck import FULL_DECK, Deck
from controller.analyzer.report import Analyzer
from controller.cli import main
from controller.rules.cards import DECK, JokerMode, SevenCardHand
from controller.rules.lines import BIT, Line
from controller.rules.paytable import DYNASTY_PROFILES
from controller.rules.paytable_files import sample_paytables
from controller.rules.qualify import qualifier

SAMPLES = sample_paytables()
NAMES = (
    "dynasty-sample-pa-1",
    "dynasty-sample-pa-caption-1",
    "dynasty-sample-nj-1",
    "bonus-table-b-sample-nj-1",
    "emperors-treasure-sample-1",
)
ACE, KING, QUEEN, JACK, TEN, NINE = 12, 11, 10, 9, 8, 7
SEVEN, SIX, FIVE, FOUR, THREE, TWO = 5, 4, 3, 2, 1, 0


@cache
def rows(name: str) -> tuple[tuple[str, str], ...]:
    """The sample's rows as (line, pays), read from the file with the standard TOML reader."""
    file = resources.files("controller") / "paytables" / "samples" / f"{name}.toml"
    document = tomllib.loads(file.read_text(encoding="utf-8"))
    return tuple((row["line"], row["pays"]) for row in document["lines"])


def engine_line(name: str, hand: list[str] | tuple[str, ...]) -> str | None:
    table = SAMPLES[name]
    row = table.line_for(qualifier(table.joker)(SevenCardHand.parse(list(hand)).indices))
    return None if row is None else str(row.line)


# 0. Listed, marked as samples.


def test_jackpotd_paytables_lists_each_sample_marked_as_a_sample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["paytables"]) == 0
    listed = {row.split()[0]: row.split() for row in capsys.readouterr().out.splitlines()}
    for name in NAMES:
        assert listed[name][1:4] == [str(SAMPLES[name].wager), "semi-wild", "SAMPLE"], name
    assert main(["paytables", "show", "dynasty-sample-nj-1"]) == 0
    shown = capsys.readouterr().out
    assert "SAMPLE: no regulation prints these pays; an operator files their own" in shown
    assert "natural-ace-five-straight-flush-plus-natural-suited-ace-queen" in shown


# 1. The readings.


def test_645a6_g_and_13_69f_11_i_the_dynasty_profiles_are_the_texts_lists() -> None:
    assert {
        profile: tuple(str(line) for line in lines) for profile, lines in DYNASTY_PROFILES.items()
    } == oracle.DYNASTY_HANDS


# 2. Sampled hands.


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=250, deadline=None)
@given(hand=any_seven | rich_hands())
def test_each_sample_pays_the_line_the_oracle_pays(name: str, hand: list[str]) -> None:
    lines = oracle.qualifying_lines(hand, SAMPLES[name].joker.value)
    assert engine_line(name, hand) == oracle.paid_line(lines, rows(name)), (name, hand)


@pytest.mark.parametrize(
    ("hand", "paid"),
    [
        ("As 2s 3s 4s 5s Ah Qh", {"pa": 0, "pa-caption": 0, "nj": 0}),
        ("As Ks Qs Js Ts Ah Qh", {"pa": 2, "pa-caption": 6, "nj": 2}),
        ("Jk Ks Qs Js Ts Ah Qh", {"pa": 6, "pa-caption": 6, "nj": 2}),
        ("As Ks Qs Js Ts Ah Kh", {"pa": 6, "pa-caption": 2, "nj": 5}),
        ("As 2s 3s 4s 5s Kd 9c", {"pa": 4, "pa-caption": 4, "nj": 6}),
    ],
)
def test_645a6_g_and_13_69f_11_i_spot_checks_of_each_reading(
    hand: str, paid: dict[str, int]
) -> None:
    """Row indices of the sample paid, by profile: the oracle and the engine agree on each."""
    names = {"pa": "dynasty-sample-pa-1", "pa-caption": "dynasty-sample-pa-caption-1"}
    names["nj"] = "dynasty-sample-nj-1"
    for profile, index in paid.items():
        name = names[profile]
        expected = rows(name)[index][0]
        assert oracle.paid_line(oracle.qualifying_lines(hand), rows(name)) == expected
        assert engine_line(name, hand.split()) == expected


# 3. Every hand of reduced decks.

REDUCED = {
    # A natural A-5 with a suited ace-queen beside it, and the A-7 straight flushes.
    "A-to-7-and-Q, 2 suits, joker": Deck((ACE, TWO, THREE, FOUR, FIVE, SIX, SEVEN, QUEEN), 2),
    # Royals with suited A-Q, A-K and K-Q; straight flushes with and without the joker.
    "9-to-A, 3 suits, joker": Deck((NINE, TEN, JACK, QUEEN, KING, ACE), 3),
}
REACHED = {
    "A-to-7-and-Q, 2 suits, joker": {
        ("dynasty-sample-nj-1", Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN),
        ("dynasty-sample-pa-1", Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH),
        ("dynasty-sample-pa-1", Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL),
        ("dynasty-sample-nj-1", Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER),
        ("bonus-table-b-sample-nj-1", Line.STRAIGHT_FLUSH_WITH_JOKER),
    },
    "9-to-A, 3 suits, joker": {
        ("dynasty-sample-nj-1", Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN),
        ("dynasty-sample-pa-1", Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN),
        ("dynasty-sample-pa-caption-1", Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING),
        ("emperors-treasure-sample-1", Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING),
        ("bonus-table-b-sample-nj-1", Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN),
        ("bonus-table-b-sample-nj-1", Line.STRAIGHT_FLUSH_WITHOUT_JOKER),
        ("bonus-table-b-sample-nj-1", Line.STRAIGHT_FLUSH_WITH_JOKER),
    },
}


@pytest.mark.exhaustive
@pytest.mark.parametrize("deck_name", REDUCED)
def test_sample_line_counts_equal_the_oracles_hand_by_hand_on_reduced_decks(
    deck_name: str,
) -> None:
    deck = REDUCED[deck_name]
    codes = [DECK[index].code for index in deck.card_indices]
    hands = [oracle.qualifying_lines(hand, oracle.SEMI_WILD) for hand in combinations(codes, 7)]
    counts = Analyzer(deck)
    reached = set()
    for name in NAMES:
        assert SAMPLES[name].joker is JokerMode.SEMI_WILD
        brute = Counter(line for line in (oracle.paid_line(h, rows(name)) for h in hands) if line)
        total, exact = counts.line_counts(SAMPLES[name])
        assert (total, exact) == (len(hands), {Line(slug): n for slug, n in brute.items()}), name
        reached |= {(name, line) for line in exact}
    assert REACHED[deck_name] <= reached


# 4. The full deck.


@pytest.fixture(scope="module")
def census() -> Counter[int]:
    return mask_census(FULL_DECK, JokerMode.SEMI_WILD)


def hands_with(census: Counter[int], line: Line) -> int:
    return sum(hands for mask, hands in census.items() if mask & BIT[line])


@pytest.mark.parametrize(
    ("line", "count"),
    [
        # A natural A-2-3-4-5 in one of 4 suits and a natural ace and queen of one of 3 others.
        (Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN, 4 * 3),
        # A natural A-2-3-4-5 and any 2 of the 48 other cards.
        (Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH, 4 * comb(48, 2)),
        # A natural royal in one of 4 suits and the pair in one of 3 others.
        (Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN, 4 * 3),
        (Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING, 4 * 3),
        # NJ (i)3: natural (12), or four of the royal and the joker (4 suits x 5 missing x 3).
        (Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN, 4 * 3 + 4 * 5 * 3),
    ],
)
def test_645a6_g_and_13_69f_11_i_dynasty_hands_counted_by_hand(
    census: Counter[int], line: Line, count: int
) -> None:
    assert hands_with(census, line) == count


def _positions(ranks: int) -> int:
    """Rank bits (0 = two .. 12 = ace) to 14 run positions, the ace also at position 0."""
    return (ranks << 1) | (ranks >> ACE & 1)


def _runs_through(ranks: int, rank: int | None) -> bool:
    """Five consecutive positions held, one of them ``rank``'s if given."""
    held = _positions(ranks)
    wanted = None if rank is None else _positions(1 << rank)
    return any(
        held >> low & 0b11111 == 0b11111 and (wanted is None or wanted >> low & 0b11111)
        for low in range(10)
    )


def test_13_69f_11_g_straight_flushes_with_and_without_joker_counted_by_suit(
    census: Counter[int],
) -> None:
    """Pay table "B": counted over the ranks held in one suit, the other cards chosen freely.

    Seven cards hold at most one suit of four or more, so the count for one suit times four
    counts each hand once. Without the joker: five of the suit's cards in a row, and the rest
    from the 39 cards of other suits and the joker. With it: the joker and four or more of the
    suit's cards, one missing card of the suit completing a row through itself.
    """
    without = with_joker = 0
    for ranks in range(1 << 13):
        held = ranks.bit_count()
        if held <= 7 and _runs_through(ranks, None):
            without += comb(40, 7 - held)
        missing = [rank for rank in range(13) if not ranks >> rank & 1]
        if 4 <= held <= 6 and any(_runs_through(ranks | 1 << r, r) for r in missing):
            with_joker += comb(39, 6 - held)
    assert hands_with(census, Line.STRAIGHT_FLUSH_WITHOUT_JOKER) == 4 * without
    assert hands_with(census, Line.STRAIGHT_FLUSH_WITH_JOKER) == 4 * with_joker
