"""A property's wide-area wagers reopen after a cut only once central has reconciled its chain.

drivers/mqtt/site_uplink.py; docs/wide-area.md, "A cut WAN": on reconnection the property
reports its totals, and only an acknowledgement naming a matched reconciliation reopens its
wide-area wagers (Michigan R 432.1841: amounts reconciled on restore). The WAN is a
:class:`support.ha.tcp_proxy.LinkProxy` between the property's uplink and central's broker, cut
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
from support.drivers.mqtt_tables import running, within
from support.ha.tcp_proxy import LinkProxy
from support.widearea.site_link_rig import SITE, Link

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.ha.tcp_proxy import Cut

GRACE_S = 1.0


@pytest.mark.parametrize("how", ["stall", "reset"])
def test_michigan_432_1841_after_a_cut_past_the_grace_wagers_reopen_only_once_reconciled(
    mosquitto: Broker, tmp_path: Path, how: Cut
) -> None:
    link = Link(tmp_path, mosquitto.port, grace_s=GRACE_S)
    central, site = link.central, link.site
    central_intake, site_intake = link.central_intake, link.site_intake
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
            uplink = link.uplink_via(wan.port)
            async with (
                running(link.central_source().run(central_intake)),
                running(uplink.run(site_intake)),
            ):
                await within(site_intake.wait_until(lambda: gate(is_open=True)), "open")
                assert link.wager(1)
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
    link.close()
