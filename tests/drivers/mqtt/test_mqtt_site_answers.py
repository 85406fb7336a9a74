"""Central's MQTT source and linked properties: each message journaled once, signed acks.

drivers/mqtt/site_answers.py; docs/wide-area.md, "The link's runtime". A real
mosquitto, a real journal behind the intake (tests/support/drivers/intake.py), real Ed25519 keys for
the property and for central. The property is a plain MQTT client publishing what a property
publishes, including resends, a gap and its totals, as a lossy transport and a reconnection
would deliver them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiomqtt
import msgspec
import pytest
from support.drivers.intake import JournalIntake
from support.drivers.mqtt_tables import TOPICS, running, settings_for, watch, within
from support.journal.journal_rig import AT, POOL, pool_opened, table_configured

from controller.ledger_journal.sqlite import Journal
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey, signature_verifies
from controller.wide_events import SiteLinked
from controller.widearea.messages import (
    GENESIS,
    CentralAck,
    Contribution,
    SiteHello,
    SiteMessage,
    SiteTotals,
    canonical,
    decode_ack,
    next_message,
    signed_bytes,
)
from drivers.mqtt.site_answers import SiteAdmission
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.drivers.mqtt_watch import Watch

SITE = "atlantic"
UP = TOPICS.site_up(SITE)
ACK = TOPICS.site_ack(SITE)


class Property:
    """A property's chain, signed with its key."""

    def __init__(self) -> None:
        self.key = ControllerKey.generate()
        self.sent: list[SiteMessage] = []

    def next(self, *, prev: str | None = None) -> SiteMessage:
        """The next contribution of the chain (after ``prev`` instead, to break it)."""
        n = len(self.sent) + 1
        after = prev if prev is not None else (self.sent[-1].digest if self.sent else GENESIS)
        body = Contribution(POOL, "t1", f"r{n}", 1, 100)
        message = next_message(SITE, n, after, AT, body)
        message = message.signed(self.key.sign(message.digest.encode()))
        self.sent.append(message)
        return message

    def hello(self, nonce: str = "0123456789abcdef0123456789abcdef") -> SiteHello:
        """The hello that opens a connection to central, signed."""
        hello = SiteHello(SITE, nonce)
        return msgspec.structs.replace(hello, signature=self.key.sign(signed_bytes(hello)))

    def totals(self) -> SiteTotals:
        """What it has sent, signed."""
        totals = SiteTotals(SITE, len(self.sent), self.sent[-1].digest, len(self.sent),
                            100 * len(self.sent), 0)  # fmt: skip
        return msgspec.structs.replace(totals, signature=self.key.sign(signed_bytes(totals)))


@pytest.fixture
def central(tmp_path: Path) -> tuple[Journal, Property]:
    prop = Property()
    journal = Journal(tmp_path / "central.db")
    journal.append_many([pool_opened(), table_configured()])
    journal.append(SiteLinked("link-1", AT, SITE, prop.key.public_key, [POOL], "mgr"))
    return journal, prop


def acks(watcher: Watch, key: ControllerKey) -> list[CentralAck]:
    """Every acknowledgement seen, each checked to be central's."""
    found = [decode_ack(payload) for payload in watcher.payloads(ACK)]
    for ack in found:
        assert signature_verifies(key.public_key, ack.signature, signed_bytes(ack))
    return found


def reported(journal: Journal) -> list[int]:
    """The site_seq of every SiteReported row, in journal order."""
    rows = [row for row in journal.rows() if row["kind"] == "site-reported"]
    return [int(str(row["event_id"]).rsplit("/", 1)[1]) for row in rows]


@dataclass
class Central:
    """What a scenario drives: the property's client, the watch on acks, central's parts."""

    client: aiomqtt.Client
    seen: Watch
    key: ControllerKey
    intake: JournalIntake
    source: MqttSource

    def acks(self) -> list[CentralAck]:
        """Every acknowledgement seen so far, each checked to be central's."""
        return acks(self.seen, self.key)

    async def publish(self, *said: SiteMessage | SiteTotals) -> None:
        """The property publishes, in order, at QoS 1."""
        for each in said:
            await self.client.publish(UP, canonical(each), qos=1)


Scenario = Callable[[Central], Awaitable[None]]


async def say_hello(client: aiomqtt.Client, seen: Watch, prop: Property) -> None:
    """The property's hello, again until central answers it (it may not be subscribed yet)."""
    while not seen.payloads(ACK):
        await client.publish(UP, canonical(prop.hello()), qos=1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.2), seen.changed:
                await seen.changed.wait_for(lambda: bool(seen.payloads(ACK)))


def run(mosquitto: Broker, journal: Journal, scenario: Scenario, prop: Property) -> MqttSource:
    """Central's source over ``journal`` and a property's client, through ``scenario``."""
    central_key = ControllerKey.generate()
    links = JournalSiteLinks(journal, central_key, heartbeat_s=0.2)
    source = MqttSource(settings_for(mosquitto.port), timeout_s=2.0, sites=links)
    intake = JournalIntake(journal)

    async def go() -> None:
        async with (
            watch(mosquitto.port, ACK) as seen,
            running(source.run(intake)),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="property") as client,
        ):
            # Central acknowledges a linked property's connection once it says hello.
            await within(say_hello(client, seen, prop), "central's first acknowledgement")
            await scenario(Central(client, seen, central_key, intake, source))

    asyncio.run(go())
    return source


