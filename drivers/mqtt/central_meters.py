"""Central's meters on a property's own signs and displays: newer only, and how late they came.

The property's uplink (:mod:`drivers.mqtt.site_uplink`) subscribes to central's
``meter/<pool>`` of each wide-area pool the property plays (docs/wide-area.md, "The link's
runtime"). Each is handed to the property's broadcast, so that its broker, signs and displays
show it as they show a local meter, only if it is newer than the last shown, by central's
``(epoch, seq)`` (a former leader of central's cluster, or the broker's retained copy, never
takes a sign back); how long after central's commit each arrived is kept, the worst of them.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from controller.errors import InputError
from controller.outputs import FollowerOrder, MeterUpdate
from drivers.mqtt.outgoing import decode_meter

if TYPE_CHECKING:
    from controller.ports import SiteChainView


class CentralMeters:
    """The wide-area pools' meters as central publishes them (see the module docstring)."""

    def __init__(self, view: SiteChainView) -> None:
        self.view = view
        self._order = FollowerOrder()
        self.worst_lag_s = 0.0
        """The longest central's meter took to reach this property, from its commit (seconds)."""

    def take(self, payload: bytes) -> None:
        """Show one meter of central's, if it is of a pool this property plays and newer."""
        meter = decode_meter(payload)
        if meter.pool not in self.view.pools():
            raise InputError(f"a meter of pool {meter.pool!r}, not one this property plays")
        if not self._order.admits(f"meter/{meter.pool}", meter.epoch, meter.seq):
            return
        update = MeterUpdate(
            meter.at, meter.seq, meter.pool, meter.meter_cents, meter.reserve_cents,
            meter.overflow_cents, meter.seed_cents, epoch=meter.epoch,
        )  # fmt: skip
        self.view.show(update)
        with contextlib.suppress(ValueError):
            lag = (datetime.now(UTC) - datetime.fromisoformat(meter.at)).total_seconds()
            self.worst_lag_s = max(self.worst_lag_s, lag)
