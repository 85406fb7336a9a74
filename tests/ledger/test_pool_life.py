"""A pool's life after it opened, on a real signed journal: suspended, resumed, transferred.

Each test is named after the clause it proves (docs/rules.md, "A pool's life"): a jackpot in
play is never reduced outside a win or a documented decision (Mich. Admin. Code
R 432.1838(4)); one in play may be taken out of play on a malfunction and keeps what it holds
(68 IAC 2-6-33).
"""

from __future__ import annotations

import json
import uuid
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import NOTHING, POOL, pool_opened, settle, table_configured, wager
from support.ledger.approvals import Site, now

from controller.events import ConfigurationApproved, TableConfigured
from controller.ledger.codec import pool_from_json, pool_json
from controller.ledger.snapshot import state_digest
from controller.ledger_journal.sqlite import Journal
from controller.pool_events import PoolResumed, PoolSuspended, PoolTransferred

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent


def _no_dealer_envy(event: TableConfigured) -> TableConfigured:
    return msgspec.structs.replace(event, envy_includes_dealer=False)


@pytest.fixture
def pool_site(tmp_path: Path) -> Iterator[Site[Journal]]:
    """A signed site with one pool and one table, approved by the manager."""
    with Journal(tmp_path / "journal.db") as journal:
        pool_site = Site.create(journal)
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", [pool_opened(), _no_dealer_envy(table_configured())],
            "mgr", dual_control_cents=100_000,
        )  # fmt: skip
        pool_site.append(pool_site.sign(approval, "mgr"))
        yield pool_site


def suspension(by: str = "sup1", reason: str = "meter display dark on T1") -> PoolSuspended:
    return PoolSuspended(f"suspend-{uuid.uuid4()}", now(), POOL, by, reason)


def resumption(by: str = "mgr", reason: str = "display replaced, tested") -> PoolResumed:
    return PoolResumed(f"resume-{uuid.uuid4()}", now(), POOL, by, reason)


def refused(pool_site: Site[Journal], event: AnyEvent) -> str:
    """Append ``event``: it must be refused and move no meter. The reason journaled."""
    before = pool_site.journal.state.pools
    receipt = pool_site.journal.append(event)
    assert not receipt.applied, event
    assert pool_site.journal.state.pools == before
    return receipt.reason


def play_one(pool_site: Site[Journal], seat: int = 1) -> str:
    round_id = f"r-{uuid.uuid4().hex[:6]}"
    pool_site.append(pool_site.sign(wager(f"{round_id}-w", round_id, seat), "sup1"))
    pool_site.append(pool_site.sign(settle(f"{round_id}-s", round_id, {seat: NOTHING}), "sup1"))
    return round_id


def test_68_iac_2_6_33_a_suspended_pool_keeps_its_meters_and_refuses_every_wager(
    pool_site: Site[Journal],
) -> None:
    play_one(pool_site)
    before = pool_site.journal.state.pools[POOL]
    pool_site.append(pool_site.sign(suspension(), "sup1"))
    pool = pool_site.journal.state.pools[POOL]
    assert (pool.status, pool.status_reason) == ("suspended", "meter display dark on T1")
    held = (pool.meter, pool.reserve, pool.overflow)
    assert held == (before.meter, before.reserve, before.overflow)
    assert pool.money_in() == pool.money_held_or_paid()

    locked = pool_site.sign(wager("r-susp-w", "r-susp", 2), "sup1")
    reason = refused(pool_site, locked)
    assert reason == f"pool {POOL} is suspended: meter display dark on T1"
    assert pool_site.journal.state.pools[POOL] == pool

    pool_site.append(pool_site.sign(resumption(), "mgr"))
    assert pool_site.journal.state.pools[POOL].status == ""
    play_one(pool_site, seat=2)
    assert pool_site.journal.state.pools[POOL].wagers_count == before.wagers_count + 1


def test_r432_1838_4_only_a_manager_resumes_and_every_step_is_signed_with_its_reason(
    pool_site: Site[Journal],
) -> None:
    assert "unsigned" in refused(pool_site, suspension())
    assert "why" in refused(pool_site, pool_site.sign(suspension(reason=" "), "sup1"))
    pool_site.append(pool_site.sign(suspension(), "sup1"))
    assert "is suspended" in refused(pool_site, pool_site.sign(suspension(by="sup2"), "sup2"))
    assert "may not resume-pool" in refused(
        pool_site, pool_site.sign(resumption(by="sup1"), "sup1")
    )
    pool_site.append(pool_site.sign(resumption(), "mgr"))
    assert "nothing to resume" in refused(pool_site, pool_site.sign(resumption(), "mgr"))


def test_r432_1838_4_a_pool_with_wagers_in_play_is_not_suspended_under_them(
    pool_site: Site[Journal],
) -> None:
    pool_site.append(pool_site.sign(wager("r-open-w", "r-open", 1), "sup1"))
    reason = refused(pool_site, pool_site.sign(suspension(), "sup1"))
    assert "progressive wagers are locked in T1/r-open" in reason
    pool_site.append(pool_site.sign(settle("r-open-s", "r-open", {1: NOTHING}), "sup1"))
    pool_site.append(pool_site.sign(suspension(), "sup1"))


