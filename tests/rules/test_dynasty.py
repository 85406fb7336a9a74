"""The EZ Pai Gow Dynasty Bonus wager, its Envy and its spot (docs/rules.md § 5.4 and § 9).

N.J.A.C. 13:69F-11(i) and 58 Pa. Code § 645a.6(g) name the seven-card hands that "determine
the amount of the dynasty bonus wager and envy bonus payouts"; the table's Dynasty profile says
which list (docs/rules.md § 5.4). A seat's ``dynasty`` wager is paid on the highest-paying line
of the table's Dynasty paytable it qualifies for, and a ``dynasty`` wager of at least the Envy
minimum is a qualifying wager (58 Pa. Code § 688a.1): it collects the Envy amount for each
other player's hand at the table that makes an Envy line, never for the dealer's hand nor its
own. The sample paytables of ``controller/paytables/samples`` are used: their pays are the
project's, their hands the regulations'.
"""

from __future__ import annotations

import json
from importlib import resources
from itertools import count
from typing import TYPE_CHECKING

import msgspec
import pytest

from controller.cli import main
from controller.effects import PayoutMade, WagerRefused
from controller.events import (
    AnyEvent,
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    SpotLimits,
    TableConfigured,
    decode_event,
    encode_event,
)
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.payout_floor import most_one_player_wins
from controller.ledger.settlement import (
    PayoutKind,
    SeatWager,
    Settlement,
    TableRound,
    TableRules,
    settle_round,
)
from controller.ledger.table_rules import TableRulesError, table_rules
from controller.ledger.wager_limits import out_of_limits
from controller.rules.cards import SevenCardHand
from controller.rules.dynasty import off_profile
from controller.rules.paytable import DYNASTY_PROFILES
from controller.rules.paytable_files import sample_paytables, seed_paytables
from controller.rules.spots import DEALER_SEAT, Spot
from drivers.mqtt.payloads import decode_table_event
from drivers.serial.protocol import decode_payload

if TYPE_CHECKING:
    from pathlib import Path

SAMPLES = sample_paytables()
NJ = SAMPLES["dynasty-sample-nj-1"]
PA = SAMPLES["dynasty-sample-pa-1"]
PA_CAPTION = SAMPLES["dynasty-sample-pa-caption-1"]
FORTUNE = seed_paytables()["fortune-1"]
AT = "2026-11-29T15:00:00Z"

WHEEL_PLUS_ACE_QUEEN = "As 2s 3s 4s 5s Ah Qh"
SEVEN_SF = "3c 4c 5c 6c 7c 8c 9c"
NATURAL_ROYAL_PLUS_ACE_QUEEN = "As Ks Qs Js Ts Ah Qh"
JOKER_ROYAL_PLUS_ACE_QUEEN = "Jk Ks Qs Js Ts Ah Qh"
NATURAL_ROYAL_PLUS_ACE_KING = "As Ks Qs Js Ts Ah Kh"
WILD_SEVEN_SF = "3h 4h 5h 6h 7h 8h Jk"
NATURAL_WHEEL = "As 2s 3s 4s 5s Kd 9c"
JOKER_WHEEL = "Jk 2s 3s 4s 5s Kd 9c"


def text_of(name: str) -> str:
    folder = "samples/" if name in SAMPLES else ""
    return (resources.files("controller") / "paytables" / f"{folder}{name}.toml").read_text()


def paid(table_name: str, cards: str) -> tuple[str | None, int]:
    """The line a lone $1 Dynasty wager is paid on, and its win in cents."""
    table = SAMPLES[table_name]
    rules = TableRules("T1", dynasty=table)
    settlement = settle_round(
        rules,
        TableRound(
            "R1",
            SevenCardHand.parse("7d 7s 8d 9d Jc 2d 4d"),
            {1: SevenCardHand.parse(cards)},
            (SeatWager(1, Spot.DYNASTY, 100),),
        ),
    )
    (payout,) = settlement.payouts
    assert payout.spot is Spot.DYNASTY
    return payout.line, payout.win_cents


