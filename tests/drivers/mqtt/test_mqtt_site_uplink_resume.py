"""A halted link, end to end: central halts, a manager settles the cause and resumes it.

drivers/mqtt/site_uplink.py with central's source (drivers/mqtt/site_answers.py) on a real
broker; docs/wide-area.md, "A halted link". The property plays a second wide-area pool, pool-b,
that central has not linked for it: central halts the link on its first pool-b contribution
(``pool-not-fed``) and applies nothing more of it; the property's next totals cannot be
reconciled, so its wide-area wagers close. Once central opens pool-b and links it for the
property, a manager resumes the link: the property's backlog is applied in order, its totals
are reconciled, and its wide-area wagers reopen (Michigan R 432.1841: amounts reconciled
before play resumes). Nothing was lost or applied twice.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import msgspec
from support.journal.journal_rig import AT, PAYTABLE, POOL, pool_opened, table_configured
from support.widearea.site_link_rig import SITE, Link

from controller.events import WagerLocked
from controller.wide_events import SiteLinked, SiteResumed, WideAreaJoined

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

POOL_B = "pool-b"


def test_michigan_432_1841_a_resumed_link_applies_the_backlog_and_reopens_once_reconciled(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)
    link.uplink.report_s = 0.3  # its totals again soon while the link stays up
    # The property also plays pool-b (its table T2), which central does not link for it yet.
    both = {POOL: PAYTABLE, POOL_B: PAYTABLE}
    table_b = msgspec.structs.replace(table_configured("table-2", "T2"), pool_id=POOL_B)
    join = WideAreaJoined("join-2", AT, SITE, link.central_key.public_key, both, "mgr")
    assert all(r.applied for r in link.site.append_many([join, table_b]))

    def on_b(n: int) -> bool:
        receipt = link.site.append(WagerLocked(f"b{n}", AT, "T2", f"rb{n}", 1, "progressive", 100))
        link.chain.committed([receipt])
        return receipt.applied

    def halted() -> bool:
        return bool(link.central.state.sites[SITE].link.halted)

    async def scenario() -> None:
        async with link.linked():
            await link.until_open(is_open=True)
            assert link.wager(1)
            await link.until_central_has(1)
            assert on_b(2)  # site_seq 2: a pool central does not link for it
            await link.central_until(halted, "the link halted")
            # Halted: central takes nothing more; the property's next totals are not
            # reconciled, so its wide-area wagers close.
            await link.until_open(is_open=False)
            assert not link.wager(3)
            # Settled: pool-b opened at central and linked for the property; then resumed.
            relink = SiteLinked("link-2", AT, SITE, link.site_key.public_key, [POOL, POOL_B], "mgr")
            receipts = link.central.append_many([pool_opened("open-b", POOL_B), relink])
            assert all(r.applied for r in receipts)
            assert halted()  # relinking alone resumes nothing
            resumed = SiteResumed("resume-1", AT, SITE, "mgr", "pool-b linked")
            assert link.central.append(resumed).applied
            await link.until_central_has(2)
            await link.until_open(is_open=True)

    asyncio.run(scenario())
    central_link = link.central.state.sites[SITE].link
    assert central_link.through == 2  # w1, then b2: each once; w3 refused while closed
    assert central_link.reconciled_through == 2
    assert link.central.state.pools[POOL_B].wagers_cents == 100
    link.close()
