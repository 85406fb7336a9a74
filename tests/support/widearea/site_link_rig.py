"""A wide-area link's rig: central and one property, each on its own journal, over one broker.

For the tests of the property's uplink (drivers/mqtt/site_uplink.py) with central's answers
(drivers/mqtt/site_answers.py): two real journals, real keys, the property joined and central
linking it, each with an intake that wakes the tests' waits at every commit (docs/wide-area.md).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from controller.agent.resend import ResendDelay
from controller.ledger_journal.sqlite import Journal
from controller.runtime.site_chain import JournalSiteChain
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey
from controller.wide_events import SiteLinked, WideAreaJoined
from drivers.mqtt.site_uplink import SiteUplink
from drivers.mqtt.source import MqttSource
from support.drivers.intake import JournalIntake
from support.drivers.mqtt_tables import running, settings_for, within
from support.journal.journal_rig import AT, PAYTABLE, POOL, pool_opened, table_configured, wager

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

SITE = "atlantic"


class Link:
    """Central and one property, each on its own journal, over one broker."""

    def __init__(
        self, folder: Path, port: int, *, grace_s: float = 1.0, heartbeat_s: float = 0.2
    ) -> None:
        self.central_key, self.site_key = ControllerKey.generate(), ControllerKey.generate()
        self.central = Journal(folder / "central.db")
        self.central.append_many([pool_opened(), table_configured()])
        linked = SiteLinked("link-1", AT, SITE, self.site_key.public_key, [POOL], "mgr")
        assert self.central.append(linked).applied
        self.site = Journal(folder / "site.db")
        join = WideAreaJoined(
            "join-1", AT, SITE, self.central_key.public_key, {POOL: PAYTABLE}, "mgr"
        )
        assert all(r.applied for r in self.site.append_many([join, table_configured()]))
        self.port = port
        self.central_intake = JournalIntake(self.central)
        self.site_intake = JournalIntake(self.site)
        self.chain = JournalSiteChain(
            self.site, self.site_key, self.central_key.public_key, grace_s
        )
        self.uplink = self.uplink_via(port)
        self.links = JournalSiteLinks(self.central, self.central_key, heartbeat_s=heartbeat_s)
        """Central's side of its links (a view of its journal: a restarted central's too)."""

    def uplink_via(self, port: int) -> SiteUplink:
        """The property's uplink to central's broker through ``port`` (a WAN proxy's)."""
        return SiteUplink(settings_for(port), self.chain, ResendDelay(0.5, 2.0))

    def central_source(self) -> MqttSource:
        """Central's MQTT source answering the property (a new one: a restarted central)."""
        return MqttSource(settings_for(self.port), timeout_s=2.0, sites=self.links)

    @contextlib.asynccontextmanager
    async def linked(self) -> AsyncIterator[None]:
        """Central's source and the property's uplink, running over the broker."""
        async with (
            running(self.central_source().run(self.central_intake)),
            running(self.uplink.run(self.site_intake)),
        ):
            yield

    def wager(self, n: int) -> bool:
        """A progressive wager at the property's table; whether the ledger took it."""
        receipt = self.site.append(wager(f"w{n}", f"r{n}", 1))
        self.chain.committed([receipt])
        return receipt.applied

    async def until_open(self, *, is_open: bool) -> None:
        """Until the property's journal says its wide-area wagers are open (or closed)."""

        def reached() -> bool:
            chain = self.site.state.chain
            return chain is not None and chain.open is is_open

        await within(self.site_intake.wait_until(reached), f"wide-area wagers open={is_open}")

    async def central_until(self, reached: Callable[[], bool], what: str) -> None:
        """Until ``reached()`` holds of central's journal (re-checked at each of its commits)."""
        await within(self.central_intake.wait_until(reached), what)

    async def until_central_has(self, through: int) -> None:
        """Until central has applied the property's chain through ``through``."""
        await within(
            self.central_intake.wait_until(
                lambda: self.central.state.sites[SITE].link.through >= through
            ),
            f"central through {through}",
        )

    def reported(self) -> list[str]:
        """The ids of central's journaled messages of the property, in order."""
        return [str(r["event_id"]) for r in self.central.rows() if r["kind"] == "site-reported"]

    def close(self) -> None:
        """Close both journals."""
        self.central.close()
        self.site.close()
