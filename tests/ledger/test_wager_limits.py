"""Wager limits at lock (docs/rules.md § 8, docs/faults.md "Wager limits").

Every odds spot a table offers has a minimum and a maximum wager; a chip outside them is
refused when bets are locked, journaled as a ``wager-refused`` effect with its reason, and
never becomes a wager. The progressive spot keeps its one fixed denomination. A table
configured before limits existed enforces none, so that old journals replay as they were.
"""

from __future__ import annotations

from decimal import Decimal
from importlib import resources
from itertools import count

import msgspec
import pytest

from controller.effects import RoundStarted, WagerRefused
from controller.events import (
    AnyEvent,
    BetSensed,
    BetsLocked,
    PoolOpened,
    SpotLimits,
    TableConfigured,
    WagerLocked,
)
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.payout_floor import most_one_player_wins
from controller.ledger.table_rules import table_rules
from controller.rules.spots import Spot

AT = "2026-11-29T15:00:00Z"
TEN_BILLION_DOLLARS = 1_000_000_000_000  # cents
LIMITS = {"bonus": SpotLimits(500, 10_000), "ace-high": SpotLimits(500, 50_000)}
ids = count(1)


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


def configured(**changes: object) -> TableConfigured:
    names = ("fortune-1", "ace-high-1", "progressive-1")
    event = TableConfigured(
        "cfg", AT, "T1", {name: paytable(name) for name in names}, bonus="fortune-1",
        ace_high="ace-high-1", progressive="progressive-1", pool_id="P1", wager_limits=LIMITS,
    )  # fmt: skip
    return msgspec.structs.replace(event, **changes)


def floor(event: TableConfigured | None = None) -> LedgerState:
    state, _ = apply(
        LedgerState(), PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal(0))
    )
    state, _ = apply(state, event or configured())
    return state


def device(kind: type, *fields: object) -> AnyEvent:
    seq = next(ids)
    return kind(f"T1/dev/{seq}", AT, "T1", "dev", seq, *fields)  # type: ignore[no-any-return]


def lock(state: LedgerState, *chips: tuple[int, str, int]) -> tuple[LedgerState, list[object]]:
    effects: list[object] = []
    for seat, spot, cents in chips:
        state, more = apply(state, device(BetSensed, seat, spot, True, cents))
        effects += more
    state, more = apply(state, device(BetsLocked, "R1"))
    return state, [*effects, *more]


def refusals(effects: list[object]) -> dict[tuple[int, str], str]:
    return {(e.seat, e.spot): e.reason for e in effects if isinstance(e, WagerRefused)}


def test_a_ten_billion_dollar_bonus_wager_is_refused_at_lock_and_the_others_lock() -> None:
    state, effects = lock(floor(), (1, "bonus", TEN_BILLION_DOLLARS), (2, "bonus", 2_500))
    assert refusals(effects) == {
        (1, "bonus"): "the bonus wager of $10,000,000,000.00 is above table T1's maximum of $100.00"
    }
    assert [(w.seat, w.amount_cents) for w in state.rounds["T1", "R1"]] == [(2, 2_500)]
    assert RoundStarted("T1", "R1", 1) in effects


def test_a_chip_below_its_spots_minimum_is_refused_at_lock() -> None:
    state, effects = lock(floor(), (1, "bonus", 499), (2, "ace-high", 100))
    assert refusals(effects) == {
        (1, "bonus"): "the bonus wager of $4.99 is below table T1's minimum of $5.00",
        (2, "ace-high"): "the ace-high wager of $1.00 is below table T1's minimum of $5.00",
    }
    assert ("T1", "R1") not in state.rounds


def test_wagers_at_exactly_the_limits_lock_and_each_spot_has_its_own() -> None:
    chips = [(1, "bonus", 500), (2, "bonus", 10_000), (3, "ace-high", 50_000), (4, "bonus", 50_000)]
    state, effects = lock(floor(), *chips)
    assert list(refusals(effects)) == [(4, "bonus")]  # $500 is within Ace High's limit only
    assert len(state.rounds["T1", "R1"]) == 3


def test_a_direct_entry_wager_outside_the_limits_is_refused() -> None:
    with pytest.raises(LedgerError, match=r"above table T1's maximum of \$100\.00"):
        apply(floor(), WagerLocked("w", AT, "T1", "D1", 1, "bonus", 10_001))
    with pytest.raises(LedgerError, match=r"below table T1's minimum of \$5\.00"):
        apply(floor(), WagerLocked("w", AT, "T1", "D1", 1, "ace-high", 499))
    state, _ = apply(floor(), WagerLocked("w", AT, "T1", "D1", 1, "bonus", 10_000))
    assert state.rounds["T1", "D1"]


def test_the_progressive_spot_keeps_its_fixed_denomination() -> None:
    state, effects = lock(floor(), (1, "progressive", 100), (2, "progressive", 500))
    assert refusals(effects) == {(2, "progressive"): "the progressive wager is 100 cents, not 500"}
    assert state.pools["P1"].wagers_count == 1  # $1, below the $5 minimum of the odds spots
    with pytest.raises(LedgerError, match="progressive wager is its paytable's one denomination"):
        apply(floor(), configured(wager_limits={**LIMITS, "progressive": SpotLimits(100, 100)}))


def test_a_table_configured_before_limits_existed_enforces_none() -> None:
    """Its journal replays as it was played: the old event carries no ``wager_limits``."""
    old = configured(wager_limits=msgspec.UNSET)
    assert b"wager_limits" not in msgspec.json.encode(old)
    state, effects = lock(floor(old), (1, "bonus", TEN_BILLION_DOLLARS), (2, "bonus", 50))
    assert not refusals(effects)
    assert len(state.rounds["T1", "R1"]) == 2


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        ({"bonus": SpotLimits(500, 10_000)}, "ace-high: every spot needs a minimum and maximum"),
        ({**LIMITS, "side": SpotLimits(1, 2)}, "'side' is not a spot"),
        ({**LIMITS, "bonus": SpotLimits(0, 10_000)}, "bonus: the minimum must be at least 1 cent"),
        (
            {**LIMITS, "bonus": SpotLimits(500, 499)},
            r"bonus: the maximum \$4\.99 is below the minimum \$5\.00",
        ),
    ],
)
def test_every_odds_spot_offered_needs_valid_limits(
    limits: dict[str, SpotLimits], reason: str
) -> None:
    with pytest.raises(LedgerError, match=rf"table T1: wager_limits: {reason}"):
        apply(
            floor(configured(wager_limits=LIMITS)),
            configured(event_id="again", wager_limits=limits),
        )


def test_limits_for_a_spot_the_table_does_not_offer_are_refused() -> None:
    texts = {name: paytable(name) for name in ("fortune-1", "progressive-1")}
    event = configured(ace_high=None, paytables=texts)
    with pytest.raises(LedgerError, match="ace-high: the table offers no ace-high wager"):
        apply(floor(configured()), msgspec.structs.replace(event, event_id="again"))


def test_the_max_payout_floor_counts_each_spots_own_minimum() -> None:
    """§ 688a.12(e): the most one player can win betting the minimum, at each spot's minimum."""
    ruled = table_rules(configured())
    unruled = table_rules(configured(wager_limits=msgspec.UNSET))
    assert ruled.wager_limits is not None
    assert ruled.wager_limits[Spot.BONUS].minimum_cents == 500
    assert most_one_player_wins(ruled, 100) == most_one_player_wins(unruled, 500)
    assert most_one_player_wins(ruled, 100) > most_one_player_wins(unruled, 100)
