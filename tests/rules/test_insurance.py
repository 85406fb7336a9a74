"""The NJ insurance wager: N.J.A.C. 13:69F-11.2(h) and the reading of docs/rules.md § 5.10.

The wager (authorized by 13:69F-11.15, which is not in the seeds) pays on the player's own seven
cards when they are a *pai gow* hand (no pair, no straight, no flush), by the top card, the
joker ranked as an ace and nothing else (rule (h)). Checked here: the lines hand by hand and
against the independent oracle (tests/support/rules/oracle.py), their exact counts over all
154,143,080 hands against a closed form, the sample paytables and their marking, and the loader. The
wager at the table (the configuration and its journaled event, settlement, locking with wager
limits, the devices' ``insurance`` spot, ``jackpotd hand``) is tests/rules/test_insurance_table.py;
the daemon end to end is tests/e2e/test_insurance_end_to_end.py.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.config_files import write
from support.rules import oracle
from support.rules.insurance import (
    NINE_HIGH,
    PAIR,
    SAMPLE_1,
    SAMPLE_2,
    SAMPLES,
    house_insurance,
)

from controller.analyzer.census import mask_census
from controller.analyzer.deck import FULL_DECK, Deck
from controller.analyzer.report import Analyzer
from controller.rules.cards import DECK, JokerMode, SevenCardHand
from controller.rules.lines import BIT, Line, lines_in
from controller.rules.paytable_files import (
    PaytableError,
    _shipped,
    parse_paytable,
    seed_paytables,
)
from controller.rules.qualify import INSURANCE, has_run, qualifier

if TYPE_CHECKING:
    from collections.abc import Sequence


def insurance_lines(text: str | Sequence[str], mode: JokerMode = JokerMode.SEMI_WILD) -> set[Line]:
    hand = SevenCardHand.parse(text if isinstance(text, str) else list(text))
    return set(lines_in(qualifier(mode)(hand.indices) & INSURANCE))


# --- the lines, hand by hand ---------------------------------------------------------------


ACE_NATURAL = {Line.INSURANCE_ACE_HIGH, Line.INSURANCE_ACE_HIGH_NO_JOKER}
ACE_JOKER = {Line.INSURANCE_ACE_HIGH, Line.INSURANCE_ACE_HIGH_WITH_JOKER}


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (NINE_HIGH, {Line.INSURANCE_NINE_HIGH}),
        ("2c 3d 4h 6s 7c 8d 9h", {Line.INSURANCE_NINE_HIGH}),
        ("2c 3d 4h 5s 7c 8d Th", {Line.INSURANCE_TEN_HIGH}),
        ("2c 3d 4h 5s 7c 9d Jh", {Line.INSURANCE_JACK_HIGH}),
        ("2c 3d 4h 5s 7c 9d Qh", {Line.INSURANCE_QUEEN_HIGH}),
        ("Ks Qd Jc 9s 7h 3c 2d", {Line.INSURANCE_KING_HIGH}),
        ("As Kd Qc 9s 7h 3c 2d", ACE_NATURAL),
        ("Jk Kd Qc 9s 7h 3c 2d", ACE_JOKER),
        (PAIR, set()),
        ("2c 3d 4h 5s 6c 8d 9h", set()),  # 2-3-4-5-6
        ("As 2d 3c 4s 5h 9c Jd", set()),  # A-2-3-4-5
        ("As Ks Qs 9s 7s 3c 2d", set()),  # five spades
    ],
)
def test_13_69f_11_2_h_insurance_pays_a_pai_gow_hand_by_its_top_card(
    cards: str, expected: set[Line]
) -> None:
    assert insurance_lines(cards) == expected


@pytest.mark.parametrize(
    ("cards", "expected", "why"),
    [
        ("Jk Ad Qc 9s 7h 3c 2d", set(), "the joker and the ace are a pair of aces"),
        ("Jk Kd Qc Js Th 3c 2d", set(), "as the ace it makes A-K-Q-J-10"),
        ("Jk 2d 3c 4s 5h 9c Jd", set(), "as the ace it makes A-2-3-4-5"),
        ("Jk Kd Qc Js 9h 3c 2d", ACE_JOKER, "it is no ten: K-Q-J-9 stays a pai gow"),
        ("Jk 3d 4c 5s 6h 9c Jd", ACE_JOKER, "it is no two: 3-4-5-6 stays a pai gow"),
        ("Jk Ks Qs 9s 7s 3c 2d", ACE_JOKER, "it has no suit: four spades are no flush"),
        ("Jk Ks Qs 9s 7s 3s 2d", set(), "five natural spades are a flush"),
    ],
)
def test_13_69f_11_2_h_the_joker_is_ranked_as_an_ace_and_nothing_else(
    cards: str, expected: set[Line], why: str
) -> None:
    assert insurance_lines(cards) == expected, why


def test_13_69f_11_2_h_reads_the_joker_so_whatever_the_paytables_joker_mode() -> None:
    """The semi-wild joker would complete K-Q-J-10-9 or a flush; for this wager it does not."""
    for cards in ("Jk Kd Qc Js 9h 3c 2d", "Jk Ks Qs 9s 7s 3c 2d"):
        semi = qualifier(JokerMode.SEMI_WILD)(SevenCardHand.parse(cards).indices)
        assert not semi & BIT[Line.ACE_HIGH_WITH_JOKER]  # Face Up's ace high: not a pai gow
        assert insurance_lines(cards, JokerMode.FULLY_WILD) == insurance_lines(cards) == ACE_JOKER


# --- the lines against the oracle ----------------------------------------------------------


@st.composite
def pai_gow_leaning(draw: st.DrawFn) -> list[str]:
    """Seven cards, mostly of different ranks up to a top card, often the joker, often suited."""
    top = draw(st.integers(9, oracle.ACE))
    ranks = draw(st.lists(st.integers(2, top - 1), min_size=6, max_size=6, unique=True))
    suits = oracle.SUIT_SYMBOLS
    suited = draw(st.sampled_from(suits))
    hand = [
        oracle.RANK_SYMBOLS[rank - 2]
        + (suited if draw(st.booleans()) else draw(st.sampled_from(suits)))
        for rank in (*ranks, top)
    ]
    hand = list(dict.fromkeys(hand))
    if draw(st.booleans()):
        hand[draw(st.integers(0, len(hand) - 1))] = oracle.JOKER
    while len(hand) < 7:
        hand.append(draw(st.sampled_from([c for c in oracle.ALL_CODES if c not in hand])))
    return hand


@settings(max_examples=1500, deadline=None)
@given(hand=pai_gow_leaning())
def test_13_69f_11_2_h_insurance_lines_match_the_oracle(hand: list[str]) -> None:
    expected = oracle.insurance_lines(
        [card for card in map(oracle.parse_code, hand) if card is not None],
        has_joker=oracle.JOKER in hand,
    )
    for mode in JokerMode:
        assert {line.value for line in insurance_lines(hand, mode)} == expected, hand


def test_the_pai_gow_strategy_reaches_every_insurance_line() -> None:
    seen: set[str] = set()

    @settings(max_examples=600, deadline=None, derandomize=True, database=None)
    @given(hand=pai_gow_leaning())
    def collect(hand: list[str]) -> None:
        seen.update(oracle.qualifying_lines(hand) & oracle.INSURANCE_LINES)

    collect()
    assert seen == oracle.INSURANCE_LINES


# --- exact counts --------------------------------------------------------------------------


def closed_form() -> dict[Line, int]:
    """The pai gow hands by top card, counted a second way: rank sets times suitings.

    A natural pai gow is seven different ranks with no five in a row (the ace low too) and no
    suit holding five of them: 4^7 suitings less those with five, six or seven of one suit. With
    the joker as the ace: six ranks below the ace that, with the ace, hold no five in a row,
    and no natural suit of five (the joker has none).
    """
    natural = 4**7 - 4 * sum(comb(7, k) * 3 ** (7 - k) for k in (5, 6, 7))
    with_joker = 4**6 - 4 * sum(comb(6, k) * 3 ** (6 - k) for k in (5, 6))
    tops = {
        7: Line.INSURANCE_NINE_HIGH,
        8: Line.INSURANCE_TEN_HIGH,
        9: Line.INSURANCE_JACK_HIGH,
        10: Line.INSURANCE_QUEEN_HIGH,
        11: Line.INSURANCE_KING_HIGH,
        12: Line.INSURANCE_ACE_HIGH_NO_JOKER,
    }
    counts: Counter[Line] = Counter()
    for ranks in combinations(range(13), 7):
        if not has_run(sum(1 << rank for rank in ranks), 5):
            counts[tops[max(ranks)]] += natural
    for ranks in combinations(range(12), 6):
        if not has_run(sum(1 << rank for rank in ranks) | 1 << 12, 5):
            counts[Line.INSURANCE_ACE_HIGH_WITH_JOKER] += with_joker
    ace = counts[Line.INSURANCE_ACE_HIGH_NO_JOKER] + counts[Line.INSURANCE_ACE_HIGH_WITH_JOKER]
    counts[Line.INSURANCE_ACE_HIGH] = ace
    return dict(counts)


def test_the_census_counts_every_insurance_line_exactly_over_all_154143080_hands() -> None:
    census = mask_census(FULL_DECK, JokerMode.SEMI_WILD)
    counted = {
        line: sum(hands for mask, hands in census.items() if mask & BIT[line])
        for line in Line
        if line.bit & INSURANCE
    }
    assert counted == closed_form()
    assert counted[Line.INSURANCE_NINE_HIGH] == 31_080
    assert counted[Line.INSURANCE_ACE_HIGH] == 16_293_480


def test_the_census_equals_the_oracle_hand_by_hand_on_a_low_pai_gow_deck() -> None:
    """2-3-4-5-7-8-9-10 in two suits and the joker: nine high, ten high, the joker's ace."""
    deck = Deck((0, 1, 2, 3, 5, 6, 7, 8), 2, joker=True)
    codes = [DECK[index].code for index in deck.card_indices]
    brute: Counter[int] = Counter()
    for hand in combinations(codes, 7):
        brute[sum(BIT[Line(slug)] for slug in oracle.qualifying_lines(hand))] += 1
    assert mask_census(deck, JokerMode.SEMI_WILD) == brute
    reached = {line for line in Line if any(mask & line.bit for mask in brute)}
    assert {
        Line.INSURANCE_NINE_HIGH,
        Line.INSURANCE_TEN_HIGH,
        Line.INSURANCE_ACE_HIGH_WITH_JOKER,
    } <= reached


