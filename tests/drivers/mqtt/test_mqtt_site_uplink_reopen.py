"""A property's wide-area wagers reopen after a cut only once central has reconciled its chain.

drivers/mqtt/site_uplink.py; docs/wide-area.md, "A cut WAN": on reconnection the property
reports its totals, and only an acknowledgement naming a matched reconciliation reopens its
wide-area wagers (Michigan R 432.1841: amounts reconciled on restore). The WAN is a
:class:`support.tcp_proxy.LinkProxy` between the property's uplink and central's broker, cut
past the grace period both ways: a partition (``stall``: central's heartbeat acknowledgements
wait in the link and arrive on healing, before the new report is even sent) and a reset
(the broker's session holds them, and delivers them the moment the uplink reconnects, before
its report is reconciled). Found by the WAN test (tests/wan/): each reopened on a heartbeat
that still named the reconciliation of the connection before the cut.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from support.intake import JournalIntake
from support.journal_rig import AT, PAYTABLE, POOL, pool_opened, table_configured, wager
from support.mqtt_tables import running, settings_for, within
from support.tcp_proxy import LinkProxy

from controller.agent.resend import ResendDelay
from controller.journal import Journal
from controller.runtime.site_chain import JournalSiteChain
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey
from controller.wide_events import SiteLinked, WideAreaJoined
from drivers.mqtt.site_uplink import SiteUplink
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from pathlib import Path

    from support.mosquitto import Broker
    from support.tcp_proxy import Cut

SITE = "atlantic"
GRACE_S = 1.0


@pytest.mark.parametrize("how", ["stall", "reset"])
def test_michigan_432_1841_after_a_cut_past_the_grace_wagers_reopen_only_once_reconciled(
    mosquitto: Broker, tmp_path: Path, how: Cut
) -> None:
    central_key, site_key = ControllerKey.generate(), ControllerKey.generate()
    central = Journal(tmp_path / "central.db")
    central.append_many([pool_opened(), table_configured()])
    assert central.append(SiteLinked("link-1", AT, SITE, site_key.public_key, [POOL], "mgr"))
    site = Journal(tmp_path / "site.db")
    join = WideAreaJoined("join-1", AT, SITE, central_key.public_key, {POOL: PAYTABLE}, "mgr")
    assert all(r.applied for r in site.append_many([join, table_configured()]))
    central_intake, site_intake = JournalIntake(central), JournalIntake(site)
    chain = JournalSiteChain(site, site_key, central_key.public_key, GRACE_S)
    links = JournalSiteLinks(central, central_key, heartbeat_s=0.2)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=2.0, sites=links)
    reopened_at: list[int] = []
    """Central's reconciled ``site_seq`` at each moment the property journaled a reopening."""

    def gate(*, is_open: bool) -> bool:
        state = site.state.chain
        return state is not None and state.open is is_open

    def note_reopening() -> bool:
        if gate(is_open=True):
            reopened_at.append(central.state.sites[SITE].link.reconciled_through)
            return True
        return False

    async def scenario() -> None:
        with LinkProxy("127.0.0.1", mosquitto.port) as wan:
            uplink = SiteUplink(settings_for(wan.port), chain, ResendDelay(0.5, 2.0))
            async with running(source.run(central_intake)), running(uplink.run(site_intake)):
                await within(site_intake.wait_until(lambda: gate(is_open=True)), "open")
                receipt = site.append(wager("w1", "r1", 1))
                chain.committed([receipt])
                assert receipt.applied
                await within(
                    central_intake.wait_until(lambda: central.state.sites[SITE].link.through == 1),
                    "the wager at central",
                )
                wan.cut(how)
                await within(site_intake.wait_until(lambda: gate(is_open=False)), "closed")
                wan.heal()
                await within(site_intake.wait_until(note_reopening), "reopened")

    asyncio.run(scenario())
    # The chain stood at site_seq 1 when the gate closed: central had reconciled it (the
    # report of the reconnection, or the one the closing asks for) before it reopened.
    assert reopened_at == [1]
    central.close()
    site.close()