# --- The hands of each profile --------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "nj", "pa"),
    [
        (
            WHEEL_PLUS_ACE_QUEEN,
            ("natural-ace-five-straight-flush-plus-natural-suited-ace-queen", 800_000),
            ("natural-ace-five-straight-flush-plus-natural-suited-ace-queen", 800_000),
        ),
        (
            SEVEN_SF,
            ("seven-card-straight-flush-natural", 500_000),
            ("seven-card-straight-flush-natural", 500_000),
        ),
        (
            NATURAL_ROYAL_PLUS_ACE_QUEEN,
            ("royal-flush-plus-natural-suited-ace-queen", 200_000),
            ("natural-royal-flush-plus-natural-suited-ace-queen", 200_000),
        ),
        (
            JOKER_ROYAL_PLUS_ACE_QUEEN,
            ("royal-flush-plus-natural-suited-ace-queen", 200_000),
            ("royal-flush", 15_000),
        ),
        (
            WILD_SEVEN_SF,
            ("seven-card-straight-flush-with-joker", 100_000),
            ("seven-card-straight-flush-with-joker", 100_000),
        ),
        (NATURAL_WHEEL, ("straight-flush", 5_000), ("natural-ace-five-straight-flush", 25_000)),
        (JOKER_WHEEL, ("straight-flush", 5_000), ("straight-flush", 5_000)),
    ],
)
def test_13_69f_11_i_and_645a6_g_dynasty_wagers_pay_each_profiles_hands(
    cards: str, nj: tuple[str, int], pa: tuple[str, int]
) -> None:
    """NJ (i)3 takes a royal with the joker, PA (g)(3) a natural one; (g)(5) is PA's alone."""
    assert paid("dynasty-sample-nj-1", cards) == nj
    assert paid("dynasty-sample-pa-1", cards) == pa


def test_645a6_g3_the_caption_profile_pays_ace_king_and_the_text_profile_ace_queen() -> None:
    assert paid("dynasty-sample-pa-caption-1", NATURAL_ROYAL_PLUS_ACE_KING) == (
        "natural-royal-flush-plus-natural-suited-ace-king",
        200_000,
    )
    assert paid("dynasty-sample-pa-1", NATURAL_ROYAL_PLUS_ACE_KING) == ("royal-flush", 15_000)
    assert paid("dynasty-sample-pa-caption-1", NATURAL_ROYAL_PLUS_ACE_QUEEN) == (
        "royal-flush",
        15_000,
    )


def test_each_sample_keeps_to_its_profile_and_to_no_other() -> None:
    samples = {"nj": NJ, "pa": PA, "pa-caption": PA_CAPTION}
    for profile, table in samples.items():
        assert off_profile(table, profile) is None
        for other in DYNASTY_PROFILES.keys() - {profile}:
            assert off_profile(table, other) is not None, (table.name, other)
    assert off_profile(NJ, "ny") == "unknown Dynasty profile 'ny'; one of pa, pa-caption, nj"


# --- Its Envy (58 Pa. Code § 688a.1) --------------------------------------------------------

QUADS = "9c 9d 9h 9s 2c 5d Jh"  # four of a kind: the lowest Envy line, $5
FLUSH = "3c 6c 8c Tc Kc 4d 7s"  # 4 to 1, no Envy
SEVEN_SF_HEARTS = "2h 3h 4h 5h 6h 7h 8h"  # 5,000 to 1, $1,000 Envy
PAIR = "Qc Qd 2s 3s 6s 8d Td"
DEALER_FIVE_ACES = "Ac Ad Ah As Jk Ks 3d"  # $100 Envy, were it a player's


