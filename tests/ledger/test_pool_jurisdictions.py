"""Jurisdiction profiles on a real signed journal: approved with the configuration, then held.

Named after the clauses they prove (docs/rules.md, "A pool's life"): Michigan transfers a
jackpot only on a documented malfunction or when gaming ceases, and eliminates it only when
gaming ceases (Mich. Admin. Code R 432.1838(4)); Indiana moves one on a malfunction or a
replacement (68 IAC 2-6-33); France keeps a pool three months at least (arrêté du 14 mai 2007,
art. 68-20-1), which the strict profile asks.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import POOL, pool_opened, table_configured
from support.ledger.approvals import Site, now

from controller.clock import utc_iso
from controller.events import ConfigurationApproved
from controller.ledger.codec import authority_json, pool_json
from controller.ledger_journal.sqlite import Journal
from controller.pool_events import ORPHANED, PoolRetired, PoolTransferred

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from controller.events import AnyEvent

OTHER = "pool-b"


@pytest.fixture
def profiled_site(tmp_path: Path) -> Iterator[Callable[[str | None], Site[Journal]]]:
    """A signed site with two managers and two pools, approved under a jurisdiction or none."""
    journals: list[Journal] = []

    def open_site(jurisdiction: str | None) -> Site[Journal]:
        journal = Journal(tmp_path / f"journal-{len(journals)}.db")
        journals.append(journal)
        site = Site.create(journal)
        site.enroll("mgr2", "manager", by="mgr")
        table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", [pool_opened(), pool_opened("open-b", OTHER), table],
            "mgr", dual_control_cents=100_000,
        )  # fmt: skip
        if jurisdiction is not None:
            approval = msgspec.structs.replace(approval, jurisdiction=jurisdiction)
        site.append(site.sign(approval, "mgr", "mgr2"))
        return site

    yield open_site
    for journal in journals:
        journal.close()


def refused(site: Site[Journal], event: AnyEvent) -> str:
    before = site.journal.state.pools
    receipt = site.journal.append(event)
    assert not receipt.applied, event
    assert site.journal.state.pools == before
    return receipt.reason


def transfer(cause: str | None = None) -> PoolTransferred:
    event = PoolTransferred(f"t-{uuid.uuid4()}", now(), POOL, OTHER, "mgr", "T1 removed")
    return event if cause is None else msgspec.structs.replace(event, cause=cause)


def retirement(cause: str | None = None, at: str | None = None) -> PoolRetired:
    event = PoolRetired(f"x-{uuid.uuid4()}", at or now(), POOL, ORPHANED, "mgr", "closed")
    return event if cause is None else msgspec.structs.replace(event, cause=cause)


def test_r432_1838_4_under_michigan_a_transfer_needs_a_malfunction_or_the_end_of_gaming(
    profiled_site: Callable[[str | None], Site[Journal]],
) -> None:
    site = profiled_site("MI")
    assert site.journal.state.authority.jurisdiction == "MI"
    reason = refused(site, site.sign(transfer(), "mgr", "mgr2"))
    assert "under the MI profile a transfer needs a documented cause" in reason
    assert "not replacement" in refused(site, site.sign(transfer("replacement"), "mgr", "mgr2"))
    site.append(site.sign(transfer("malfunction"), "mgr", "mgr2"))


def test_r432_1838_4_under_michigan_a_pool_is_retired_only_when_gaming_ceases(
    profiled_site: Callable[[str | None], Site[Journal]],
) -> None:
    site = profiled_site("MI")
    assert "not malfunction" in refused(site, site.sign(retirement("malfunction"), "mgr", "mgr2"))
    site.append(site.sign(retirement("gaming-ceased"), "mgr", "mgr2"))
    assert site.journal.state.pools[POOL].status == "retired"


def test_68_iac_2_6_33_under_indiana_a_jackpot_moves_on_a_replacement(
    profiled_site: Callable[[str | None], Site[Journal]],
) -> None:
    site = profiled_site("IN")
    assert "not gaming-ceased" in refused(site, site.sign(transfer("gaming-ceased"), "mgr", "mgr2"))
    site.append(site.sign(transfer("replacement"), "mgr", "mgr2"))


def test_68_20_1_under_the_strict_profile_a_pool_lives_three_months_before_it_is_retired(
    profiled_site: Callable[[str | None], Site[Journal]],
) -> None:
    site = profiled_site("strict")
    opened_at = site.journal.state.pools[POOL].opened_at
    assert opened_at
    reason = refused(site, site.sign(retirement("gaming-ceased"), "mgr", "mgr2"))
    assert "lives 91 days before it is retired" in reason
    later = utc_iso(datetime.fromisoformat(opened_at) + timedelta(days=92))
    site.append(site.sign(retirement("gaming-ceased", at=later), "mgr", "mgr2"))


def test_r432_1838_4_a_profile_reaches_the_ledger_only_inside_a_signed_approval(
    profiled_site: Callable[[str | None], Site[Journal]],
) -> None:
    site = profiled_site(None)
    assert "jurisdiction" not in json.loads(authority_json(site.journal.state.authority))
    assert "opened_at" not in json.loads(pool_json(site.journal.state.pools[POOL]))
    site.append(site.sign(transfer(), "mgr", "mgr2"))  # no profile: the common rules alone
    bad = ConfigurationApproved(
        "approval-2", now(), "digest-2", [], "mgr", dual_control_cents=100_000,
        jurisdiction="Atlantis",
    )  # fmt: skip
    assert "is not one of PA, NJ, NY, MI, IN, strict" in refused(site, site.sign(bad, "mgr"))
    assert site.journal.state.authority.jurisdiction is msgspec.UNSET