def test_68_iac_2_6_33_a_suspension_signed_against_another_state_is_stale(
    pool_site: Site[Journal],
) -> None:
    stale = pool_site.sign(suspension(), "sup1")
    play_one(pool_site)  # the meters moved since it was signed
    assert "the state changed since" in refused(pool_site, stale)


def test_r432_1838_4_a_pool_in_play_keeps_the_text_and_digest_it_always_had(
    pool_site: Site[Journal],
) -> None:
    pool = pool_site.journal.state.pools[POOL]
    text = pool_json(pool)
    assert "status" not in json.loads(text)
    digest = state_digest(pool_site.journal.state)
    pool_site.append(pool_site.sign(suspension(), "sup1"))
    suspended = pool_site.journal.state.pools[POOL]
    stored = json.loads(pool_json(suspended))
    assert (stored["status"], stored["status_reason"]) == ("suspended", suspended.status_reason)
    assert pool_from_json(pool_json(suspended)) == suspended
    pool_site.append(pool_site.sign(resumption(), "mgr"))
    resumed = pool_site.journal.state.pools[POOL]
    assert pool_json(resumed) == text
    assert state_digest(pool_site.journal.state) != digest  # the signed ids are kept, as always


# Transfers: two managers move a pool's money onto another, exactly.

OTHER = "pool-b"


@pytest.fixture
def two_pool_site(tmp_path: Path) -> Iterator[Site[Journal]]:
    """A signed site with two managers and two pools of one paytable, each with its table."""
    with Journal(tmp_path / "journal.db") as journal:
        pool_site = Site.create(journal)
        pool_site.enroll("mgr2", "manager", by="mgr")
        second = msgspec.structs.replace(
            pool_opened("open-b", OTHER), limit_cents=pool_opened().seed_cents + 10
        )
        table_b = msgspec.structs.replace(table_configured("table-2", "T2"), pool_id=OTHER)
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1",
            [pool_opened(), second, _no_dealer_envy(table_configured()), _no_dealer_envy(table_b)],
            "mgr", dual_control_cents=100_000,
        )  # fmt: skip
        pool_site.append(pool_site.sign(approval, "mgr", "mgr2"))
        yield pool_site


def transfer(by: str = "mgr", to: str = OTHER) -> PoolTransferred:
    return PoolTransferred(f"transfer-{uuid.uuid4()}", now(), POOL, to, by, "table T1 removed")


def test_68_iac_2_6_33_a_transfer_moves_meter_reserve_and_overflow_exactly(
    two_pool_site: Site[Journal],
) -> None:
    pool_site = two_pool_site
    for _ in range(3):
        play_one(pool_site)  # 28 1/4 cents a wager: sub-cent parts on the meter
    source, target = (pool_site.journal.state.pools[pool] for pool in (POOL, OTHER))
    assert source.meter.denominator != 1
    pool_site.append(pool_site.sign(transfer(), "mgr", "mgr2"))
    emptied, received = (pool_site.journal.state.pools[pool] for pool in (POOL, OTHER))
    assert (emptied.meter, emptied.reserve, emptied.overflow) == (Fraction(0),) * 3
    assert emptied.status == "suspended"
    assert emptied.status_reason == f"transferred to {OTHER}: table T1 removed"
    limit = target.terms.limit_cents
    assert limit is not None
    assert received.meter == limit  # as far as its limit allows, the rest to its overflow
    moved = source.meter + source.reserve + source.overflow
    assert received.meter + received.reserve + received.overflow == (
        target.meter + target.reserve + target.overflow + moved
    )
    assert received.reserve == target.reserve + source.reserve
    for pool in (emptied, received):
        assert pool.money_in() == pool.money_held_or_paid()
    assert emptied.transferred_out == received.transferred_in == moved
    assert "is suspended" in refused(pool_site, pool_site.sign(wager("r-x-w", "r-x", 1), "sup1"))
    pool_site.append(pool_site.sign(resumption(), "mgr"))  # reseeded by the house, as after a hit
    resumed = pool_site.journal.state.pools[POOL]
    assert resumed.meter == resumed.terms.seed_cents
    assert resumed.house_funding_cents == emptied.house_funding_cents + resumed.terms.seed_cents


def test_r432_1838_4_a_transfer_needs_two_managers_and_a_pool_of_the_same_game(
    two_pool_site: Site[Journal],
) -> None:
    pool_site = two_pool_site
    assert "dual control" in refused(pool_site, pool_site.sign(transfer(), "mgr"))
    assert "may not transfer-pool" in refused(
        pool_site, pool_site.sign(transfer(by="sup1"), "sup1", "mgr")
    )
    assert "another pool" in refused(pool_site, pool_site.sign(transfer(to=POOL), "mgr", "mgr2"))
    assert "unknown pool" in refused(
        pool_site, pool_site.sign(transfer(to="nowhere"), "mgr", "mgr2")
    )
    pool_site.append(pool_site.sign(wager("r-open-w", "r-open", 1), "sup1"))
    assert "locked in T1/r-open" in refused(pool_site, pool_site.sign(transfer(), "mgr", "mgr2"))