def test_each_message_is_journaled_once_whatever_resends_and_gaps_and_acknowledged_signed(
    mosquitto: Broker, central: tuple[Journal, Property]
) -> None:
    journal, prop = central
    first, second, third = prop.next(), prop.next(), prop.next()
    fourth, fifth = prop.next(), prop.next()

    async def scenario(at: Central) -> None:
        await at.publish(first, second, second, first, third, fifth)  # resends, and a gap
        await at.seen.until(lambda _w: any(a.through == 3 for a in at.acks()), "ack through 3")
        await at.publish(fourth, fifth, prop.totals())  # the gap resent, then the totals
        await at.seen.until(
            lambda _w: any(a.reconciled_through == 5 for a in at.acks()), "the reconciliation"
        )

    source = run(mosquitto, journal, scenario, prop)
    assert reported(journal) == [1, 2, 3, 4, 5]  # each once, in order
    link = journal.state.sites[SITE].link
    assert (link.through, link.head, link.reconciled_through) == (5, prop.sent[-1].digest, 5)
    assert source.sites is not None
    assert source.sites.dropped[SiteAdmission.GAP] >= 1
    assert (
        source.sites.dropped[SiteAdmission.APPLIED] + source.sites.dropped[SiteAdmission.IN_FLIGHT]
        >= 2
    )
    # The same, per property, for its metrics (jackpotd_site_*), and when it was last heard.
    drops = source.sites.site_drops
    assert drops[SITE, "gap"] == source.sites.dropped[SiteAdmission.GAP]
    assert sum(drops.values()) == sum(source.sites.dropped.values())
    assert source.sites.site_acks[SITE] == source.sites.answered >= 2
    assert source.sites.started < source.sites.heard_at(SITE)
    journal.close()


def test_central_is_heard_while_idle_and_a_halted_links_resends_fill_no_journal(
    mosquitto: Broker, central: tuple[Journal, Property]
) -> None:
    journal, prop = central
    first = prop.next()
    broken = prop.next(prev="f" * 64)  # signed by the property, after a head central never had

    async def scenario(at: Central) -> None:
        await at.publish(first)
        await at.seen.until(lambda _w: any(a.through == 1 for a in at.acks()), "ack through 1")
        count = len(at.acks())
        # Nothing more said: the heartbeat acknowledges again (every 0.2 s here).
        await at.seen.until(lambda _w: len(at.acks()) >= count + 2, "heartbeat acknowledgements")
        await at.publish(broken)
        halted = at.intake.wait_until(lambda: bool(journal.state.sites[SITE].link.halted))
        await within(halted, "the halt")
        await at.publish(broken, broken)  # the property resends: dropped, not journaled
        # A stranger's message after them, refused and journaled: the source has taken the two
        # resends by then (it takes messages in order; a drop tells nobody).
        stranger = next_message("stranger", 1, GENESIS, AT, Contribution(POOL, "t1", "r1", 1, 1))
        await at.client.publish(TOPICS.site_up("stranger"), canonical(stranger), qos=1)
        await within(at.intake.wait_rejects(1), "the stranger refused after the resends")
        answers = at.source.sites
        assert answers is not None
        assert answers.dropped[SiteAdmission.HALTED] == 2
        # A halted link is acknowledged no more, heartbeats included: the property's wagers
        # close at its grace (docs/wide-area.md, "A halted link").
        assert answers.ack_of(SITE, 0) is None

    source = run(mosquitto, journal, scenario, prop)
    rows = [row for row in journal.rows() if row["kind"] == "site-reported"]
    assert len(rows) == 2  # the first, and the break that halted the link: once
    assert source.sites is not None
    assert source.sites.dropped[SiteAdmission.HALTED] == 2
    journal.close()


def test_a_property_that_is_not_linked_is_refused_and_journaled_as_a_fault(
    mosquitto: Broker, central: tuple[Journal, Property]
) -> None:
    journal, prop = central
    stranger = next_message("stranger", 1, GENESIS, AT, Contribution(POOL, "t1", "r1", 1, 100))

    async def scenario(at: Central) -> None:
        await at.client.publish(TOPICS.site_up("stranger"), canonical(stranger), qos=1)
        await at.client.publish(UP, canonical(stranger), qos=1)  # another site's, on atlantic's
        await within(at.intake.wait_rejects(2), "the refusals")
        assert sorted(at.intake.reasons()) == ["site-mismatch", "unknown-site"]

    run(mosquitto, journal, scenario, prop)
    faults = [str(row["event"]) for row in journal.rows() if row["kind"] == "fault"]
    assert any("unknown-site" in fault for fault in faults)
    assert any("site-mismatch" in fault for fault in faults)
    assert reported(journal) == []
    journal.close()


def test_a_forged_next_message_is_refused_before_the_sequencer_and_blocks_nothing(
    mosquitto: Broker, central: tuple[Journal, Property]
) -> None:
    journal, prop = central
    first = prop.next()
    genuine = prop.next()
    # Someone who can publish on the property's topic, without its key, races the genuine 2.
    forged = msgspec.structs.replace(genuine, signature=ControllerKey.generate().sign(b"x"))

    async def scenario(at: Central) -> None:
        await at.publish(first, forged)
        await within(at.intake.wait_rejects(1), "the forgery refused")
        assert at.intake.reasons() == ["forged-site-message"]
        await at.publish(genuine)
        await at.seen.until(lambda _w: any(a.through == 2 for a in at.acks()), "ack through 2")

    run(mosquitto, journal, scenario, prop)
    assert reported(journal) == [1, 2]  # the genuine message took its number: nothing blocked
    assert not journal.state.sites[SITE].link.halted
    journal.close()
