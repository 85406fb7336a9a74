"""The NJ insurance wager: N.J.A.C. 13:69F-11.2(h) and the reading of docs/rules.md § 5.10.

The wager (authorized by 13:69F-11.15, which is not in the seeds) pays on the player's own seven
cards when they are a *pai gow* hand (no pair, no straight, no flush), by the top card, the
joker ranked as an ace and nothing else (rule (h)). Checked here: the lines hand by hand and
against the independent oracle (tests/support/oracle.py), their exact counts over all 154,143,080
hands
against a closed form, the sample paytables and their marking, the loader, the configuration
and its journaled event, settlement (the maximum payout, no Envy), locking with wager limits,
and the devices' ``insurance`` spot. The daemon end to end is
tests/e2e/test_insurance_end_to_end.py.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import oracle
from support.cli_runs import run
from support.config_files import BASE, edited, error_of, load, write
from support.insurance import house_insurance

from controller.analyzer.census import mask_census
from controller.analyzer.deck import FULL_DECK, Deck
from controller.analyzer.report import Analyzer
from controller.cli import config_command
from controller.effects import WagerRefused
from controller.events import BetSensed, BetsLocked, SpotLimits, TableConfigured
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.payout_floor import most_one_player_wins
from controller.ledger.settlement import PayoutKind, SeatWager, TableRound, TableRules, settle_round
from controller.ledger.table_rules import table_rules
from controller.rules.cards import DECK, JokerMode, SevenCardHand
from controller.rules.lines import BIT, Line, lines_in
from controller.rules.paytable_files import (
    PaytableError,
    _shipped,
    parse_paytable,
    sample_paytables,
    seed_paytables,
)
from controller.rules.qualify import INSURANCE, has_run, qualifier
from controller.rules.spots import Spot
from drivers.mqtt.payloads import decode_table_event
from drivers.serial.protocol import decode_payload

if TYPE_CHECKING:
    from collections.abc import Sequence

SAMPLES = sample_paytables()
SAMPLE_1 = SAMPLES["insurance-sample-1"]
SAMPLE_2 = SAMPLES["insurance-sample-2"]
FORTUNE = seed_paytables()["fortune-1"]
ACE_HIGH = seed_paytables()["ace-high-1"]
AT = "2026-12-01T10:00:00Z"

NINE_HIGH = "2c 3d 4h 5s 7c 8d 9h"
PAIR = "2c 2d 4h 5s 7c 8d 9h"
QUADS = "Jc Jd Jh Js 6c 5d Kh"


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


# --- the configuration and its event -------------------------------------------------------


def configured(tmp_path: Path, table_lines: str = "") -> str:
    write(tmp_path, house_insurance(), "paytables/house-insurance-1.toml")
    return edited(
        'bonus = "fortune-1"\n', f'insurance = "house-insurance-1"\n{table_lines}'
    ).replace('id = "c1"\n', 'id = "c1"\npaytable_dirs = ["paytables"]\n')


def test_a_table_offers_insurance_journaled_whole_with_its_limits(tmp_path: Path) -> None:
    text = configured(
        tmp_path,
        'minimum_wager = "$5"\nwager_limits = { insurance = { maximum = "$200" } }\n',
    )
    table = load(tmp_path, text).tables[0]
    event = table.event
    assert event.insurance == "house-insurance-1"
    assert event.paytables["house-insurance-1"] == house_insurance()
    assert event.wager_limits == {"insurance": SpotLimits(500, 20_000)}
    assert table.rules.insurance == parse_paytable(house_insurance(), "x")
    assert msgspec.json.decode(msgspec.json.encode(event), type=TableConfigured) == event


def test_a_table_without_insurance_journals_the_event_it_always_did(tmp_path: Path) -> None:
    """Old journals replay unchanged: the field is UNSET, never encoded, when not offered."""
    event = load(tmp_path, BASE).tables[0].event
    assert isinstance(event.insurance, msgspec.UnsetType)
    old = json.loads(msgspec.json.encode(event))
    assert "insurance" not in old
    replayed = msgspec.json.decode(json.dumps(old), type=TableConfigured)
    assert replayed == event
    assert table_rules(replayed).insurance is None


@pytest.mark.parametrize(
    "reference",
    ["insurance-sample-1", "controller/paytables/samples/insurance-sample-2.toml"],
)
def test_a_sample_is_refused_in_a_configuration(tmp_path: Path, reference: str) -> None:
    if reference.endswith(".toml"):
        reference = str(Path(__file__).parents[2] / reference)
    text = edited('bonus = "fortune-1"\n', f'insurance = "{reference}"\n')
    error = error_of(tmp_path, text)
    assert error.key == "tables[0].insurance"
    assert "is a sample, not a filed paytable: file your own" in error.reason


def test_an_insurance_paytable_is_refused_on_the_bonus_spot(tmp_path: Path) -> None:
    text = configured(tmp_path).replace(
        'insurance = "house-insurance-1"', 'bonus = "house-insurance-1"'
    )
    error = error_of(tmp_path, text)
    assert error.key == "tables[0].bonus"
    assert "house-insurance-1 is for the insurance wager" in error.reason


def test_config_check_shows_the_insurance_paytable(tmp_path: Path) -> None:
    config = load(tmp_path, configured(tmp_path))
    assert "insurance house-insurance-1" in "\n".join(config_command.summary(config))
    assert config_command.as_json(config)["tables"][0]["insurance"] == "house-insurance-1"
    plain = load(tmp_path, BASE)
    assert config_command.as_json(plain)["tables"][0]["insurance"] is None


def test_688a12_e_floor_counts_the_insurance_top_odds_at_its_minimum() -> None:
    limits = {Spot.INSURANCE: SpotLimits(1_000, 10_000)}
    rules = TableRules("T1", insurance=SAMPLE_1, wager_limits=limits)
    assert most_one_player_wins(rules, 500) == 500 * 1_000  # 500 to 1 at the $10 minimum


# --- settlement ----------------------------------------------------------------------------


def dealt(hands: dict[int, str], wagers: list[tuple[int, Spot, int]], dealer: str) -> TableRound:
    return TableRound(
        "R1",
        SevenCardHand.parse(dealer),
        {seat: SevenCardHand.parse(cards) for seat, cards in hands.items()},
        tuple(SeatWager(seat, spot, cents) for seat, spot, cents in wagers),
    )


@pytest.mark.parametrize(
    ("cards", "line", "kind", "win"),
    [
        (NINE_HIGH, "insurance-nine-high", PayoutKind.WIN, 500 * 500),
        ("Jk Kd Qc 9s 7h 3c 2d", "insurance-ace-high-with-joker", PayoutKind.WIN, 3 * 500),
        ("As Kd Qc 9s 7h 3c 2d", "insurance-ace-high-no-joker", PayoutKind.PUSH, 0),
        (PAIR, None, PayoutKind.LOSS, 0),
    ],
)
def test_13_69f_11_2_h_insurance_pays_the_players_own_hand_whatever_the_dealers(
    cards: str, line: str | None, kind: PayoutKind, win: int
) -> None:
    rules = TableRules("T1", insurance=SAMPLE_2)
    for dealer in ("Ah Kh Qd 9d 7d 3h 2h", "Kc Ks 6h 6s Tc Td 4d"):  # a pai gow, two pair
        (payout,) = settle_round(
            rules, dealt({1: cards}, [(1, Spot.INSURANCE, 500)], dealer)
        ).payouts
        assert (payout.spot, payout.line, payout.kind, payout.win_cents) == (
            Spot.INSURANCE,
            line,
            kind,
            win,
        )
        assert payout.returned_cents == (0 if kind is PayoutKind.LOSS else 500)


def test_688a12_e_the_maximum_payout_caps_insurance_with_the_seats_other_odds_pays() -> None:
    """A nine high ($100 at 500 to 1: $50,000) and Ace High ($1,000 at 8 to 1: $8,000)."""
    rules = TableRules("T1", ace_high=ACE_HIGH, insurance=SAMPLE_1, max_payout_cents=5_000_000)
    round_ = dealt(
        {1: NINE_HIGH},
        [(1, Spot.INSURANCE, 10_000), (1, Spot.ACE_HIGH, 100_000)],
        "Ah Kh Qd 9d 7d 3h 2h",  # the dealer's ace high, no joker; the player's is nine high
    )
    paid = {p.spot: p for p in settle_round(rules, round_).payouts}
    assert (paid[Spot.ACE_HIGH].line, paid[Spot.ACE_HIGH].win_cents) == (
        "dealer-only-ace-high-no-joker",
        800_000,
    )
    # $58,000 won, $8,000 over the cap: cut from the largest win, the insurance.
    assert (paid[Spot.INSURANCE].win_cents, paid[Spot.INSURANCE].capped_cents) == (
        4_200_000,
        800_000,
    )


def test_688a1_an_insurance_wager_never_qualifies_for_envy() -> None:
    rules = TableRules("T1", bonus=FORTUNE, insurance=SAMPLE_1)
    round_ = dealt(
        {1: NINE_HIGH, 2: QUADS},
        [(1, Spot.INSURANCE, 10_000), (2, Spot.BONUS, 500)],
        "Kc Ks 6h 6s Tc Td 4d",
    )
    kinds = [(p.seat, p.spot, p.kind) for p in settle_round(rules, round_).payouts]
    assert kinds == [(1, Spot.INSURANCE, PayoutKind.WIN), (2, Spot.BONUS, PayoutKind.WIN)]


# --- locking, with the spot's limits --------------------------------------------------------


def floor(**changes: object) -> LedgerState:
    event = TableConfigured(
        "cfg", AT, "T1", {"house-insurance-1": house_insurance()},
        insurance="house-insurance-1", wager_limits={"insurance": SpotLimits(500, 20_000)},
    )  # fmt: skip
    state, _ = apply(LedgerState(), msgspec.structs.replace(event, **changes))
    return state


def lock(state: LedgerState, *chips: tuple[int, str, int]) -> tuple[LedgerState, list[object]]:
    effects: list[object] = []
    for seq, (seat, spot, cents) in enumerate(chips, start=1):
        state, more = apply(
            state, BetSensed(f"T1/s/{seq}", AT, "T1", "s", seq, seat, spot, True, cents)
        )
        effects += more
    state, more = apply(state, BetsLocked("T1/c/1", AT, "T1", "c", 1, "R1"))
    return state, [*effects, *more]


def test_insurance_chips_lock_within_the_spots_limits_and_are_refused_outside() -> None:
    state, effects = lock(floor(), (1, "insurance", 500), (2, "insurance", 50_000))
    assert [(w.seat, w.spot, w.amount_cents) for w in state.rounds["T1", "R1"]] == [
        (1, Spot.INSURANCE, 500)
    ]
    refused = [(e.seat, e.spot, e.reason) for e in effects if isinstance(e, WagerRefused)]
    assert refused == [
        (2, "insurance", "the insurance wager of $500.00 is above table T1's maximum of $200.00")
    ]


def test_a_table_without_insurance_refuses_an_insurance_chip() -> None:
    plain = TableConfigured(
        "cfg", AT, "T1", {"fortune-1": paytable_text("fortune-1")}, bonus="fortune-1",
        wager_limits={"bonus": SpotLimits(100, 10_000)},
    )  # fmt: skip
    state, _ = apply(LedgerState(), plain)
    chip = BetSensed("T1/s/1", AT, "T1", "s", 1, 1, "insurance", True, 500)
    with pytest.raises(LedgerError, match=r"^table T1 offers no insurance wager$"):
        apply(state, chip)


def test_limits_for_insurance_on_a_table_without_it_are_refused() -> None:
    limits = {"bonus": SpotLimits(100, 10_000), "insurance": SpotLimits(1, 2)}
    event = TableConfigured(
        "cfg", AT, "T1", {"fortune-1": paytable_text("fortune-1")}, bonus="fortune-1",
        wager_limits=limits,
    )  # fmt: skip
    with pytest.raises(LedgerError, match="the table offers no insurance wager"):
        apply(LedgerState(), event)


def paytable_text(name: str) -> str:
    return (Path(__file__).parents[2] / "controller/paytables" / f"{name}.toml").read_text()


# --- the devices' spot ---------------------------------------------------------------------


def test_devices_report_an_insurance_chip_over_mqtt_and_serial() -> None:
    payload = json.dumps(
        {"v": 1, "device": "sensor-1", "seq": 7, "seat": 3, "spot": "insurance", "present": True,
         "amount_cents": 500}
    ).encode()  # fmt: skip
    event = decode_table_event("t1", "bet", payload, at=AT)
    assert isinstance(event, BetSensed)
    assert (event.spot, event.amount_cents) == ("insurance", 500)
    serial = decode_payload("BET,sensor-1,8,3,insurance,1,500", "t1", at=AT)
    assert isinstance(serial, BetSensed)
    assert (serial.seat, serial.spot, serial.amount_cents) == (3, "insurance", 500)


# --- jackpotd hand -------------------------------------------------------------------------


def test_jackpotd_hand_says_how_the_insurance_wager_reads_the_joker(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The best five may use the joker as a ten; the insurance line does not (13:69F-11.2(h))."""
    status, out, _ = run(capsys, "hand", "Jk Kd Qc Js 9h 3c 2d", "--paytable", "insurance-sample-2")
    assert status == 0
    assert "straight, K high" in out
    assert "Line:      Pai gow, ace high with joker: pays 3 to 1" in out
    assert "ranks the joker as an ace and nothing else (N.J.A.C. 13:69F-11.2(h))" in out
    status, out, _ = run(capsys, "hand", "Jk Kd Qc Js 9h 3c 2d", "--paytable", "fortune-1")
    assert "Note:" not in out