def envy_of(settlement: Settlement, seat: int) -> dict[int, int]:
    """Envy paid to ``seat``'s Dynasty wager, by the seat whose hand earned it."""
    return {
        payout.envy_from_seat or 0: payout.win_cents
        for payout in settlement.payouts
        if payout.seat == seat and payout.kind is PayoutKind.ENVY
    }


def test_688a1_dynasty_envy_for_other_players_hands_never_the_dealers_nor_ones_own() -> None:
    """Seat 3 wagers nothing and still makes Envy; $5 qualifies, $4.99 does not."""
    table_round = TableRound(
        "R1",
        SevenCardHand.parse(DEALER_FIVE_ACES),
        {
            seat: SevenCardHand.parse(cards)
            for seat, cards in {1: QUADS, 2: FLUSH, 3: SEVEN_SF_HEARTS, 4: PAIR}.items()
        },
        (
            SeatWager(1, Spot.DYNASTY, 500),
            SeatWager(2, Spot.DYNASTY, 1_000),
            SeatWager(4, Spot.DYNASTY, 499),
        ),
    )
    settlement = settle_round(TableRules("T1", dynasty=NJ), table_round)
    wins = {
        payout.seat: (payout.line, payout.win_cents)
        for payout in settlement.payouts
        if payout.kind is not PayoutKind.ENVY
    }
    assert wins == {
        1: ("four-of-a-kind", 500 * 25),
        2: ("flush", 1_000 * 4),
        4: (None, 0),
    }
    assert envy_of(settlement, 1) == {3: 100_000}  # not its own quads, not the dealer's aces
    assert envy_of(settlement, 2) == {1: 500, 3: 100_000}
    assert envy_of(settlement, 4) == {}  # below the $5 minimum
    assert DEALER_SEAT not in {p.envy_from_seat for p in settlement.payouts}
    assert all(p.spot is Spot.DYNASTY for p in settlement.payouts)


def test_688a1_a_dynasty_envy_is_shown_with_the_hand_that_earned_it() -> None:
    table_round = TableRound(
        "R1",
        SevenCardHand.parse(PAIR),
        {1: SevenCardHand.parse(FLUSH), 2: SevenCardHand.parse(SEVEN_SF_HEARTS)},
        (SeatWager(1, Spot.DYNASTY, 500),),
    )
    settlement = settle_round(TableRules("T1", dynasty=NJ), table_round)
    (envy,) = [p for p in settlement.payouts if p.kind is PayoutKind.ENVY]
    assert (envy.payout_id, envy.envy_from_seat, envy.win_cents) == (
        "R1/1/dynasty/envy/2",
        2,
        100_000,
    )
    assert envy.hand == str(SevenCardHand.parse(SEVEN_SF_HEARTS))
    assert envy.line == "seven-card-straight-flush-natural"


# --- The maximum payout ---------------------------------------------------------------------


def test_688a12_e_the_cap_takes_dynasty_and_bonus_wins_together_never_envy() -> None:
    rules = TableRules("T1", bonus=FORTUNE, dynasty=NJ, max_payout_cents=5_000_000)
    table_round = TableRound(
        "R1",
        SevenCardHand.parse(PAIR),
        {1: SevenCardHand.parse(SEVEN_SF), 2: SevenCardHand.parse(SEVEN_SF_HEARTS)},
        (
            SeatWager(1, Spot.DYNASTY, 10_000),  # 5,000 to 1: $500,000
            SeatWager(1, Spot.BONUS, 500),  # Fortune 5,000 to 1: $25,000
        ),
    )
    settlement = settle_round(rules, table_round)
    odds = [p for p in settlement.payouts if p.seat == 1 and p.kind is PayoutKind.WIN]
    assert sum(p.win_cents for p in odds) == 5_000_000
    assert sum(p.capped_cents for p in odds) == 50_000_000 + 2_500_000 - 5_000_000
    assert {p.spot: p.win_cents for p in settlement.payouts if p.kind is PayoutKind.ENVY} == {
        Spot.BONUS: 100_000,  # each qualifying wager its own Envy, whole
        Spot.DYNASTY: 100_000,
    }


