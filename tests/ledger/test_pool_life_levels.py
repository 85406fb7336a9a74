"""A multi-level pool's life under its own id: every level suspended, moved or closed at once.

docs/rules.md, "A pool's life"; controller/ledger/pool_levels.py. The configuration and the
tables name a multi-level pool (``east``); the ledger holds a pool per level (``east.major``,
``east.minor``, ``east.mini``). A step named by the pool's own id takes every level, in the
paytable's order, under the one signature it needs, so that no level is left in play while
another is out of it (68 IAC 2-6-33); a transfer goes level to level onto a pool of the same
levels, exactly; a retirement disposes of every level's every cent (Mich. Admin. Code
R 432.1838(4)), and ``jackpotd report`` reconciles each. A mystery level's meter is never carried
onto another level, and a round in play on any level holds every step back, a level's own id
included. On a real signed journal.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import DEALER, NOTHING
from support.ledger.approvals import Site, now
from support.rules.mystery_paytable import MYSTERY_PAYTABLE

from controller.events import (
    ConfigurationApproved,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
)
from controller.ledger_journal.sqlite import Journal
from controller.pool_events import PoolResumed, PoolRetired, PoolSuspended, PoolTransferred
from controller.reports.reconciliation import reconcile

if TYPE_CHECKING:
    from collections.abc import Iterator
    from fractions import Fraction
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.ledger.pool import Pool

LEVELS = ("major", "minor", "mini")
PAYTABLE = """\
name = "house-levels"
title = "House levels ($5 wager)"
wager = "progressive"
source = "house rules"
joker = "semi-wild"

[progressive]
wager = "$5"
original_wager_returned = false

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "3%"
reserve_rate = "0.5%"

[[progressive.levels]]
level = "minor"
meter_seed = "$250"
rate_of_progression = "2%"

[[progressive.levels]]
level = "mini"
meter_seed = "$150"
rate_of_progression = "1%"

[[lines]]
line = "seven-card-straight-flush"
outcome = "7 card straight flush"
pays = "100% of meter"
level = "major"

[[lines]]
line = "five-aces"
outcome = "Five aces"
pays = "100% of meter"
level = "minor"

