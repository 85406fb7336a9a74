"""A sign station: LED meter signs fed over MQTT by a follower of the controller.

``jackpotd sign`` runs this on the small computer behind a bank of signs, away from the
controller (docs/signs.md, "Sign stations"). One :class:`~drivers.mqtt.follower.MeterFollower`
holds the station's one broker connection (the shipped ACL gives each sign user one session)
and applies meters only in increasing ``(epoch, seq)``; each sign gets every update it applies,
in order, through a queue of its own, so that a sign whose line is down (its driver reopening
the port) does not hold up the others. The follower moves between brokers (``[broker] hosts``,
or one HAProxy address that routes to the leader's broker) and each sign reopens its own line,
both with the capped backoff of every driver.

The follower believes only meters and pool statuses the controller signed, under one of the
station's ``[sign] controller_keys`` (:class:`~controller.meter_signature.MeterKeys`): one that
anyone else published on a meter topic never reaches a sign, nor raises the order the genuine
meters are held to (docs/signs.md, "Signed meters").
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from controller.meter_signature import MeterKeys
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.settings import BrokerSettings
from drivers.signs.serial_sign import AlphaSign, AlphaSignSettings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from controller.outputs import AnyUpdate

log = logging.getLogger(__name__)


class SignStation:
    """A follower and the signs it feeds (see the module docstring)."""

    def __init__(
        self,
        broker: BrokerSettings,
        signs: Sequence[AlphaSignSettings],
        *,
        keys: MeterKeys,
        pools: Sequence[str] = (),
        hits_seen: Path | None = None,
    ) -> None:
        self.follower = MeterFollower(
            broker, client_id=broker.client_id, pools=pools, keys=keys, hits_seen=hits_seen
        )
        self.signs = [AlphaSign(settings) for settings in signs]
        self._queues: list[asyncio.Queue[AnyUpdate]] = [asyncio.Queue() for _ in self.signs]

    async def run(self) -> None:
        """Follow and show until cancelled."""
        updates = self.follower.updates()  # first: nothing applied is missed
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.follower.run())
            tasks.create_task(self._fan_out(updates))
            for sign, queue in zip(self.signs, self._queues, strict=True):
                tasks.create_task(sign.run(_drain(queue)))

    async def _fan_out(self, updates: AsyncIterator[AnyUpdate]) -> None:
        async for update in updates:
            for queue in self._queues:
                queue.put_nowait(update)


async def _drain(queue: asyncio.Queue[AnyUpdate]) -> AsyncIterator[AnyUpdate]:
    while True:
        yield await queue.get()


async def run_sign_station(
    broker: object,
    signs: Sequence[object],
    pools: Sequence[str],
    controller_keys: Sequence[str],
    hits_seen: Path | None = None,
) -> None:
    """Run a sign station until cancelled: what ``jackpotd sign`` calls.

    The settings come from the drivers' specs, held untyped by the core's configuration;
    ``controller_keys`` are the controller public keys the meters must be signed with, and
    ``hits_seen`` the file the hits shown are kept in across restarts (``[sign] hits_seen``).
    """
    typed = [sign for sign in signs if isinstance(sign, AlphaSignSettings)]
    if not isinstance(broker, BrokerSettings) or len(typed) != len(signs):
        raise TypeError("a sign station runs on the MQTT and Alpha sign drivers' settings")
    station = SignStation(
        broker, typed, keys=MeterKeys(controller_keys), pools=pools, hits_seen=hits_seen
    )
    if hits_seen is None:
        log.warning(
            "sign station %s keeps the hits it shows in memory only ([sign] hits_seen): "
            "a genuine hit replayed soon after a restart would be shown again",
            broker.client_id,
        )
    log.info(
        "sign station %s: %d sign(s), pools %s, brokers %s, meters signed by key %s",
        broker.client_id,
        len(station.signs),
        ", ".join(pools),
        ", ".join(f"{host}:{port}" for host, port in broker.addresses()),
        " or ".join(sorted(station.follower.keys.keys if station.follower.keys else ())),
    )
    await station.run()
