"""Table rounds driven by devices: bets sensed and locked, cards dealt, settled, held, void.

docs/architecture.md, "Table rounds": wagers count only when locked; cards are validated
(duplicates, two jokers, wrong count, a card from an unknown position) and an invalid round is held
for a supervisor without touching any meter; a table that goes offline refuses wagers
(docs/architecture.md, "Failing closed").
"""

from __future__ import annotations

from decimal import Decimal
from importlib import resources
from itertools import count

import pytest

from controller.effects import CardRecorded, PayoutMade, RoundClosed, RoundHeld, WagerRefused
from controller.events import (
    AnyEvent,
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    PoolOpened,
    RoundSettled,
    RoundVoided,
    TableConfigured,
    TableStatusChanged,
)
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.table_state import Phase

AT = "2026-11-29T15:00:00Z"
FIVE_ACES = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
SEAT_2 = ["Kc", "Kd", "Kh", "Ks", "5s", "6s", "9d"]
DEALER = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]
ids = count(1)


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


def run(state: LedgerState, *events: AnyEvent) -> tuple[LedgerState, list[object]]:
    effects: list[object] = []
    for event in events:
        state, more = apply(state, event)
        effects.extend(more)
    return state, effects


def device(kind: type, *fields: object, table: str = "T1", **named: object) -> AnyEvent:
    seq = next(ids)
    return kind(f"{table}/dev/{seq}", AT, table, "dev", seq, *fields, **named)  # type: ignore[no-any-return]


@pytest.fixture
def table() -> LedgerState:
    state, _ = run(
        LedgerState(),
        PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
        TableConfigured(
            "cfg",
            AT,
            "T1",
            {"fortune-1": paytable("fortune-1"), "progressive-1": paytable("progressive-1")},
            bonus="fortune-1",
            progressive="progressive-1",
            pool_id="P1",
        ),
    )
    return state


def deal(state: LedgerState, round_id: str, hands: dict[int, list[str]]) -> LedgerState:
    events = [
        device(CardDealt, round_id, position, card)
        for position, cards in hands.items()
        for card in cards
    ]
    return run(state, *events)[0]


def test_table_rounds_wagers_count_only_when_locked(table: LedgerState) -> None:
    state, _ = run(
        table, device(BetSensed, 1, "progressive", True), device(BetSensed, 2, "bonus", True, 500)
    )
    assert state.pools["P1"].wagers_count == 0  # a chip on a spot is not a wager yet
    state, _ = run(state, device(BetSensed, 2, "bonus", False))  # the player takes it back
    state, _effects = run(state, device(BetsLocked, "R1"))
    assert state.pools["P1"].wagers_count == 1
    assert state.pools["P1"].meter == 1_000_028
    assert [(w.seat, str(w.spot)) for w in state.rounds["T1", "R1"]] == [(1, "progressive")]
    assert state.table_states["T1"].phase is Phase.DEALING


def test_table_rounds_a_full_round_from_devices_settles_and_pays(table: LedgerState) -> None:
    state, _ = run(
        table,
        device(BetSensed, 1, "progressive", True),
        device(BetSensed, 2, "bonus", True, 500),
        device(BetsLocked, "R1"),
    )
    state = deal(state, "R1", {0: DEALER, 1: FIVE_ACES, 2: SEAT_2})
    state, effects = run(state, device(DealComplete, "R1"))
    payouts = {
        effect.payout_id.split("/", 3)[-1]: effect
        for effect in effects
        if isinstance(effect, PayoutMade)
    }
    assert payouts["1/progressive"].line == "five-aces"
    assert payouts["1/progressive"].from_meter_cents == 100_002  # 10 % of $10,000.28
    assert payouts["2/bonus"].win_cents == 500 * 20  # four of a kind, 20 to 1
    assert payouts["2/bonus/envy/1"].win_cents == 5_000  # five aces at seat 1: $50 Envy
    assert RoundClosed("T1", "R1", "settled") in effects
    assert state.table_states["T1"].phase is Phase.BETTING
    assert ("T1", "R1") not in state.rounds


def test_table_rounds_bets_after_lock_are_refused(table: LedgerState) -> None:
    state, _ = run(table, device(BetsLocked, "R1"))
    with pytest.raises(LedgerError, match="bets are locked"):
        apply(state, device(BetSensed, 1, "bonus", True, 500))


def test_table_rounds_an_invalid_bet_at_lock_is_refused_and_the_others_lock(
    table: LedgerState,
) -> None:
    state, _ = run(
        table,
        device(BetSensed, 1, "progressive", True, 200),
        device(BetSensed, 2, "progressive", True),
    )
    state, effects = run(state, device(BetsLocked, "R1"))
    (refused,) = [effect for effect in effects if isinstance(effect, WagerRefused)]
    assert refused.seat == 1
    assert "progressive wager is 100 cents" in refused.reason
    assert state.pools["P1"].wagers_count == 1


