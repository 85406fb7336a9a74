"""A journal of pays of every common kind, for the command line's tests (tests/cli/).

One table offering the Fortune bonus and the progressive (progressive-1) on pool ``P1``,
verification at $1,000. Round R1 (:data:`DAY_1`, 15:00 UTC) deals five aces to seat 1 (10 % of
the meter, a jackpot, pending; the bonus's 250 to 1, $1,250, pending too), a full house to seat
2 (the progressive's fixed $4, the bonus's 5 to 1) and Envy to the others for the five aces.
Round R2, a day later, deals a full house to seat 2 only.
"""

from __future__ import annotations

from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

from controller.events import PoolOpened, RoundSettled, TableConfigured, WagerLocked
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent

DAY_1 = "2026-11-29T15:00:00Z"
DAY_2 = "2026-11-30T15:00:00Z"
FIVE_ACES = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
FULL_HOUSE = ["Kc", "Kd", "Kh", "5s", "5c", "9d", "2h"]
NOTHING = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]
DEALER = ["3c", "4d", "6s", "8d", "Tc", "Qc", "7s"]


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


def wagers(round_id: str, at: str, seats: tuple[int, ...]) -> list[AnyEvent]:
    return [
        event
        for seat in seats
        for event in (
            WagerLocked(f"{round_id}-p{seat}", at, "T1", round_id, seat, "progressive", 100),
            WagerLocked(f"{round_id}-b{seat}", at, "T1", round_id, seat, "bonus", 500),
        )
    ]


def pays_journal(path: Path) -> Path:
    """Write the journal at ``path``."""
    events: list[AnyEvent] = [
        PoolOpened("pool", DAY_1, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
        TableConfigured(
            "table", DAY_1, "T1",
            {"fortune-1": paytable("fortune-1"), "progressive-1": paytable("progressive-1")},
            bonus="fortune-1", progressive="progressive-1", pool_id="P1",
            verification_cents=100_000,
        ),
        *wagers("R1", DAY_1, (1, 2, 3)),
        RoundSettled(
            "R1", DAY_1, "T1", "R1", DEALER, {"1": FIVE_ACES, "2": FULL_HOUSE, "3": NOTHING}
        ),
        *wagers("R2", DAY_2, (2,)),
        RoundSettled("R2", DAY_2, "T1", "R2", DEALER, {"2": FULL_HOUSE}),
    ]  # fmt: skip
    with Journal(path) as opened:
        assert all(receipt.applied for receipt in opened.append_many(events))
    return path
