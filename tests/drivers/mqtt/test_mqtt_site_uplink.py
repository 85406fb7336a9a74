"""A property's uplink to central, end to end: its chain out once, the gate, a silent central.

drivers/mqtt/site_uplink.py with central's source (drivers/mqtt/site_answers.py); docs/wide-area.md.
A real mosquitto (central's broker), two real journals (central's and the property's), real
keys. Michigan R 432.1841: the property's wide-area wagers open only once central is heard and
has reconciled the property's totals; they close (journaled) once central has been silent past
the grace period, and reopen only after a new reconciliation.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from typing import TYPE_CHECKING

import aiomqtt
from support.drivers.mqtt_tables import running, settings_for, within
from support.journal.journal_rig import (
    POOL,
    STRAIGHT_FLUSH,
    settle,
)
from support.web.scrapes import scrape
from support.widearea.site_link_rig import SITE, Link

from controller.clock import utc_now
from controller.effects import PayoutMade, decode_effects
from controller.outputs import MeterUpdate
from controller.runtime.broadcast import Broadcast
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from controller.wide_effects import AwardMade
from drivers.mqtt.metrics import SiteTrafficFamilies, UplinkFamilies
from drivers.mqtt.outgoing import meter_payload
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.web.scrapes import Series


def test_michigan_432_1841_wagers_open_once_reconciled_and_each_reaches_central_once(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)

    async def scenario() -> None:
        async with link.linked():
            await link.until_open(is_open=True)
            assert all(link.wager(n) for n in range(1, 6))
            await link.until_central_has(5)
            # A hit: held at the property, awarded by central, paid at the property.
            settled = link.site.append(settle("s5", "r5", {1: STRAIGHT_FLUSH}))
            link.chain.committed([settled])

            def paid() -> bool:
                chain = link.site.state.chain
                return chain is not None and chain.hits == 1 and not chain.held

            await within(link.site_intake.wait_until(paid), "the award paid at the property")

    asyncio.run(scenario())
    assert link.reported() == [f"site/{SITE}/{n}" for n in range(1, 7)]
    (award,) = [
        effect
        for row in link.central.rows()
        for effect in decode_effects(str(row["effects"] or "[]"))
        if isinstance(effect, AwardMade)
    ]
    (payout,) = [
        effect
        for row in link.site.rows()
        if row["kind"] == "wide-area-awarded"
        for effect in decode_effects(str(row["effects"]))
        if isinstance(effect, PayoutMade)
    ]
    assert (payout.round_id, payout.seat) == ("r5", 1)
    assert payout.from_meter_cents == award.amount_cents > 0
    central_link = link.central.state.sites[SITE].link
    assert central_link.reconciled_through == 0  # the first connection's report: nothing yet
    assert link.central.state.pools[POOL].wagers_cents == 500  # each contribution once
    link.close()


def test_michigan_432_1841_a_silent_central_closes_wagers_and_they_reopen_after_reconciling(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)

    async def scenario() -> None:
        async with running(link.uplink.run(link.site_intake)):
            async with running(link.central_source().run(link.central_intake)):
                await link.until_open(is_open=True)
                assert link.wager(1)
                await link.until_central_has(1)
            # Central is gone (its broker session keeps what is sent meanwhile): closed
            # once the grace has run out, and a wide-area wager is refused.
            await link.until_open(is_open=False)
            assert not link.wager(2)
            async with running(link.central_source().run(link.central_intake)):
                await link.until_open(is_open=True)
                assert link.wager(3)
                await link.until_central_has(2)

    asyncio.run(scenario())
    chain = link.site.state.chain
    assert chain is not None
    assert chain.seq == 2  # the refused wager queued nothing
    central_link = link.central.state.sites[SITE].link
    assert central_link.through == 2
    assert central_link.reconciled_through == 1  # reopened after reconciling through 1
    statuses = [r for r in link.site.rows() if r["kind"] == "wide-area-status"]
    assert len(statuses) >= 3  # closed at start, opened, closed on silence, opened again
    link.close()


def test_centrals_wide_area_meter_reaches_the_propertys_signs_newer_only(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)
    broadcast = Broadcast()
    link.chain.broadcast = broadcast
    subscription = broadcast.subscribe()
    central_topics = Topics(settings_for(mosquitto.port).site)

    def meter(seq: int, cents: int, pool: str = POOL) -> bytes:
        return meter_payload(MeterUpdate(utc_now(), seq, pool, cents, 0, 0, 100, epoch=1))

    async def scenario() -> None:
        async with (
            running(link.central_source().run(link.central_intake)),
            running(link.uplink.run(link.site_intake)),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="central-sink") as sink,
        ):
            await link.until_open(is_open=True)  # subscribed to central's meters by now
            # Central's sink publishes its meters (retained); an old one comes late.
            await sink.publish(central_topics.meter(POOL), meter(10, 123_456), qos=1, retain=True)
            await sink.publish(central_topics.meter(POOL), meter(9, 100_000), qos=1)
            await sink.publish(central_topics.meter(POOL), meter(11, 123_789), qos=1, retain=True)
            shown: list[tuple[int, int]] = []
            while not shown or shown[-1][0] != 11:
                update = await within(anext(aiter(subscription)), "central's meter shown")
                assert isinstance(update, MeterUpdate)
                shown.append((update.seq, update.meter_cents))
            # The broadcast keeps a pool's latest meter: 10 may be superseded before it is
            # read; seq 9, older than one shown, never reaches the signs.
            assert shown[-1] == (11, 123_789)
            assert all(seq in (10, 11) for seq, _ in shown)
            assert [seq for seq, _ in shown] == sorted(seq for seq, _ in shown)

    asyncio.run(scenario())
    assert 0 <= link.uplink.worst_meter_lag_s < 15
    link.close()


def test_an_outbox_edited_by_hand_sends_nothing_and_is_journaled_as_a_fault(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)

    async def scenario() -> None:
        async with link.linked():
            await link.until_open(is_open=True)
            assert link.wager(1)
            assert link.wager(2)
            await link.until_central_has(2)
            # Someone with a shell as the service user edits an unsent-looking message.
            with contextlib.closing(sqlite3.connect(tmp_path / "site.db")) as raw, raw:
                raw.execute(
                    "UPDATE site_messages SET message = replace(message, '\"r2\"', '\"r9\"') "
                    "WHERE site_seq = 2"
                )
            await within(
                link.site_intake.wait_until(
                    lambda: "outbox-unreadable" in link.site_intake.reasons()
                ),
                "the fault journaled",
            )

    asyncio.run(scenario())
    assert link.reported() == [f"site/{SITE}/1", f"site/{SITE}/2"]  # nothing more went out
    faults = [str(r["event"]) for r in link.site.rows() if r["kind"] == "fault"]
    assert any("outbox-unreadable" in fault for fault in faults)
    link.close()


def test_the_links_metrics_at_both_ends_follow_its_messages_and_acknowledgements(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)
    source = link.central_source()
    assert source.sites is not None
    at_property = ControllerMetrics(link.site, Sequencer(link.site, Broadcast()), None)
    at_property.collectors.append(UplinkFamilies(link.uplink, link.chain.sent_high))
    at_central = ControllerMetrics(link.central, Sequencer(link.central, Broadcast()), None)
    at_central.collectors.append(SiteTrafficFamilies(source.sites))
    started = time.time()
    connected: Series = {}

    async def scenario() -> None:
        async with (
            running(source.run(link.central_intake)),
            running(link.uplink.run(link.site_intake)),
        ):
            await link.until_open(is_open=True)
            assert all(link.wager(n) for n in range(1, 4))
            settled = link.site.append(settle("s3", "r3", {1: STRAIGHT_FLUSH}))
            link.chain.committed([settled])

            def paid() -> bool:  # central's award follows its acknowledgement of the claim
                chain = link.site.state.chain
                return chain is not None and chain.hits == 1 and not chain.held

            await within(link.site_intake.wait_until(paid), "the award paid at the property")
            connected.update(scrape(at_property)["jackpotd_wide_area_connected"].items())

    asyncio.run(scenario())
    assert connected == {(): 1.0}
    found = scrape(at_property)
    assert found["jackpotd_wide_area_open"] == {(): 1.0}
    assert found["jackpotd_wide_area_acked_seq"] == {(): 4.0}  # three wagers and the claim
    assert found["jackpotd_wide_area_backlog"] == {(): 0.0}
    assert found["jackpotd_wide_area_published"][()] >= 4
    assert found["jackpotd_wide_area_refused"] == {
        (("reason", reason),): 0.0 for reason in link.uplink.refusals
    }
    assert started <= found["jackpotd_wide_area_central_last_heard_timestamp_seconds"][()]
    found = scrape(at_central)
    assert found["jackpotd_site_applied_seq"] == {(("property", SITE),): 4.0}
    assert found["jackpotd_site_acks"][(("property", SITE),)] >= 1
    assert started <= found["jackpotd_site_last_heard_timestamp_seconds"][(("property", SITE),)]
    link.close()


def test_a_link_that_stays_up_is_reconciled_every_report_s_without_closing(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port)
    link.uplink.report_s = 0.3

    async def scenario() -> None:
        async with link.linked():
            await link.until_open(is_open=True)
            assert all(link.wager(n) for n in (1, 2, 3))
            await within(
                link.central_intake.wait_until(
                    lambda: link.central.state.sites[SITE].link.reconciled_through == 3
                ),
                "a reconciliation through 3 on the same connection",
            )

    asyncio.run(scenario())
    statuses = [r for r in link.site.rows() if r["kind"] == "wide-area-status"]
    assert len(statuses) == 2  # closed at start, then open: the reports never closed it
    assert link.uplink.reconnects == 0
    link.close()
