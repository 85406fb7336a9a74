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

from support.drivers.mqtt_tables import running, within
from support.journal.journal_rig import STRAIGHT_FLUSH, settle, wager
from support.polls import until
from support.widearea.site_link_rig import SITE, Link

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

AGAIN = 3
"""Awards heard again after the payout before the journal is read."""


def test_an_award_sent_again_after_it_was_paid_journals_nothing_more(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port, grace_s=5.0, heartbeat_s=0.1)
    central, site, chain, links = link.central, link.site, link.chain, link.links
    central_intake, site_intake, uplink = link.central_intake, link.site_intake, link.uplink

    def paid() -> bool:
        state = site.state.chain
        return state is not None and state.open and state.hits == 1 and not state.held

    async def scenario() -> None:
        async with (
            running(link.central_source().run(central_intake)),
            running(uplink.run(site_intake)),
        ):
            await link.until_open(is_open=True)
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
    link.close()
