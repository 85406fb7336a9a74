"""A sign celebrates only the controller's own hits, on their pool, when they happen.

Whoever holds a broker account may publish on ``meter/<pool>/hit``: without a signature a
hostile device could make every sign of the floor show JACKPOT for a hit that never happened.
The controller signs each hit it announces (controller/meter_signature.py, the hit domain; the
controller, pool, payout, ``(epoch, seq)`` and ``at`` all signed), and the follower
(drivers/mqtt/hits.py) refuses one unsigned, signed by another key, altered, published on
another pool's topic, or dated longer ago than it celebrates (a genuine hit captured and
published again later): each counted and logged, none reaching the sign. On a real mosquitto,
the real sink as the controller, the real Alpha sign driver on an emulated sign's pty.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec
from support.drivers.mqtt_tables import TOPICS, settings_for, watch
from support.drivers.shown_hits import GENUINE, hit, hits_shown, intruder_publishes, station
from support.drivers.sign_station import (
    KEYS,
    POOL,
    SIGNER,
    controller_node,
    meter,
    mqtt_sign,
    settled,
    until,
)

from controller.clock import utc_iso
from controller.meter_signature import HIT_MAX_AGE_S, Signer
from controller.outputs import HitAnnouncement
from controller.security.controller_key import ControllerKey
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.outgoing import decode_hit, hit_payload

if TYPE_CHECKING:
    import pytest
    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal

INTRUDER = ControllerKey.generate()
INTRUDER_SIGNER = Signer(INTRUDER.key_id, INTRUDER.sign)


def forged_hits() -> list[bytes]:
    """Fake jackpots: unsigned, another key's, a genuine one altered, another pool's."""
    fake = hit("t9/r-1/1/progressive", 999_999_00)
    genuine = json.loads(hit_payload(hit("t1/r-0/3/progressive", 1_00), SIGNER, "node-1"))
    other_pool = hit_payload(hit("t2/r-5/1/progressive", 5_00, pool="side"), SIGNER, "node-1")
    return [
        hit_payload(fake),
        hit_payload(fake, INTRUDER_SIGNER, "node-1"),
        json.dumps({**genuine, "amount_cents": 999_999_00}).encode(),
        json.dumps({**genuine, "pool": "side"}).encode(),
        other_pool,
    ]


def test_signed_hits_a_forged_hit_never_reaches_the_sign_and_the_genuine_one_shows(
    mosquitto: Broker, journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    follower = station(mosquitto.port)
    texts: list[str] = []

    async def scenario() -> None:
        async with (
            mqtt_sign(follower) as face,
            controller_node(mosquitto.port, "node-1", journal) as leader,
        ):
            leader.put_nowait(meter(10_00, 6, epoch=1))
            await settled(face, "$10.00")
            await intruder_publishes(mosquitto.port, TOPICS.hit(POOL), *forged_hits())
            await until(lambda: follower.hits_refused == 5, "the five forged hits refused")
            texts.append(face.text)
            leader.put_nowait(hit("t1/r-1/3/progressive", 250_00))
            await settled(face, GENUINE)

    with caplog.at_level(logging.WARNING, logger="drivers.mqtt.hits"):
        asyncio.run(scenario())
    assert texts == ["$10.00"], "no forged hit was shown"
    assert [shown.payout_id for shown in hits_shown(follower)] == ["t1/r-1/3/progressive"]
    assert (follower.hits_refused, follower.hits.stale) == (5, 0)
    assert (follower.rejected, follower.unverified) == (0, 0), "the meters' counters are theirs"
    lines = [r.message for r in caplog.records if "refused, never shown" in r.message]
    assert len(lines) == 1, "logged once a minute, the rest counted"
    assert "unsigned: not the controller's" in lines[0]


def test_signed_hits_a_genuine_hit_replayed_later_is_refused_as_stale(
    mosquitto: Broker, journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    # A hit the controller announced an hour ago, captured off the broker then: its signature
    # still holds, but it is an hour old. And a fresh one published again: shown once.
    old_at = utc_iso(datetime.now(UTC) - timedelta(seconds=HIT_MAX_AGE_S + 3600))
    follower = station(mosquitto.port)
    captured: list[bytes] = []

    async def scenario() -> None:
        topic = TOPICS.hit(POOL)
        async with watch(mosquitto.port, topic) as probe:
            async with controller_node(mosquitto.port, "node-1", journal) as leader:
                leader.put_nowait(hit("t1/r-0/3/progressive", 900_00, at=old_at))
                await probe.until(lambda w: bool(w.payloads(topic)), "the hit captured")
            captured.append(probe.payloads(topic)[0])
        async with (
            mqtt_sign(follower) as face,
            controller_node(mosquitto.port, "node-1", journal) as leader,
        ):
            leader.put_nowait(meter(10_00, 9, epoch=1))
            await settled(face, "$10.00")
            await intruder_publishes(mosquitto.port, topic, captured[0])
            await until(lambda: follower.hits_refused == 1, "the replayed hit refused")
            assert face.text == "$10.00"
            fresh = hit("t1/r-1/3/progressive", 250_00)
            leader.put_nowait(fresh)
            await settled(face, GENUINE)
            await intruder_publishes(mosquitto.port, topic, hit_payload(fresh, SIGNER, "node-1"))
            await until(lambda: follower.hits.repeated == 1, "the fresh hit's replay")

    with caplog.at_level(logging.WARNING, logger="drivers.mqtt.hits"):
        asyncio.run(scenario())
    replayed = decode_hit(captured[0])
    assert (replayed.v, replayed.at, replayed.amount_cents) == (2, old_at, 900_00)
    assert [shown.payout_id for shown in hits_shown(follower)] == ["t1/r-1/3/progressive"]
    assert (follower.hits_refused, follower.hits.stale) == (1, 1)
    assert f"is dated {old_at}" in caplog.text
    assert "replayed, or held back too long to celebrate now" in caplog.text


def test_signed_hits_the_signature_binds_the_controller_pool_payout_and_row() -> None:
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL], keys=KEYS)
    genuine = json.loads(hit_payload(hit("t1/r-1/3/progressive", 250_00), SIGNER, "node-1"))
    assert genuine["controller"] == "node-1"
    for field, value in [
        ("controller", "node-2"), ("payout", "t1/r-2/3/progressive"), ("seq", 8), ("epoch", 2),
        ("at", utc_iso(datetime.now(UTC) - timedelta(seconds=1))), ("seat", 4), ("pending", True),
    ]:  # fmt: skip
        altered = json.dumps({**genuine, field: value}).encode()
        assert follower.take(TOPICS.hit(POOL), altered) is None, field
    assert follower.hits_refused == 7
    shown = follower.take(TOPICS.hit(POOL), json.dumps(genuine).encode())
    assert isinstance(shown, HitAnnouncement)
    assert msgspec.structs.astuple(shown)[2:5] == ("t1/r-1/3/progressive", POOL, "T1")