[[lines]]
line = "royal-flush"
outcome = "Royal flush"
pays = "100% of meter"
level = "mini"
"""
SEEDS = {"major": 100_000, "minor": 25_000, "mini": 15_000}
RATES = {"major": "0.03", "minor": "0.02", "mini": "0.01"}


def opened(pool: str) -> list[PoolOpened]:
    return [
        PoolOpened(
            f"open-{pool}-{level}",
            now(),
            f"{pool}.{level}",
            "house-levels",
            SEEDS[level],
            Decimal(RATES[level]),
            Decimal("0.005") if level == "major" else Decimal(0),
        )
        for level in LEVELS
    ]


def table(table_id: str, pool: str, paytable: str = PAYTABLE) -> TableConfigured:
    name = "house-mystery" if paytable is MYSTERY_PAYTABLE else "house-levels"
    return TableConfigured(
        f"table-{table_id}", now(), table_id, {name: paytable}, progressive=name,
        pool_id=pool, envy_includes_dealer=False,
    )  # fmt: skip


@pytest.fixture
def levels_site(tmp_path: Path) -> Iterator[Site[Journal]]:
    """Two managers, two pools of the same three levels (``east``, ``west``), a table on each."""
    with Journal(tmp_path / "journal.db") as journal:
        levels_site = Site.create(journal)
        levels_site.enroll("mgr2", "manager", by="mgr")
        changes: list[PoolOpened | TableConfigured] = [*opened("east"), *opened("west")]
        changes += [table("T1", "east"), table("T2", "west")]
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", list(changes), "mgr", dual_control_cents=100_000
        )
        levels_site.append(levels_site.sign(approval, "mgr", "mgr2"))
        for number in range(3):  # 3 %, 2 % and 1 % of $5 and a reserve: every level moves
            play(levels_site, "T1", f"r-{number}")
        yield levels_site


def play(levels_site: Site[Journal], table_id: str, round_id: str, *, settled: bool = True) -> None:
    levels_site.append(levels_site.sign(WagerLocked(
        f"{round_id}-w", now(), table_id, round_id, 1, "progressive", 500
    ), "sup1"))  # fmt: skip
    if settled:
        cards = RoundSettled(f"{round_id}-s", now(), table_id, round_id, DEALER, {"1": NOTHING})
        levels_site.append(levels_site.sign(cards, "sup1"))


def levels(levels_site: Site[Journal], pool: str) -> list[Pool]:
    return [levels_site.journal.state.pools[f"{pool}.{level}"] for level in LEVELS]


def refused(levels_site: Site[Journal], event: AnyEvent) -> str:
    """Append ``event``: it must be refused and move nothing. The reason journaled."""
    before = levels_site.journal.state.pools
    receipt = levels_site.journal.append(event)
    assert not receipt.applied, event
    assert levels_site.journal.state.pools == before
    return receipt.reason


def held(pool: Pool) -> Fraction:
    return pool.meter + pool.reserve + pool.overflow


def test_68_iac_2_6_33_a_pool_suspended_by_its_own_id_takes_every_level_out_of_play(
    levels_site: Site[Journal],
) -> None:
    before = levels(levels_site, "east")
    levels_site.append(
        levels_site.sign(PoolSuspended("s-1", now(), "east", "sup1", "sign dark on T1"), "sup1")
    )
    after = levels(levels_site, "east")
    assert [pool.status for pool in after] == ["suspended"] * 3
    assert [pool.status_reason for pool in after] == ["sign dark on T1"] * 3
    assert [held(pool) for pool in after] == [held(pool) for pool in before]  # meters kept
    assert "is suspended" in refused(
        levels_site,
        levels_site.sign(WagerLocked("w-x", now(), "T1", "r-x", 1, "progressive", 500), "sup1"),
    )
    assert [pool.status for pool in levels(levels_site, "west")] == [
        ""
    ] * 3  # another pool plays on
    levels_site.append(
        levels_site.sign(PoolResumed("r-1", now(), "east", "mgr", "sign replaced"), "mgr")
    )
    assert [pool.status for pool in levels(levels_site, "east")] == [""] * 3


def test_68_iac_2_6_33_a_transfer_by_the_pools_id_moves_each_level_onto_the_same_level(
    levels_site: Site[Journal],
) -> None:
    sources, targets = levels(levels_site, "east"), levels(levels_site, "west")
    moved = PoolTransferred("t-1", now(), "east", "west", "mgr", "T1 removed for good")
    levels_site.append(levels_site.sign(moved, "mgr", "mgr2"))
    emptied, received = levels(levels_site, "east"), levels(levels_site, "west")
    for source, target, gone, came in zip(sources, targets, emptied, received, strict=True):
        assert held(gone) == 0
        assert gone.status == "suspended"
        assert held(came) == held(target) + held(source)  # exactly, sub-cent parts carried
        assert came.transferred_in == gone.transferred_out == held(source)
        for pool in (gone, came):
            assert pool.money_in() == pool.money_held_or_paid()
    periods = reconcile(list(levels_site.journal.rows()), None, None)
    assert all(period.balanced() for period in periods.values())


def test_a_transfer_goes_level_to_level_and_never_carries_a_meter_onto_a_mystery_level(
    levels_site: Site[Journal],
) -> None:
    single = PoolTransferred("t-2", now(), "east", "west.major", "mgr", "wrong target")
    assert "a transfer goes level to level" in refused(
        levels_site, levels_site.sign(single, "mgr", "mgr2")
    )
    itself = PoolTransferred("t-3", now(), "east", "east", "mgr", "nowhere")
    assert "a transfer goes to another pool" in refused(
        levels_site, levels_site.sign(itself, "mgr", "mgr2")
    )
    # A mystery grand in the journal: its meter is drawn against, never carried.
    grand = PoolOpened(
        "open-grand", now(), "stax.grand", "house-mystery", 1_000, Decimal("0.10"),
        must_hit_by_cents=1_200,
    )  # fmt: skip
    others = [
        PoolOpened(f"open-stax-{name}", now(), f"stax.{name}", "house-mystery", seed, Decimal(rate))
        for name, seed, rate in (
            ("major", 100_000, "0.03"),
            ("minor", 25_000, "0.02"),
            ("mini", 15_000, "0.01"),
        )
    ]
    approval = ConfigurationApproved(
        "approval-2", now(), "digest-2", [grand, *others, table("T3", "stax", MYSTERY_PAYTABLE)],
        "mgr", dual_control_cents=100_000,
    )  # fmt: skip
    levels_site.append(levels_site.sign(approval, "mgr", "mgr2"))
    onto = PoolTransferred("t-4", now(), "stax.major", "stax.grand", "mgr", "onto the grand")
    assert "is a mystery level" in refused(levels_site, levels_site.sign(onto, "mgr", "mgr2"))


def test_a_round_in_play_on_any_level_holds_back_every_step_even_by_a_levels_own_id(
    levels_site: Site[Journal],
) -> None:
    play(levels_site, "T1", "r-open", settled=False)
    for pool_id in ("east", "east.minor"):
        step = PoolSuspended(f"s-{pool_id}", now(), pool_id, "sup1", "dark")
        assert "locked in T1/r-open" in refused(levels_site, levels_site.sign(step, "sup1"))


def test_r432_1838_4_a_pool_retired_by_its_own_id_disposes_of_every_levels_every_cent(
    levels_site: Site[Journal],
) -> None:
    before = levels(levels_site, "east")
    closing = PoolRetired(
        f"retire-{uuid.uuid4()}", now(), "east", "orphaned", "mgr", "gaming ceases on T1"
    )
    levels_site.append(levels_site.sign(closing, "mgr", "mgr2"))
    after = levels(levels_site, "east")
    assert [pool.status for pool in after] == ["retired"] * 3
    for old, new in zip(before, after, strict=True):
        assert held(new) == 0
        assert new.orphaned == held(old)
        assert new.money_in() == new.money_held_or_paid()
    periods = reconcile(list(levels_site.journal.rows()), None, None)
    assert all(period.balanced() for period in periods.values())
    assert sum(periods[f"east.{level}"].orphaned for level in LEVELS) == sum(map(held, before))
    again = msgspec.structs.replace(closing, event_id="retire-again")
    assert "is retired" in refused(levels_site, levels_site.sign(again, "mgr", "mgr2"))
