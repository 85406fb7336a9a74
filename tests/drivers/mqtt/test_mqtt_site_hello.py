"""Central answers a property's connection under its hello's nonce, and a restart loses nothing.

drivers/mqtt/site_answers.py and drivers/mqtt/site_uplink.py; docs/wide-area.md, "A replayed
acknowledgement". Central acknowledges a linked property only once it has heard its signed
hello, and names that hello's nonce with a counter that grows in every acknowledgement; a
forged hello is refused as a forged message is. Central keeps the nonces in memory, so a
central that restarts answers nobody until hello: the property says hello again once central
is silent a third of its grace, and its wide-area wagers stay open across the restart
(Michigan R 432.1841: they close only after the grace without communication).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import msgspec
from support.drivers.mqtt_tables import TOPICS, running, within
from support.journal.journal_rig import AT
from support.polls import until
from support.widearea.site_link_rig import SITE, Link

from controller.security.controller_key import ControllerKey, signature_verifies
from controller.widearea.messages import ACK_FRESH, SiteHello, canonical, signed_bytes
from drivers.mqtt.site_answers import FORGED, UNKNOWN_SITE, SiteAnswers, SiteRefusal

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

NONCE = "c" * 32


def hello(key: ControllerKey, nonce: str = NONCE, site: str = SITE) -> bytes:
    said = SiteHello(site, nonce)
    return canonical(msgspec.structs.replace(said, signature=key.sign(signed_bytes(said))))


def test_central_acknowledges_a_property_only_after_its_hello_and_under_its_nonce(
    tmp_path: Path,
) -> None:
    link = Link(tmp_path, 1)
    answers = SiteAnswers(TOPICS, link.links)
    assert answers.ack_of(SITE, 0) is None  # no hello heard: nothing the property would take
    assert answers.take(SITE, hello(link.site_key), AT) is None  # not journaled
    first, second = answers.ack_of(SITE, 0), answers.ack_of(SITE, 0)
    assert first is not None
    assert second is not None
    assert (first.nonce, first.version) == (NONCE, ACK_FRESH)
    assert second.counter > first.counter > 0
    for ack in (first, second):
        assert signature_verifies(link.central_key.public_key, ack.signature, signed_bytes(ack))
    # A new connection's hello: its nonce from now on, the counter still growing.
    assert answers.take(SITE, hello(link.site_key, "d" * 32), AT) is None
    third = answers.ack_of(SITE, 0)
    assert third is not None
    assert (third.nonce, third.counter > second.counter) == ("d" * 32, True)
    assert list(link.central.rows())[-1]["kind"] == "site-linked"  # no hello journaled
    link.close()


def test_a_hello_not_signed_by_the_property_or_of_no_linked_property_is_refused(
    tmp_path: Path,
) -> None:
    link = Link(tmp_path, 1)
    answers = SiteAnswers(TOPICS, link.links)
    forged = answers.take(SITE, hello(ControllerKey.generate(), "e" * 32), AT)
    assert isinstance(forged, SiteRefusal)
    assert forged.reason == FORGED
    assert answers.ack_of(SITE, 0) is None  # the forger chose no nonce for the property
    stranger = answers.take("stranger", hello(link.site_key, site="stranger"), AT)
    assert isinstance(stranger, SiteRefusal)
    assert stranger.reason == UNKNOWN_SITE
    link.close()


def test_michigan_432_1841_a_central_restarted_within_the_grace_keeps_the_wagers_open(
    mosquitto: Broker, tmp_path: Path
) -> None:
    link = Link(tmp_path, mosquitto.port, grace_s=3.0)
    uplink = link.uplink

    async def scenario() -> None:
        async with running(uplink.run(link.site_intake)):
            async with running(link.central_source().run(link.central_intake)):
                await link.until_open(is_open=True)
                first = uplink.freshness.nonce
            # A new central process: it holds no nonce, and answers nobody until hello.
            async with running(link.central_source().run(link.central_intake)):
                await within(
                    until(lambda: uplink.freshness.nonce != first and uplink.freshness.bound),
                    "the property's hello again, answered",
                )
                assert link.wager(1)  # still open
                await link.until_central_has(1)

    asyncio.run(scenario())
    statuses = [r for r in link.site.rows() if r["kind"] == "wide-area-status"]
    assert len(statuses) == 2  # closed at start, then open: the restart never closed it
    assert not [
        reason for reason, n in uplink.refused.items() if n and reason != "other-connection"
    ]
    link.close()
