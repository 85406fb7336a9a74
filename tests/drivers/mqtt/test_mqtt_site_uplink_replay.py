"""A captured acknowledgement of central's, published again, keeps nothing open and reopens nothing.

drivers/mqtt/site_uplink.py with central's answers (drivers/mqtt/site_answers.py);
docs/wide-area.md, "A replayed acknowledgement". Central's signature says who made an
acknowledgement, not when: an attacker with access to the broker captures genuine ones and,
once central is unreachable, publishes them again and again on the property's ack topic. Each
acknowledgement names the property's connection (its hello's nonce) and a counter of central's
that only grows, so the property takes none of them: its wide-area wagers close at their
grace as if nothing were heard (Michigan R 432.1841: play suspended after a set time without
communication), stay closed across a reconnection (a new nonce), and reopen only once central
is back and has reconciled the property's totals again (amounts reconciled on restore).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import aiomqtt
from support.drivers.mqtt_tables import TOPICS, running, watch, within
from support.ha.tcp_proxy import LinkProxy
from support.polls import until
from support.widearea.site_link_rig import SITE, Link

from controller.widearea.freshness import FRESHNESS_REFUSALS, OTHER_CONNECTION
from controller.widearea.messages import decode_ack

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from drivers.mqtt.site_uplink import SiteUplink

GRACE_S = 1.0
ACK = TOPICS.site_ack(SITE)
REPLAY_EVERY_S = 0.05
"""The attacker's pace: twenty replays a second, four times central's heartbeat (0.2 s)."""


def stale(uplink: SiteUplink) -> int:
    """Acknowledgements the property refused as not fresh."""
    return sum(uplink.refused.get(reason, 0) for reason in FRESHNESS_REFUSALS)


async def replay(attacker: aiomqtt.Client, captured: list[bytes]) -> None:
    """Publish the captured acknowledgements on the property's ack topic, again and again.

    At QoS 0: nothing waits on the broker's PUBACK, where Python 3.11's ``asyncio.wait_for``
    (under aiomqtt's publish) can swallow the cancellation that ends the replay, which left the
    test waiting for it to stop now and then.
    """
    while True:
        for payload in captured:
            await attacker.publish(ACK, payload, qos=0)
            await asyncio.sleep(REPLAY_EVERY_S)


def test_michigan_432_1841_replayed_acks_neither_hold_wagers_open_nor_reopen_them(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port, grace_s=GRACE_S)
    central, site = link.central, link.site
    central_intake, site_intake = link.central_intake, link.site_intake
    timings: dict[str, float] = {}

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        with LinkProxy("127.0.0.1", mosquitto.port) as wan:
            uplink = link.uplink_via(wan.port)
            async with (
                watch(mosquitto.port, ACK) as seen,
                running(uplink.run(site_intake)),
                aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="attacker") as attacker,
            ):
                async with running(link.central_source().run(central_intake)):
                    await link.until_open(is_open=True)
                    first = uplink.freshness.nonce

                    def of_first() -> list[bytes]:
                        found = [bytes(p) for p in seen.payloads(ACK)]
                        return [p for p in found if decode_ack(p).nonce == first]

                    await seen.until(lambda _w: len(of_first()) >= 2, "genuine acks captured")
                # Central is unreachable: only the attacker speaks on the ack topic now.
                captured = of_first()
                timings["stopped"] = loop.time()
                async with running(replay(attacker, captured)):
                    await link.until_open(is_open=False)
                    timings["closed"] = loop.time()
                    refused = stale(uplink)
                    await within(until(lambda: stale(uplink) >= refused + 20), "more replays")
                    assert site.state.chain is not None
                    assert not site.state.chain.open  # twenty replays later, still closed
                    # A reconnection: a new nonce, under which no captured ack was signed.
                    reconnects = uplink.reconnects
                    wan.cut("reset")
                    await within(until(lambda: not uplink.connected), "the uplink cut")
                    wan.heal()
                    await within(
                        until(lambda: uplink.connected and uplink.reconnects > reconnects),
                        "the uplink reconnected",
                    )
                    assert uplink.freshness.nonce != first
                    other = uplink.refused.get(OTHER_CONNECTION, 0)
                    await within(
                        until(lambda: uplink.refused.get(OTHER_CONNECTION, 0) >= other + 20),
                        "replays refused on the new connection",
                    )
                    assert not site.state.chain.open
                    # Central is back: it hears the new connection's hello and totals and
                    # answers under its nonce; that, and only that, reopens.
                    async with running(link.central_source().run(central_intake)):
                        await link.until_open(is_open=True)
                    assert uplink.freshness.nonce != first

    asyncio.run(scenario())
    # The gate closed at its grace (counted from central's last genuine ack, before the stop).
    assert timings["closed"] - timings["stopped"] <= GRACE_S + 1.0
    statuses = [r for r in site.rows() if r["kind"] == "wide-area-status"]
    # Closed at start, opened, closed at the grace, opened once central came back: no more.
    assert len(statuses) == 4
    # Every captured ack named a reconciliation through the chain's head (0, nothing wagered):
    # taken, any of them would have reopened the gate after the reconnection.
    assert central.state.sites[SITE].link.reconciled_through == 0
    link.close()


def test_the_same_ack_again_on_a_live_link_extends_no_grace(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port, grace_s=GRACE_S)

    async def scenario() -> None:
        async with (
            watch(mosquitto.port, ACK) as seen,
            running(link.central_source().run(link.central_intake)),
            running(link.uplink.run(link.site_intake)),
            aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="attacker") as attacker,
        ):
            await link.until_open(is_open=True)
            nonce = link.uplink.freshness.nonce
            await seen.until(
                lambda w: any(decode_ack(bytes(p)).nonce == nonce for p in w.payloads(ACK)),
                "a genuine ack of this connection",
            )
            captured = next(
                bytes(p) for p in seen.payloads(ACK) if decode_ack(bytes(p)).nonce == nonce
            )
            await attacker.publish(ACK, captured, qos=1)
            await within(until(lambda: bool(link.uplink.refused.get("replayed"))), "refused")
            assert link.site.state.chain is not None
            assert link.site.state.chain.open  # central's own acknowledgements go on

    asyncio.run(scenario())
    link.close()
