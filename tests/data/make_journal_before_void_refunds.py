"""Write ``journal_before_void_refunds.db``, a journal of the controller before void refunds.

That is how the controller wrote it before voids reversed contributions and before wager
limits (commit 5922130).

Run it with that commit's code on the path, never with today's (the file is the point):

    git archive 5922130 | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python tests/data/make_journal_before_void_refunds.py OUT.db

It plays, on one pool with sub-cent rates and a limit, everything whose meaning changed:
a device voiding a held round (its contribution kept), a supervisor voiding a direct-entry
round, bonus wagers below the minimum and of $10,000,000,000 (accepted then), a 10 % hit and
a 100 % hit with overflow released, and a round left open (being dealt) at the end, whose
stored row lacks its contributions. ``tests/ledger/test_voids.py`` replays it.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from importlib import resources

from controller.events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    PoolOpened,
    RoundSettled,
    RoundVoided,
    TableConfigured,
    WagerLocked,
)
from controller.ledger_journal.sqlite import Journal

AT = "2026-11-29T15:00:00.000Z"
DEALER = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]
FIVE_ACES = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
SEVEN_CARD_FLUSH = ["3s", "4s", "5s", "6s", "7s", "8s", "9s"]
PLAIN = ["Kc", "Jd", "7d", "5c", "4d", "3c", "2h"]


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


def main(path: str) -> None:
    seq = iter(range(1, 1000))

    def device(kind: type, table: str, *fields: object) -> object:
        number = next(seq)
        return kind(f"{table}/dev/{number}", AT, table, "dev", number, *fields)

    tables = {"fortune-1": paytable("fortune-1"), "progressive-1": paytable("progressive-1")}
    events = [
        PoolOpened(
            "pool",
            AT,
            "P1",
            "progressive-1",
            1_000_000,
            Decimal("0.2875"),
            Decimal("0.0125"),
            limit_cents=1_000_100,
        ),
        *(
            TableConfigured(
                f"cfg-{table}",
                AT,
                table,
                tables,
                bonus="fortune-1",
                progressive="progressive-1",
                pool_id="P1",
            )
            for table in ("T1", "T2")
        ),
        # A held round voided by a device: the wagers come back, the contribution stays.
        device(BetSensed, "T1", 1, "progressive", True),
        device(BetSensed, "T1", 2, "bonus", True, 50),
        device(BetSensed, "T1", 3, "bonus", True, 1_000_000_000_000),
        device(BetsLocked, "T1", "R1"),
        device(CardDealt, "T1", "R1", 1, "Ac"),
        device(CardDealt, "T1", "R1", 2, "Ac"),
        RoundVoided("void-R1", AT, "T1", "R1", "device dealer", "misdeal"),
        # A 10 % hit.
        device(BetSensed, "T1", 1, "progressive", True),
        device(BetSensed, "T1", 2, "progressive", True),
        device(BetsLocked, "T1", "R2"),
        *(device(CardDealt, "T1", "R2", 0, card) for card in DEALER),
        *(device(CardDealt, "T1", "R2", 1, card) for card in FIVE_ACES),
        *(device(CardDealt, "T1", "R2", 2, card) for card in PLAIN),
        device(DealComplete, "T1", "R2"),
        # Direct entry: a 100 % hit, then a round voided by a supervisor.
        *(WagerLocked(f"D1-{seat}", AT, "T2", "D1", seat, "progressive", 100) for seat in (1, 2)),
        RoundSettled("settle-D1", AT, "T2", "D1", DEALER, {"1": SEVEN_CARD_FLUSH, "2": PLAIN}),
        WagerLocked("D2-1", AT, "T2", "D2", 1, "progressive", 100),
        RoundVoided("void-D2", AT, "T2", "D2", "Dana", "wrong table"),
        # Left open, being dealt, when the controller was upgraded.
        device(BetSensed, "T1", 1, "progressive", True),
        device(BetSensed, "T1", 4, "progressive", True),
        device(BetsLocked, "T1", "R3"),
        device(CardDealt, "T1", "R3", 0, "Qh"),
    ]
    with Journal(path) as journal:
        for event in events:
            receipt = journal.append(event)  # type: ignore[arg-type]
            assert receipt.applied, (event, receipt.reason)
        pool = journal.state.pools["P1"]
        print(pool.meter, pool.reserve, pool.overflow, pool.contributions, pool.wagers_count)  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1])
