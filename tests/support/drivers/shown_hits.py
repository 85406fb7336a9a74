"""Hits as the controller announces them, and a sign station's follower keeping what it shows.

Shared by the tests of the signed hit topic (tests/drivers/mqtt/test_mqtt_follower_hits_*.py):
:func:`hit` is a controller's :class:`controller.outputs.HitAnnouncement`, :class:`ShownFollower`
the rig's follower keeping every update it hands to the sign, :func:`intruder_publishes` a
device with valid broker credentials publishing on a hit topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiomqtt

from controller.backoff import Backoff
from controller.clock import utc_now
from controller.outputs import HitAnnouncement
from support.drivers.mqtt_tables import settings_for
from support.drivers.sign_station import KEYS, POOL, WatchedFollower

if TYPE_CHECKING:
    from controller.outputs import AnyUpdate

GENUINE = "JACKPOT T1 SEAT 3 $250.00"


def hit(payout: str, cents: int, *, pool: str = POOL, at: str | None = None) -> HitAnnouncement:
    return HitAnnouncement(at or utc_now(), 7, payout, pool, "T1", 3, "royal", cents,
                           pending=False, tax_report=False, epoch=1)  # fmt: skip


class ShownFollower(WatchedFollower):
    """The rig's follower, keeping every update it hands to the sign."""

    shown: list[AnyUpdate]

    def take(self, topic: str, payload: bytes) -> AnyUpdate | None:
        """Take the message; keep what it applies."""
        taken = super().take(topic, payload)
        if taken is not None:
            self.shown.append(taken)
        return taken


def station(port: int) -> ShownFollower:
    follower = ShownFollower(
        settings_for(port), client_id="sign-pit-2", pools=[POOL], backoff=Backoff(0.02, 0.2),
        timeout_s=2.0, keys=KEYS,
    )  # fmt: skip
    follower.shown = []
    return follower


def hits_shown(follower: ShownFollower) -> list[HitAnnouncement]:
    return [update for update in follower.shown if isinstance(update, HitAnnouncement)]


async def intruder_publishes(port: int, topic: str, *payloads: bytes) -> None:
    """A device with valid broker credentials publishing on a hit topic (QoS 0: no PUBACK)."""
    async with aiomqtt.Client("127.0.0.1", port, identifier="intruder") as intruder:
        for payload in payloads:
            await intruder.publish(topic, payload, qos=0)