@pytest.mark.parametrize(
    ("name", "exact"),
    [
        ("insurance-sample-1", Fraction(513207, 550511)),
        ("insurance-sample-2", Fraction(526914, 550511)),
    ],
)
def test_the_samples_analysis_is_the_one_docs_analyzer_md_prints(
    name: str, exact: Fraction
) -> None:
    analysis = Analyzer().analyze(SAMPLES[name])
    assert analysis.total == comb(53, 7)
    assert analysis.return_ == exact
    counts = {figures.row.line: figures.count for figures in analysis.lines}
    assert all(counts[line] == count for line, count in closed_form().items() if line in counts)


# --- the samples and the loader ------------------------------------------------------------


def test_the_insurance_samples_are_marked_samples_and_no_seed_is() -> None:
    assert {SAMPLE_1.wager, SAMPLE_2.wager} == {"insurance"}
    assert SAMPLE_1.sample
    assert SAMPLE_2.sample
    assert all("(SAMPLE)" in table.title for table in (SAMPLE_1, SAMPLE_2))
    assert not any(table.sample for table in seed_paytables().values())


def test_a_shipped_sample_must_say_so_and_a_seed_must_not(tmp_path: Path) -> None:
    text = (
        Path(__file__).parents[2] / "controller/paytables/samples/insurance-sample-1.toml"
    ).read_text()
    write(tmp_path, text.replace("sample = true\n", ""), "samples/insurance-sample-1.toml")
    with pytest.raises(PaytableError, match="a file here is a sample: say sample = true"):
        _shipped(tmp_path / "samples", "samples", sample=True)
    write(tmp_path, text.replace("insurance-sample-1", "house-insurance-1"), "seeds/h.toml")
    with pytest.raises(PaytableError, match="name"):
        _shipped(tmp_path / "seeds", "seeds")


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        ({'"1 to 1"\n': '"1 to 1"\nenvy = "$5"\n'}, "lines[1].envy", "no Envy column"),
        (
            {"semi-wild": "fully-wild"},
            "joker",
            "ranks the joker as an ace (N.J.A.C. 13:69F-11.2(h))",
        ),
        ({'"insurance-nine-high"': '"flush"'}, "lines[0].line", "flush is not a insurance hand"),
        (
            {'wager = "insurance"': 'wager = "fortune-bonus"'},
            "lines[0].line",
            "not a fortune-bonus",
        ),
    ],
)
def test_an_insurance_paytable_is_refused_naming_the_key(
    change: dict[str, str], key: str, reason: str
) -> None:
    with pytest.raises(PaytableError) as caught:
        parse_paytable(house_insurance(change), "house-insurance-1.toml")
    assert (caught.value.key, reason in caught.value.reason) == (key, True), caught.value
