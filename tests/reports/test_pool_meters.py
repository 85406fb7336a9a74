"""The meters of N.J.A.C. 13:69E-1.39A(b) and the last hits of 9 NYCRR 5320.8, from the rows.

On a signed journal (a manager and two supervisors), 27 rounds each hit five aces (10 % of the
meter, pending until verified) beside a losing wager, some hits are verified, and a meter
correction is made under dual control. The report's figures are held to the journal's own
state (the ledger's exact balances), to the events appended, and to the signatures they carry.
"""

from __future__ import annotations

import uuid
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import (
    FIVE_ACES,
    NOTHING,
    POOL,
    TABLE,
    pool_opened,
    settle,
    table_configured,
    wager,
)
from support.ledger.approvals import Site, now

from controller.events import ConfigurationApproved, HitVerified, MeterAdjusted
from controller.ledger_journal import open_reader
from controller.ledger_journal.sqlite import Journal
from controller.reports.period import span
from controller.reports.pool_meters import meters

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ROUNDS = 27


@pytest.fixture
def meters_site(tmp_path: Path) -> Iterator[Site[Journal]]:
    with Journal(tmp_path / "journal.db") as journal:
        meters_site = Site.create(journal)
        table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", [pool_opened(), table], "mgr",
            dual_control_cents=100_000,
        )  # fmt: skip
        meters_site.append(meters_site.sign(approval, "mgr"))
        yield meters_site


def _play(meters_site: Site[Journal]) -> list[str]:
    """The rounds; every third hit verified by a supervisor. The payout ids, in order."""
    payouts = []
    for number in range(ROUNDS):
        round_id = f"r{number}"
        meters_site.append(meters_site.sign(wager(f"{round_id}-w1", round_id, 1), "sup1"))
        meters_site.append(meters_site.sign(wager(f"{round_id}-w2", round_id, 2), "sup1"))
        hands = {1: FIVE_ACES, 2: NOTHING}
        meters_site.append(meters_site.sign(settle(f"{round_id}-s", round_id, hands), "sup1"))
        payout_id = f"{round_id}-s/1/progressive"
        payouts.append(payout_id)
        if number % 3 == 0:
            verified = HitVerified(f"{round_id}-v", now(), payout_id, "sup2")
            meters_site.append(
                meters_site.sign(verified, "sup2", "sup1")
            )  # dual control: over $1,000
    return payouts


def _rows(path: Path) -> list[dict[str, object]]:
    reader = open_reader(path)
    try:
        return sorted(reader.rows(), key=lambda row: int(str(row["seq"])))
    finally:
        reader.close()


def test_13_69e_1_39a_b_the_pools_meters_wagers_and_hits(meters_site: Site[Journal]) -> None:
    _play(meters_site)
    adjustment = MeterAdjusted(
        f"adj-{uuid.uuid4()}", now(), POOL, "meter", 5_000, "sup1", "sign test, ticket 4711"
    )
    meters_site.append(meters_site.sign(adjustment, "sup1", "sup2"))
    state = meters_site.journal.state
    rows = _rows(meters_site.journal.path)
    found = meters(rows, 0, len(rows))
    pool = found.pools[POOL]
    assert (pool.wagers, pool.wagered_cents) == (2 * ROUNDS, 2 * ROUNDS * 100)
    assert pool.hits == ROUNDS
    assert pool.closing is not None
    ledger = state.pools[POOL]
    assert Fraction(pool.closing.meter) == ledger.meter
    assert Fraction(pool.closing.reserve) == ledger.reserve
    assert Fraction(pool.closing.overflow) == ledger.overflow
    assert pool.won_cents == pool.closing.paid_cents  # every hit of the pool's life is here
    (adjusted,) = pool.adjustments
    assert (adjusted.account, adjusted.amount_cents) == ("meter", 5_000)
    assert adjusted.signed_by == ("sup1", "sup2")
    assert adjusted.passkeys == 0
    assert adjusted.reason == "sign test, ticket 4711"
    table = found.tables[TABLE]
    assert (table.wagers, table.wagered_cents, table.hits) == (2 * ROUNDS, 2 * ROUNDS * 100, ROUNDS)
    assert table.won_from_meters_cents == pool.won_cents


def test_5320_8_the_last_25_hits_newest_first_with_who_verified(meters_site: Site[Journal]) -> None:
    payouts = _play(meters_site)
    rows = _rows(meters_site.journal.path)
    pool = meters(rows, 0, len(rows)).pools[POOL]
    assert [hit.payout_id for hit in pool.last_hits] == list(reversed(payouts))[:25]
    for hit in pool.last_hits:
        number = int(hit.payout_id.split("-", 1)[0][1:])
        assert (hit.table_id, hit.seat, hit.line) == (TABLE, 1, "five-aces")
        if number % 3 == 0:
            assert (hit.status, hit.verified_by) == ("verified", "sup2")
        else:
            assert (hit.status, hit.verified_by) == ("pending", None)


def test_a_period_counts_its_own_hits_and_lists_the_last_25_whenever(
    meters_site: Site[Journal],
) -> None:
    payouts = _play(meters_site)
    rows = _rows(meters_site.journal.path)
    late = next(i for i, row in enumerate(rows) if row["event_id"] == "r20-w1")
    pool = meters(rows, late, len(rows)).pools[POOL]
    assert pool.hits == ROUNDS - 20
    assert pool.wagers == 2 * (ROUNDS - 20)
    assert len(pool.last_hits) == 25
    assert pool.last_hits[-1].payout_id == payouts[2]
    assert pool.opening is not None  # the meters as the period found them
    assert span(rows, None, None) == (0, len(rows))
