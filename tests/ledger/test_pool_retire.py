"""A pool retired, on a real signed journal: closed only with a disposition of every cent.

Named after the clauses they prove (docs/rules.md, "A pool's life"): a jackpot is eliminated
only when gaming ceases for good, and then not reduced (Mich. Admin. Code R 432.1838(4)); a
stopped pool's increment goes to another pool or to a register of orphans (arrêté du
14 mai 2007, art. 68-20-2).
"""

from __future__ import annotations

import uuid
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import NOTHING, POOL, pool_opened, settle, table_configured, wager
from support.ledger.approvals import Site, now

from controller.events import ConfigurationApproved, MeterAdjusted
from controller.ledger.codec import pool_from_json, pool_json
from controller.ledger_journal.sqlite import Journal
from controller.pool_events import (
    FINAL_AWARD,
    ORPHANED,
    TRANSFERRED,
    PoolResumed,
    PoolRetired,
    PoolSuspended,
    PoolTransferred,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent

OTHER = "pool-b"


@pytest.fixture
def retiring_site(tmp_path: Path) -> Iterator[Site[Journal]]:
    """A signed site with two managers, two pools of one paytable and a table on the first."""
    with Journal(tmp_path / "journal.db") as journal:
        retiring_site = Site.create(journal)
        retiring_site.enroll("mgr2", "manager", by="mgr")
        table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", [pool_opened(), pool_opened("open-b", OTHER), table],
            "mgr", dual_control_cents=100_000,
        )  # fmt: skip
        retiring_site.append(retiring_site.sign(approval, "mgr", "mgr2"))
        for number in range(3):  # 28 1/4 cents a wager: sub-cent parts on the meter
            round_id = f"r-{number}"
            retiring_site.append(retiring_site.sign(wager(f"{round_id}-w", round_id, 1), "sup1"))
            retiring_site.append(
                retiring_site.sign(settle(f"{round_id}-s", round_id, {1: NOTHING}), "sup1")
            )
        yield retiring_site


def retirement(disposition: str, award: str = "") -> PoolRetired:
    return PoolRetired(
        f"retire-{uuid.uuid4()}", now(), POOL, disposition, "mgr", "gaming ceases on T1", award
    )


def refused(retiring_site: Site[Journal], event: AnyEvent) -> str:
    """Append ``event``: it must be refused and move no meter. The reason journaled."""
    before = retiring_site.journal.state.pools
    receipt = retiring_site.journal.append(event)
    assert not receipt.applied, event
    assert retiring_site.journal.state.pools == before
    return receipt.reason


def held(retiring_site: Site[Journal]) -> Fraction:
    pool = retiring_site.journal.state.pools[POOL]
    return pool.meter + pool.reserve + pool.overflow


def test_r432_1838_4_a_final_award_pays_every_whole_cent_and_records_the_rest(
    retiring_site: Site[Journal],
) -> None:
    before = retiring_site.journal.state.pools[POOL]
    total = held(retiring_site)
    assert total.denominator != 1
    assert "documented" in refused(
        retiring_site, retiring_site.sign(retirement(FINAL_AWARD), "mgr", "mgr2")
    )
    award = "final award to seat 1 of T1, hand-pay slip 9001"
    retiring_site.append(retiring_site.sign(retirement(FINAL_AWARD, award), "mgr", "mgr2"))
    pool = retiring_site.journal.state.pools[POOL]
    assert (pool.meter, pool.reserve, pool.overflow) == (Fraction(0),) * 3
    assert pool.paid_cents == before.paid_cents + int(total)
    assert pool.orphaned == total - int(total)  # the sub-cent part, on record, never lost
    assert pool.money_in() == pool.money_held_or_paid()
    assert (pool.status, pool.status_reason) == ("retired", f"{FINAL_AWARD}: {award}")
    assert pool_from_json(pool_json(pool)) == pool


def test_68_20_2_a_retired_pools_increment_is_kept_on_record_as_orphaned(
    retiring_site: Site[Journal],
) -> None:
    total = held(retiring_site)
    retiring_site.append(retiring_site.sign(retirement(ORPHANED), "mgr", "mgr2"))
    pool = retiring_site.journal.state.pools[POOL]
    assert pool.orphaned == total
    assert pool.money_in() == pool.money_held_or_paid()


def test_68_20_2_a_pool_transferred_then_retired_has_nothing_left_to_dispose_of(
    retiring_site: Site[Journal],
) -> None:
    assert "holds" in refused(
        retiring_site, retiring_site.sign(retirement(TRANSFERRED), "mgr", "mgr2")
    )
    moved = PoolTransferred(f"t-{uuid.uuid4()}", now(), POOL, OTHER, "mgr", "T1 removed")
    retiring_site.append(retiring_site.sign(moved, "mgr", "mgr2"))
    retiring_site.append(retiring_site.sign(retirement(TRANSFERRED), "mgr", "mgr2"))
    pool = retiring_site.journal.state.pools[POOL]
    assert pool.status == "retired"
    assert pool.orphaned == 0
    assert pool.transferred_out == retiring_site.journal.state.pools[OTHER].transferred_in


def test_r432_1838_4_a_retired_pool_refuses_everything(retiring_site: Site[Journal]) -> None:
    assert "dual control" in refused(retiring_site, retiring_site.sign(retirement(ORPHANED), "mgr"))
    assert "disposition" in refused(
        retiring_site, retiring_site.sign(retirement("kept"), "mgr", "mgr2")
    )
    retiring_site.append(retiring_site.sign(retirement(ORPHANED), "mgr", "mgr2"))
    assert "retired" in refused(retiring_site, retiring_site.sign(wager("r-x-w", "r-x", 1), "sup1"))
    for event in (
        PoolSuspended(f"s-{uuid.uuid4()}", now(), POOL, "sup1", "again"),
        PoolResumed(f"u-{uuid.uuid4()}", now(), POOL, "mgr", "again"),
        PoolTransferred(f"t-{uuid.uuid4()}", now(), POOL, OTHER, "mgr", "again"),
        PoolTransferred(f"t-{uuid.uuid4()}", now(), OTHER, POOL, "mgr", "into it"),
        retirement(ORPHANED),
        MeterAdjusted(f"a-{uuid.uuid4()}", now(), POOL, "meter", 100, "mgr", "correction"),
    ):
        assert "retired" in refused(retiring_site, retiring_site.sign(event, "mgr", "mgr2"))
