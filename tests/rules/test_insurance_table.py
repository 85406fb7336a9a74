"""The NJ insurance wager at the table: N.J.A.C. 13:69F-11.2(h) and docs/rules.md § 5.10.

The configuration that offers it and its journaled event, settlement on the player's own hand
(the § 688a.12(e) maximum payout, no § 688a.1 Envy), locking within the spot's limits, the
devices' ``insurance`` spot over MQTT and serial, and ``jackpotd hand``. The lines themselves,
their exact counts and the paytables are tests/rules/test_insurance.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.cli.cli_runs import run
from support.config_files import BASE, edited, error_of, load, write
from support.rules.insurance import (
    ACE_HIGH,
    AT,
    FORTUNE,
    NINE_HIGH,
    PAIR,
    QUADS,
    SAMPLE_1,
    SAMPLE_2,
    house_insurance,
)

from controller.cli import config_command
from controller.effects import WagerRefused
from controller.events import BetSensed, BetsLocked, SpotLimits, TableConfigured
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.payout_floor import most_one_player_wins
from controller.ledger.settlement import PayoutKind, SeatWager, TableRound, TableRules, settle_round
from controller.ledger.table_rules import table_rules
from controller.rules.cards import SevenCardHand
from controller.rules.paytable_files import (
    parse_paytable,
)
from controller.rules.spots import Spot
from drivers.mqtt.payloads import decode_table_event
from drivers.serial.protocol import decode_payload

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
