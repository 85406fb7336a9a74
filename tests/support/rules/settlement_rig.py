"""Hand-built rounds for the settlement tests: the seed paytables, hands, pools at a meter.

Shared by tests/ledger/test_settlement.py and tests/ledger/test_settlement_envy.py; each test
works its expected amounts out by hand from the paytable's printed values.
"""

from __future__ import annotations

from fractions import Fraction
from importlib import resources
from typing import TYPE_CHECKING

from controller.ledger.pool import Pool, PoolTerms
from controller.ledger.settlement import Payout, PayoutKind, SeatWager, Settlement, TableRound
from controller.rules.cards import SevenCardHand
from controller.rules.paytable_files import seed_paytables

if TYPE_CHECKING:
    from controller.rules.spots import Spot

TABLES = seed_paytables()
FORTUNE = TABLES["fortune-1"]
ACE_HIGH = TABLES["ace-high-1"]
PROG1 = TABLES["progressive-1"]  # $1, $10,000 seed, wager not returned, semi-wild
PROG4 = TABLES["progressive-4"]  # $5, $5,000 + % of meter, wager returned, Envy column
PROG5 = TABLES["progressive-5"]  # $1, $5,000 seed, fully wild joker

SEED = 1_000_000
ONE = Fraction(1, 100)  # progressive-4's 1 % rate of progression
FIVE_ACES = "Ac Ad Ah As Jk 2d 3d"
SEVEN_SF = "3c 4c 5c 6c 7c 8c 9c"
SEVEN_SF_HEARTS = "3h 4h 5h 6h 7h 8h 9h"
ROYAL_MATCH = "Ts Js Qs Ks As Kh Qh"
ROYAL_MATCH_DIAMONDS = "Td Jd Qd Kd Ad Kc Qc"
DEALER_NOTHING = "Kc Kd 2h 4s 6d 8s Tc"  # a pair of kings: no line on any table here


def hand(text: str) -> SevenCardHand:
    """The seven cards written as ``text``."""
    return SevenCardHand.parse(text)


def dealt(
    hands: dict[int, str],
    wagers: list[tuple[int, Spot, int]],
    dealer: str = DEALER_NOTHING,
) -> TableRound:
    """Round ``R1``: the seats' hands, their wagers ``(seat, spot, cents)``, the dealer's."""
    return TableRound(
        "R1",
        hand(dealer),
        {seat: hand(cards) for seat, cards in hands.items()},
        tuple(SeatWager(seat, spot, cents) for seat, spot, cents in wagers),
    )


def pool_at(meter_cents: int, seed_cents: int = SEED, rate: Fraction = Fraction(28, 100)) -> Pool:
    """Pool ``P1`` opened at ``seed_cents`` and adjusted to ``meter_cents``."""
    pool = Pool.open("P1", PoolTerms(seed_cents, rate))
    if meter_cents != seed_cents:
        pool = pool.adjust("meter", meter_cents - seed_cents)
    return pool


def only(settlement: Settlement, seat: int, kind: PayoutKind | None = None) -> Payout:
    """The one payout to ``seat`` that is not Envy (of ``kind`` if given)."""
    found = [
        payout
        for payout in settlement.payouts
        if payout.seat == seat
        and payout.kind is not PayoutKind.ENVY
        and (kind is None or payout.kind is kind)
    ]
    assert len(found) == 1, found
    return found[0]


def envy(settlement: Settlement, seat: int) -> dict[int, int]:
    """Envy paid to ``seat``, by the seat whose hand earned it (0 is the dealer)."""
    paid: dict[int, int] = {}
    for payout in settlement.payouts:
        if payout.seat == seat and payout.kind is PayoutKind.ENVY:
            assert payout.envy_from_seat is not None
            assert payout.envy_from_seat not in paid
            paid[payout.envy_from_seat] = payout.win_cents
    return paid


def paytable_text(name: str) -> str:
    """The shipped paytable file ``name``, as text."""
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()