# --- The table's rules, as journaled --------------------------------------------------------


def configured(**changes: object) -> TableConfigured:
    event = TableConfigured(
        "cfg", AT, "T1", {"dynasty-sample-nj-1": text_of("dynasty-sample-nj-1")},
        minimum_wager_cents=500, envy_includes_dealer=False,
        wager_limits={"dynasty": SpotLimits(500, 50_000)},
        dynasty="dynasty-sample-nj-1", dynasty_profile="nj",
    )  # fmt: skip
    return msgspec.structs.replace(event, **changes)


FORTUNE_TABLE = TableConfigured(
    "cfg", AT, "T1", {"fortune-1": text_of("fortune-1")}, bonus="fortune-1"
)


def test_a_table_without_the_dynasty_spot_journals_as_before() -> None:
    """Old journals replay unchanged: the new fields are never written unless set."""
    fortune = FORTUNE_TABLE
    assert b"dynasty" not in encode_event(fortune)
    assert decode_event(encode_event(fortune)) == fortune
    assert table_rules(fortune).dynasty is None
    rules = table_rules(configured())
    assert rules.dynasty is not None
    assert rules.dynasty.name == "dynasty-sample-nj-1"
    assert decode_event(encode_event(configured())) == configured()


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"dynasty_profile": "pa"},
            (
                "dynasty_profile: dynasty-sample-nj-1 pays royal-flush-plus-natural-suited-"
                "ace-queen, which the 'pa' Dynasty profile does not define"
            ),
        ),
        ({"dynasty_profile": "ny"}, "unknown Dynasty profile 'ny'"),
        ({"dynasty_profile": msgspec.UNSET}, "a Dynasty paytable and its profile go together"),
        (
            {"dynasty": msgspec.UNSET, "wager_limits": {}, "bonus": "fortune-1"},
            "a Dynasty paytable and its profile go together",
        ),
        (
            {"paytables": {"dynasty-sample-nj-1": text_of("fortune-1")}},
            "the text is paytable 'fortune-1'",
        ),
        ({"wager_limits": {}}, "dynasty: every spot needs a minimum and maximum"),
    ],
)
def test_a_dynasty_table_off_its_profile_or_incomplete_is_refused(
    changes: dict[str, object], reason: str
) -> None:
    """A forged or mistaken event is refused whole: the hands are one regulation's."""
    event = configured(**changes)
    if "bonus" in changes:
        event = msgspec.structs.replace(event, paytables={"fortune-1": text_of("fortune-1")})
    with pytest.raises(TableRulesError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        table_rules(event)


def test_a_fortune_paytable_is_not_a_dynasty_one() -> None:
    event = configured(
        paytables={"fortune-1": text_of("fortune-1")}, dynasty="fortune-1", dynasty_profile="nj"
    )
    with pytest.raises(TableRulesError, match="dynasty: fortune-1 is a fortune-bonus paytable"):
        table_rules(event)


def test_688a12_e_the_floor_counts_the_dynasty_top_pay_at_its_minimum_and_its_envy() -> None:
    rules = table_rules(configured())
    # 8,000 to 1 on the $5 minimum, and the top $5,000 Envy for each of the 5 other players.
    assert most_one_player_wins(rules, 500) == 8_000 * 500 + 500_000 * 5


def test_dynasty_chips_outside_their_limits_are_refused() -> None:
    rules = table_rules(configured())
    assert out_of_limits(rules, Spot.DYNASTY, 499) == (
        "the dynasty wager of $4.99 is below table T1's minimum of $5.00"
    )
    assert out_of_limits(rules, Spot.DYNASTY, 50_001) == (
        "the dynasty wager of $500.01 is above table T1's maximum of $500.00"
    )
    assert out_of_limits(rules, Spot.DYNASTY, 500) is None


# --- Through the ledger: devices bet, lock, deal ---------------------------------------------

ids = count(1)


def device(kind: type, *fields: object) -> AnyEvent:
    seq = next(ids)
    return kind(f"T1/dev/{seq}", AT, "T1", "dev", seq, *fields)  # type: ignore[no-any-return]


def test_a_dynasty_round_from_the_devices_pays_the_wager_and_the_envy() -> None:
    state, _ = apply(LedgerState(), configured())
    for seat, cents in ((1, 500), (2, 2_500), (3, 60_000)):
        state, _ = apply(state, device(BetSensed, seat, "dynasty", True, cents))
    state, locked = apply(state, device(BetsLocked, "R1"))
    refused = [(e.seat, e.reason) for e in locked if isinstance(e, WagerRefused)]
    assert refused == [(3, "the dynasty wager of $600.00 is above table T1's maximum of $500.00")]
    hands = {1: QUADS, 2: FLUSH, 3: SEVEN_SF_HEARTS, DEALER_SEAT: PAIR}
    for position, cards in hands.items():
        for card in cards.split():
            state, _ = apply(state, device(CardDealt, "R1", position, card))
    state, effects = apply(state, device(DealComplete, "R1"))
    payouts = {
        (p.seat, p.kind, p.envy_from_seat): p.win_cents
        for p in effects
        if isinstance(p, PayoutMade)
    }
    assert payouts == {
        (1, "win", None): 500 * 25,
        (1, "envy", 3): 100_000,
        (2, "win", None): 2_500 * 4,
        (2, "envy", 1): 500,
        (2, "envy", 3): 100_000,
    }
    assert {p.spot for p in effects if isinstance(p, PayoutMade)} == {"dynasty"}


def test_a_dynasty_chip_on_a_table_without_the_wager_is_refused() -> None:
    state, _ = apply(LedgerState(), FORTUNE_TABLE)
    with pytest.raises(LedgerError, match="table T1 offers no dynasty wager"):
        apply(state, device(BetSensed, 1, "dynasty", True, 500))


def test_the_devices_report_the_dynasty_spot_over_mqtt_and_serial() -> None:
    payload = b'{"v":1,"device":"bs-1","seq":7,"seat":2,"spot":"dynasty","present":true,'
    bet = decode_table_event("T1", "bet", payload + b'"amount_cents":500}', at=AT)
    assert isinstance(bet, BetSensed)
    assert (bet.seat, bet.spot, bet.amount_cents) == (2, "dynasty", 500)
    frame = decode_payload("BET,bs-1,8,2,dynasty,1,500", "T1", at=AT)
    assert isinstance(frame, BetSensed)
    assert (frame.seat, frame.spot, frame.amount_cents) == (2, "dynasty", 500)


# --- jackpotd config check ------------------------------------------------------------------


def test_config_check_shows_the_dynasty_paytable_and_its_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filed = text_of("dynasty-sample-pa-1").replace("sample = true\n", "")
    (tmp_path / "house-dynasty-1.toml").write_text(
        filed.replace('name = "dynasty-sample-pa-1"', 'name = "house-dynasty-1"')
    )
    config = tmp_path / "jackpotd.toml"
    config.write_text(
        '[controller]\nsite = "lab"\nid = "c1"\npaytable_dirs = ["."]\n\n'
        '[[tables]]\nid = "t1"\ntransport = "simulator"\ndynasty = "house-dynasty-1"\n'
    )
    assert main(["config", "check", str(config)]) == 0
    assert "t1: 6 seats over simulator; dynasty house-dynasty-1 (pa profile);" in (
        capsys.readouterr().out
    )
    assert main(["config", "check", str(config), "--json"]) == 0
    (table,) = json.loads(capsys.readouterr().out)["tables"]
    assert (table["dynasty"], table["dynasty_profile"]) == ("house-dynasty-1", "pa")
    assert table["wager_limits"] == {"dynasty": {"minimum_cents": 100, "maximum_cents": 100_000}}
