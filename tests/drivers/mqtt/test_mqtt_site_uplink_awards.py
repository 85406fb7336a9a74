"""A wide-area award central sends again is not journaled again at the property.

drivers/mqtt/site_uplink.py; docs/wide-area.md, "The link's runtime": awards are derived, not
queued, so central follows every acknowledgement with each award the property may still lack,
until the property's totals no longer list the claim as held (its next report: a reconnection,
a closing, or the periodic one). Each resend is signed anew and names central's row at the
time, so journaling it again would be a different event under the award's id: a
``sequence-reused`` fault row (and an ALARM) for every acknowledgement, thousands an hour.
Found by the WAN test (tests/wan/): about one journal row in ten at each property was one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.intake import JournalIntake
from support.journal_rig import (
    AT,
    PAYTABLE,
    POOL,
    STRAIGHT_FLUSH,
    pool_opened,
    settle,
    table_configured,
    wager,
)
from support.mqtt_tables import running, settings_for, within

from controller.agent.resend import ResendDelay
from controller.journal import Journal
from controller.runtime.site_chain import JournalSiteChain
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey
from controller.wide_events import SiteLinked, WideAreaJoined
from drivers.mqtt.site_uplink import SiteUplink
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from support.mosquitto import Broker

SITE = "atlantic"
AGAIN = 3
"""Awards heard again after the payout before the journal is read."""


async def until(reached: Callable[[], bool]) -> None:
    """Until ``reached()``: a counter of the uplink's, which tells nobody when it moves."""
    while not reached():
        await asyncio.sleep(0.02)


def test_an_award_sent_again_after_it_was_paid_journals_nothing_more(
    mosquitto: Broker, tmp_path: Path
) -> None:
    central_key, site_key = ControllerKey.generate(), ControllerKey.generate()
    central = Journal(tmp_path / "central.db")
    central.append_many([pool_opened(), table_configured()])
    assert central.append(SiteLinked("link-1", AT, SITE, site_key.public_key, [POOL], "mgr"))
    site = Journal(tmp_path / "site.db")
    join = WideAreaJoined("join-1", AT, SITE, central_key.public_key, {POOL: PAYTABLE}, "mgr")
    assert all(r.applied for r in site.append_many([join, table_configured()]))
    central_intake, site_intake = JournalIntake(central), JournalIntake(site)
    chain = JournalSiteChain(site, site_key, central_key.public_key, 5.0)
    links = JournalSiteLinks(central, central_key, heartbeat_s=0.1)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=2.0, sites=links)
    uplink = SiteUplink(settings_for(mosquitto.port), chain, ResendDelay(0.5, 2.0))

    def paid() -> bool:
        state = site.state.chain
        return state is not None and state.open and state.hits == 1 and not state.held

    async def scenario() -> None:
        async with running(source.run(central_intake)), running(uplink.run(site_intake)):
            await within(
                site_intake.wait_until(lambda: bool(site.state.chain and site.state.chain.open)),
                "open",
            )
            receipts = [
                site.append(wager("w1", "r1", 1)),
                site.append(settle("s1", "r1", {1: STRAIGHT_FLUSH})),
            ]
            chain.committed(receipts)
            await within(site_intake.wait_until(paid), "the award paid at the property")
            # Central goes on sending it with every acknowledgement (the claim is held as far as
            # it knows), each naming central's row then: the property plays on.
            assert links.awards(SITE)
            more = site.append(wager("w2", "r2", 1))
            chain.committed([more])
            await within(
                central_intake.wait_until(lambda: central.state.sites[SITE].link.through == 3),
                "the next wager at central",
            )
            await within(until(lambda: uplink.awards_again >= AGAIN), "the award heard again")

    asyncio.run(scenario())
    rows = site.rows()
    assert [r["event_id"] for r in rows if r["kind"] == "wide-area-awarded"] == [f"award/{SITE}/2"]
    assert not [r["event_id"] for r in rows if "#conflict" in str(r["event_id"])]
    central.close()
    site.close()