@pytest.mark.parametrize(
    ("card", "position", "reason"),
    [
        ("Ac", 1, "duplicate card Ac"),
        ("Xx", 1, "'Xx' is not a card"),
        ("Kd", 9, "position 9"),
    ],
)
def test_table_rounds_a_card_that_cannot_be_right_holds_the_round_without_touching_meters(
    table: LedgerState, card: str, position: int, reason: str
) -> None:
    state, _ = run(table, device(BetSensed, 1, "progressive", True), device(BetsLocked, "R1"))
    state = deal(state, "R1", {1: ["Ac", "Ad"]})
    meter = state.pools["P1"].meter
    state, effects = run(state, device(CardDealt, "R1", position, card))
    (held,) = effects
    assert isinstance(held, RoundHeld)
    assert reason in held.reason
    assert state.table_states["T1"].phase is Phase.HELD
    assert state.pools["P1"].meter == meter
    with pytest.raises(LedgerError, match="held for a supervisor"):
        apply(state, device(CardDealt, "R1", 2, "7h"))


def test_table_rounds_two_jokers_hold_the_round(table: LedgerState) -> None:
    state, _ = run(table, device(BetsLocked, "R1"))
    state = deal(state, "R1", {1: ["Jk"]})
    state, effects = run(state, device(CardDealt, "R1", 2, "Jk"))
    assert isinstance(effects[0], RoundHeld)
    assert "second joker" in effects[0].reason


def test_table_rounds_an_eighth_card_or_a_short_hand_holds_the_round(table: LedgerState) -> None:
    state, _ = run(table, device(BetsLocked, "R1"))
    state = deal(state, "R1", {0: DEALER, 1: FIVE_ACES})
    state, effects = run(state, device(CardDealt, "R1", 1, "9h"))
    assert "eighth card" in effects[0].reason  # type: ignore[attr-defined]
    state, _ = run(table, device(BetSensed, 2, "bonus", True, 500), device(BetsLocked, "R2"))
    state = deal(state, "R2", {0: DEALER, 2: SEAT_2[:5]})
    state, effects = run(state, device(DealComplete, "R2"))
    assert isinstance(effects[0], RoundHeld)
    assert "seat 2 has 5 cards" in effects[0].reason


def test_table_rounds_a_held_round_is_voided_or_settled_by_a_supervisor(table: LedgerState) -> None:
    state, _ = run(table, device(BetSensed, 1, "progressive", True), device(BetsLocked, "R1"))
    state = deal(state, "R1", {1: ["Ac", "Ac"]})
    assert state.table_states["T1"].phase is Phase.HELD
    settled, effects = run(state, RoundSettled("fix", AT, "T1", "R1", DEALER, {"1": FIVE_ACES}))
    assert settled.table_states["T1"].phase is Phase.BETTING
    assert any(isinstance(effect, PayoutMade) and effect.line == "five-aces" for effect in effects)
    voided, effects = run(state, RoundVoided("void", AT, "T1", "R1", "Dana", "misdeal", True))
    (refund,) = [effect for effect in effects if isinstance(effect, PayoutMade)]
    assert (refund.kind, refund.returned_cents) == ("void", 100)
    assert voided.pools["P1"] == table.pools["P1"]  # the contribution is reversed exactly
    assert voided.table_states["T1"].phase is Phase.BETTING


def test_table_rounds_an_offline_table_refuses_wagers_until_it_is_back(table: LedgerState) -> None:
    state, _ = run(
        table, TableStatusChanged("off", AT, "T1", online=False, reason="heartbeat lost")
    )
    for event in (device(BetSensed, 1, "bonus", True, 500), device(BetsLocked, "R1")):
        with pytest.raises(LedgerError, match="closed"):
            apply(state, event)
    state, _ = run(state, TableStatusChanged("on", AT, "T1", online=True, reason="back"))
    state, effects = run(state, device(BetSensed, 1, "bonus", True, 500))
    assert effects


def test_table_rounds_cards_for_a_round_not_in_play_are_refused(table: LedgerState) -> None:
    with pytest.raises(LedgerError, match="not in play"):
        apply(table, device(CardDealt, "R9", 1, "As"))
    _state, effects = run(table, device(BetsLocked, "R1"), device(CardDealt, "R1", 1, "As"))
    assert CardRecorded("T1", "R1", 1, "As") in effects


def test_table_rounds_an_event_from_an_unknown_table_is_refused(table: LedgerState) -> None:
    with pytest.raises(LedgerError, match="unknown table 'T9'"):
        apply(table, device(BetSensed, 1, "bonus", True, 500, table="T9"))
